import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { groupPhase, groupRows, readyPods, type GroupFacts, type Phase } from '../../src/cli/phase.js';
import { LABEL_TEMPLATE_REVISION_HASH, type PodFacts, type StatefulSetFacts } from '../../src/model/index.js';

/** Being deleted: a deletionTimestamp (when the grace period ends). */
const TERMINATING = { deletionTimestamp: '2025-01-01T00:00:30Z' };

const pod = (name: string, uid: string, over: Partial<PodFacts> = {}): PodFacts => ({
  namespace: 'default',
  name,
  uid,
  labels: { [LABEL_TEMPLATE_REVISION_HASH]: 'rev1' },
  annotations: {},
  ready: true,
  restartCount: 0,
  ...over,
});
const sts = (ownerUid: string | undefined, over: Partial<StatefulSetFacts> = {}): StatefulSetFacts => ({
  namespace: 'default',
  name: 'demo-0',
  uid: 'sts-uid',
  labels: {},
  ...(ownerUid !== undefined && { ownerUid }),
  replicas: 1,
  readyReplicas: 0,
  ...over,
});
const leader = (over: Partial<PodFacts> = {}) => pod('demo-0', 'L1', over);
/** Workers of the StatefulSet `sts-uid`. */
const workers = (n: number, over: Partial<PodFacts> = {}) =>
  Array.from({ length: n }, (_, i) => pod(`demo-0-${i + 1}`, `W${i + 1}`, { ownerUid: 'sts-uid', ...over }));

