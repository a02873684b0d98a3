import assert from 'node:assert/strict';
import {
  checkTrial,
  unsettled,
  type LiveState,
  type PodHistory,
  type TrialShape,
} from '../../tools/chaos/invariants.js';

/** An LWS `t` of 2 groups of 2 before the lifecycle: leaders L0, L1, workers W0, W1. */
function shape(over: Partial<TrialShape> = {}): TrialShape {
  return {
    lifecycle: 'rebuild',
    policy: 'Parallel',
    lwsName: 't',
    replicas: 2,
    size: 2,
    groupIndex: 0,
    newImage: 'img:2',
    leadersBefore: new Map([
      [0, 'L0'],
      [1, 'L1'],
    ]),
    podsBefore: new Set(['L0', 'W0', 'L1', 'W1']),
    ...over,
  };
}

const pod = (uid: string, groupIndex: number, leader: boolean, image = 'img:1') => ({
  name: leader ? `t-${groupIndex}` : `t-${groupIndex}-1`,
  uid,
  groupIndex,
  leader,
  ready: true,
  terminating: false,
  image,
});

function live(pods: LiveState['pods'], leaders: Record<number, string>): LiveState {
  return {
    lwsExists: true,
    pods,
    statefulSets: [
      { name: 't' },
      ...Object.entries(leaders).map(([g, uid]) => ({ name: `t-${g}`, groupIndex: Number(g), ownerUid: uid })),
    ],
  };
}

describe('chaos invariants: unsettled (the end state a lifecycle asks for)', () => {
  const rebuilt = [pod('N0', 0, true), pod('M0', 0, false), pod('L1', 1, true), pod('W1', 1, false)];
  const cases: { name: string; shape: TrialShape; live: LiveState; want: RegExp[] }[] = [
    {
      name: 'a rebuilt group, the other untouched',
      shape: shape(),
      live: live(rebuilt, { 0: 'N0', 1: 'L1' }),
      want: [],
    },
    {
      name: 'the broken group not replaced yet',
      shape: shape(),
      live: live([pod('L0', 0, true), pod('W0', 0, false), pod('L1', 1, true), pod('W1', 1, false)], {
        0: 'L0',
        1: 'L1',
      }),
      want: [/group 0 not replaced yet/],
    },
    {
      name: 'another group replaced too',
      shape: shape(),
      live: live([pod('N0', 0, true), pod('M0', 0, false), pod('N1', 1, true), pod('M1', 1, false)], {
        0: 'N0',
        1: 'N1',
      }),
      want: [/group 1 was replaced/],
    },
    {
      name: 'a worker StatefulSet still owned by the old leader',
      shape: shape(),
      live: live(rebuilt, { 0: 'L0', 1: 'L1' }),
      want: [/t-0 not owned by its group's current leader/],
    },
    {
      name: 'a scale-down whose removed group left a StatefulSet',
      shape: shape({ lifecycle: 'scale-down' }),
      live: live([pod('L0', 0, true), pod('W0', 0, false)], { 0: 'L0', 1: 'L1' }),
      want: [/StatefulSet t-1 left over/],
    },
    {
      name: 'an LWS deletion with the LWS and a pod left',
      shape: shape({ lifecycle: 'lws-deletion' }),
      live: { lwsExists: true, pods: [pod('W1', 1, false)], statefulSets: [] },
      want: [/the LWS still exists/, /want 0 Ready/, /pods of removed groups: t-1-1/],
    },
    {
      name: 'a rolling update with a pod on the old image',
      shape: shape({ lifecycle: 'rolling-update' }),
      live: live(
        [pod('N0', 0, true, 'img:2'), pod('M0', 0, false, 'img:2'), pod('N1', 1, true, 'img:2'), pod('M1', 1, false)],
        { 0: 'N0', 1: 'N1' },
      ),
      want: [/on the old template: t-1-1/],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = unsettled(c.shape, c.live);
      assert.equal(got.length, c.want.length, got.join('; '));
      c.want.forEach((re, i) => assert.match(got[i]!, re));
    });
  }
});