describe('cli/phase: groupPhase', () => {
  const cases: { name: string; facts: GroupFacts; phase: Phase; ready: number }[] = [
    {
      name: 'leader and all workers ready, workers owned by the leader',
      facts: { size: 4, leader: leader(), workerSet: sts('L1'), workers: workers(3) },
      phase: 'Ready',
      ready: 4,
    },
    {
      name: 'size 1: a ready leader is the whole group',
      facts: { size: 1, leader: leader(), workers: [] },
      phase: 'Ready',
      ready: 1,
    },
    {
      name: 'size 1: a leader not ready yet',
      facts: { size: 1, leader: leader({ ready: false }), workers: [] },
      phase: 'Provisioning',
      ready: 0,
    },
    {
      name: 'a group whose restart budget is spent, kept as it is',
      facts: {
        size: 1,
        leader: leader({ ready: false, annotations: { 'leaderworkerset.sigs.k8s.io/group-failed': 'spent' } }),
        workers: [],
      },
      phase: 'Failed',
      ready: 0,
    },
    {
      name: 'leader without its worker StatefulSet yet',
      facts: { size: 4, leader: leader(), workers: [] },
      phase: 'Provisioning',
      ready: 1,
    },
    {
      name: 'leader whose worker StatefulSet the API server refused (its provisioning says so on it)',
      facts: {
        size: 4,
        leader: leader({ annotations: { 'leaderworkerset.sigs.k8s.io/workers-refused': 'group 0: refused' } }),
        workers: [],
      },
      phase: 'Refused',
      ready: 1,
    },
    {
      name: 'one worker not ready',
      facts: {
        size: 3,
        leader: leader(),
        workerSet: sts('L1'),
        workers: [...workers(1), pod('demo-0-2', 'W2', { ready: false, ownerUid: 'sts-uid' })],
      },
      phase: 'Provisioning',
      ready: 2,
    },
    {
      name: 'workers missing (StatefulSet created, pods not yet)',
      facts: { size: 4, leader: leader(), workerSet: sts('L1'), workers: workers(1) },
      phase: 'Provisioning',
      ready: 2,
    },
    {
      name: 'leader not ready, workers ready',
      facts: { size: 2, leader: leader({ ready: false }), workerSet: sts('L1'), workers: workers(1) },
      phase: 'Provisioning',
      ready: 1,
    },
    {
      name: 'leader terminating (teardown running), workers still ready',
      facts: { size: 3, leader: leader(TERMINATING), workerSet: sts('L1'), workers: workers(2) },
      phase: 'Terminating',
      ready: 2,
    },
    {
      name: 'leader and workers terminating together (Parallel)',
      facts: {
        size: 3,
        leader: leader(TERMINATING),
        workerSet: sts('L1', TERMINATING),
        workers: workers(2, TERMINATING),
      },
      phase: 'Terminating',
      ready: 0,
    },
    {
      name: 'leader gone, old workers still there (Sequential, before the garbage collector)',
      facts: { size: 3, workerSet: sts('L1'), workers: workers(2) },
      phase: 'Rebuilding',
      ready: 2,
    },
    {
      name: 'leader gone, old StatefulSet terminating',
      facts: { size: 3, workerSet: sts('L1', TERMINATING), workers: workers(2, TERMINATING) },
      phase: 'Rebuilding',
      ready: 0,
    },
    {
      name: 'replacement leader waits for the old StatefulSet (owned by the old leader)',
      facts: { size: 3, leader: pod('demo-0', 'L2'), workerSet: sts('L1'), workers: workers(2) },
      phase: 'Rebuilding',
      ready: 1, // the old workers are not the new group's
    },
    {
      name: "replacement leader, the old StatefulSet is being deleted although it names the leader's uid",
      facts: { size: 3, leader: leader(), workerSet: sts('L1', TERMINATING), workers: [] },
      phase: 'Rebuilding',
      ready: 1,
    },
    {
      name: 'worker StatefulSet without a controlling owner',
      facts: { size: 2, leader: leader(), workerSet: sts(undefined), workers: workers(1) },
      phase: 'Rebuilding',
      ready: 1,
    },
    {
      name: "ready workers of another StatefulSet incarnation do not count (the old one's pods, still going)",
      facts: { size: 3, leader: leader(), workerSet: sts('L1'), workers: workers(2, { ownerUid: 'old-sts-uid' }) },
      phase: 'Provisioning',
      ready: 1,
    },
    {
      name: 'nothing at all',
      facts: { size: 4, workers: [] },
      phase: 'Missing',
      ready: 0,
    },
    {
      name: 'stray worker pods only (no leader, no StatefulSet) still count as Missing',
      facts: { size: 2, workers: workers(1, TERMINATING) },
      phase: 'Missing',
      ready: 0,
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.phase}, ${c.ready}/${c.facts.size} ready`, () => {
      assert.equal(groupPhase(c.facts), c.phase);
      assert.equal(readyPods(c.facts), c.ready);
    });
  }
});

describe('cli/phase: groupRows', () => {
  const base = { name: 'demo', replicas: 2, size: 2, revision: 'rev1' };

  it('one row per index below replicas, Missing where nothing exists', () => {
    const rows = groupRows({
      ...base,
      leaders: [pod('demo-0', 'L0')],
      workerSets: [sts('L0', { name: 'demo-0', uid: 'S0' })],
      workers: [pod('demo-0-1', 'W0', { ownerUid: 'S0' })],
    });
    assert.deepEqual(rows, [
      {
        group: 0,
        leaderPod: 'demo-0',
        phase: 'Ready',
        readyPods: 2,
        size: 2,
        workerStatefulSet: 'demo-0',
        revisionUpToDate: true,
      },
      {
        group: 1,
        leaderPod: undefined,
        phase: 'Missing',
        readyPods: 0,
        size: 2,
        workerStatefulSet: undefined,
        revisionUpToDate: undefined,
      },
    ]);
  });

  it('indices above replicas appear while they still have objects (scale-down), sorted numerically', () => {
    const rows = groupRows({
      ...base,
      replicas: 1,
      leaders: [pod('demo-10', 'L10', TERMINATING), pod('demo-0', 'L0'), pod('demo-2', 'L2')],
      workerSets: [sts('L3', { name: 'demo-3', uid: 'S3', ...TERMINATING })],
      workers: [],
    });
    assert.deepEqual(
      rows.map((r) => [r.group, r.phase]),
      [
        [0, 'Provisioning'],
        [2, 'Provisioning'],
        [3, 'Rebuilding'],
        [10, 'Terminating'],
      ],
    );
  });

  it('flags a leader built from an older template', () => {
    const rows = groupRows({
      ...base,
      replicas: 1,
      size: 1,
      leaders: [pod('demo-0', 'L0', { labels: { [LABEL_TEMPLATE_REVISION_HASH]: 'old' } })],
      workerSets: [],
      workers: [],
    });
    assert.equal(rows[0]?.revisionUpToDate, false);
  });

  it('assigns worker pods by name to their group, and ignores names of other shapes', () => {
    const rows = groupRows({
      ...base,
      leaders: [pod('demo-0', 'L0'), pod('demo-1', 'L1'), pod('demo-x', 'LX')],
      workerSets: [
        sts('L0', { name: 'demo-0', uid: 'S0' }),
        sts('L1', { name: 'demo-1', uid: 'S1' }),
        sts(undefined, { name: 'demo', uid: 'LEADER-STS' }),
      ],
      workers: [
        pod('demo-0-1', 'W01', { ownerUid: 'S0' }),
        pod('demo-1-1', 'W11', { ready: false, ownerUid: 'S1' }),
        pod('demo-1-0', 'BAD', { ownerUid: 'S1' }),
      ],
    });
    assert.deepEqual(
      rows.map((r) => [r.group, r.phase, r.readyPods]),
      [
        [0, 'Ready', 2],
        [1, 'Provisioning', 1],
      ],
    );
  });

  it('prefers the live leader when a stale read shows a terminating one of the same name', () => {
    const rows = groupRows({
      ...base,
      replicas: 1,
      size: 1,
      leaders: [pod('demo-0', 'OLD', TERMINATING), pod('demo-0', 'NEW')],
      workerSets: [],
      workers: [],
    });
    assert.equal(rows[0]?.phase, 'Ready');
  });
});