describe('chaos invariants: checkTrial (teardown order and rebuild counts)', () => {
  const h = (uid: string, groupIndex: number, leader: boolean, t?: number, gone?: number): PodHistory => ({
    name: leader ? `t-${groupIndex}` : `t-${groupIndex}-1`,
    uid,
    groupIndex,
    leader,
    seenAt: 0,
    ...(t === undefined ? {} : { terminatingAt: t }),
    ...(gone === undefined ? {} : { goneAt: gone }),
  });
  const untouched = [h('L1', 1, true), h('W1', 1, false)];
  const fresh = [h('N0', 0, true), h('M0', 0, false)];
  const noFault = { at: 0, recoveredAt: 0 };
  const cases: {
    name: string;
    shape: TrialShape;
    pods: PodHistory[];
    fault?: { at: number; recoveredAt: number };
    want: RegExp[];
    lag?: number;
  }[] = [
    {
      name: 'Parallel: workers with their leader',
      shape: shape(),
      pods: [h('L0', 0, true, 1000, 6000), h('W0', 0, false, 1200, 6100), ...fresh, ...untouched],
      want: [],
      lag: 200,
    },
    {
      name: 'Parallel turned Sequential: workers after the bound',
      shape: shape(),
      pods: [h('L0', 0, true, 1000, 6000), h('W0', 0, false, 6000, 11000), ...fresh, ...untouched],
      fault: { at: 1100, recoveredAt: 1500 },
      want: [/t-0-1: terminating 4500 ms after the bound's start, over 3000/],
      lag: 5000,
    },
    {
      name: 'Parallel: the bound starts when the killed worker serves again, if it struck first',
      shape: shape(),
      pods: [h('L0', 0, true, 1000, 9000), h('W0', 0, false, 6000, 11000), ...fresh, ...untouched],
      fault: { at: 1100, recoveredAt: 4000 },
      want: [],
      lag: 5000,
    },
    {
      name: 'Sequential: a worker terminating before its leader was gone',
      shape: shape({ policy: 'Sequential' }),
      pods: [h('L0', 0, true, 1000, 6000), h('W0', 0, false, 1200, 6100), ...fresh, ...untouched],
      want: [/t-0-1: terminating 4800 ms before its leader was gone/],
    },
    {
      name: 'a group rebuilt twice',
      shape: shape(),
      pods: [
        h('L0', 0, true, 1000, 6000),
        h('W0', 0, false, 1200, 6100),
        ...fresh,
        h('X0', 0, true),
        h('Y0', 0, false),
        ...untouched,
      ],
      want: [/group 0: 3 leaders and 3 workers seen, want 2 and 2/],
      lag: 200,
    },
    {
      name: 'an LWS deletion: no group comes back',
      shape: shape({ lifecycle: 'lws-deletion', policy: 'Sequential' }),
      pods: [
        h('L0', 0, true, 1000, 6000),
        h('W0', 0, false, 6100, 11000),
        h('L1', 1, true, 1000, 6000),
        h('W1', 1, false, 6050, 11000),
      ],
      want: [],
    },
    {
      name: 'an LWS deletion: workers made again from the deleted StatefulSet are named as such',
      shape: shape({ lifecycle: 'lws-deletion', policy: 'Sequential' }),
      pods: [
        h('L0', 0, true, 1000, 6000),
        { ...h('W0', 0, false, 6100, 11000), ownerUid: 'sts-old-0', createdBy: 'kube-controller-manager' },
        {
          ...h('Z0', 0, false, 11500, 12000),
          seenAt: 11400,
          ownerUid: 'sts-old-0',
          createdBy: 'kube-controller-manager',
        },
        h('L1', 1, true, 1000, 6000),
        h('W1', 1, false, 6050, 11000),
      ],
      want: [
        /group 0: 1 leaders and 2 workers seen, want 1 and 1 \(2 of StatefulSet sts-old- \(the old one\), 1 made by kube-controller-manager, new ones first seen 400 ms after the old were gone\)/,
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const verdict = checkTrial(c.shape, c.pods, c.fault ?? noFault, 3000);
      assert.equal(verdict.violations.length, c.want.length, verdict.violations.join('; '));
      c.want.forEach((re, i) => assert.match(verdict.violations[i]!, re));
      assert.equal(verdict.parallelLagMs, c.lag);
    });
  }
});
