import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import {
  computeStatusV1,
  groupStatesV1,
  selectors,
  rollingUpdateRecordedV1,
  LABEL_TEMPLATE_REVISION_HASH,
  sameStatus,
  templateRevisionHash,
  type Condition,
  type LeaderFactsV1,
  type LeaderWorkerSet,
  type LeaderWorkerSetStatus,
  type WorkerSetFactsV1,
} from '../../src/model/index.js';
import { sampleLws } from './model-fixtures.js';

// sampleLws: default/demo, generation 3, replicas 2, size 4 (a group is ready with its leader and 3 ready workers).
const lws = sampleLws();
const revision = templateRevisionHash(lws.spec);
const T0 = '2025-01-01T00:00:00Z';
const NOW = '2025-01-02T00:00:00Z';

function leader(group: number, over: Partial<LeaderFactsV1> = {}): LeaderFactsV1 {
  return {
    name: `demo-${group}`,
    uid: `leader-${group}`,
    labels: { [LABEL_TEMPLATE_REVISION_HASH]: revision },
    ready: true,
    ...over,
  };
}

/** The worker StatefulSet of a group, owned by its current leader. */
function workers(group: number, readyReplicas = 3, over: Partial<WorkerSetFactsV1> = {}): WorkerSetFactsV1 {
  return { name: `demo-${group}`, ownerUid: `leader-${group}`, readyReplicas, ...over };
}

const oldRevision = { labels: { [LABEL_TEMPLATE_REVISION_HASH]: 'old' } };

function withLws(over: Partial<LeaderWorkerSet['spec']>, status?: LeaderWorkerSetStatus): LeaderWorkerSet {
  return { ...sampleLws(over), status };
}

function conditionsOf(status: LeaderWorkerSetStatus): Record<string, Condition> {
  return Object.fromEntries((status.conditions ?? []).map((c) => [c.type, c]));
}

describe('model/legacy-reconcile-v1: status of runs before patch upstream-semantics', () => {
  it('selects the leader pods of the LWS for an HPA', () => {
    assert.equal(
      selectors.leadersOf('demo'),
      'leaderworkerset.sigs.k8s.io/name=demo,leaderworkerset.sigs.k8s.io/worker-index=0',
    );
  });

  describe('computeStatusV1: counts', () => {
    // [what, lws, leaders, worker StatefulSets, [replicas, readyReplicas, updatedReplicas]]
    const cases: Array<[string, LeaderWorkerSet, LeaderFactsV1[], WorkerSetFactsV1[], [number, number, number]]> = [
      ['no groups', lws, [], [], [0, 0, 0]],
      ['both groups ready and updated', lws, [leader(0), leader(1)], [workers(0), workers(1)], [2, 2, 2]],
      ['leader 1 not Ready', lws, [leader(0), leader(1, { ready: false })], [workers(0), workers(1)], [2, 1, 2]],
      ['group 1 has 2 of 3 workers ready', lws, [leader(0), leader(1)], [workers(0), workers(1, 2)], [2, 1, 2]],
      [
        'group 1 has more ready workers than needed',
        lws,
        [leader(0), leader(1)],
        [workers(0), workers(1, 5)],
        [2, 2, 2],
      ],
      ['group 1 has no worker StatefulSet', lws, [leader(0), leader(1)], [workers(0)], [2, 1, 2]],
      [
        "group 1's worker StatefulSet is owned by an old leader uid",
        lws,
        [leader(0), leader(1)],
        [workers(0), workers(1, 3, { ownerUid: 'leader-1-old' })],
        [2, 1, 2],
      ],
      [
        "group 1's worker StatefulSet has no owner",
        lws,
        [leader(0), leader(1)],
        [workers(0), workers(1, 3, { ownerUid: undefined })],
        [2, 1, 2],
      ],
      [
        "group 1's worker StatefulSet is being deleted",
        lws,
        [leader(0), leader(1)],
        [workers(0), workers(1, 3, { deletionTimestamp: T0 })],
        [2, 1, 2],
      ],
      [
        "group 1's old worker StatefulSet is being deleted, the new one is ready",
        lws,
        [leader(0), leader(1)],
        [workers(0), workers(1, 3, { deletionTimestamp: T0 }), workers(1, 3)],
        [2, 2, 2],
      ],
      [
        "a ready StatefulSet of leader 1 under group 0's name does not make group 1 ready",
        lws,
        [leader(0), leader(1)],
        [workers(0), workers(1, 3, { name: 'demo-0' })],
        [2, 1, 2],
      ],
      [
        'leader 1 is terminating (Ready and with ready workers)',
        lws,
        [leader(0), leader(1, { deletionTimestamp: T0 })],
        [workers(0), workers(1)],
        [1, 1, 1],
      ],
      [
        'every leader is terminating',
        lws,
        [leader(0, { deletionTimestamp: T0 }), leader(1, { deletionTimestamp: T0 })],
        [workers(0), workers(1)],
        [0, 0, 0],
      ],
      [
        'groups 2 and 3 above replicas are ready',
        lws,
        [leader(0), leader(1), leader(2), leader(3)],
        [workers(0), workers(1), workers(2), workers(3)],
        [2, 2, 2],
      ],
      ['only group 2 (above replicas) exists', lws, [leader(2)], [workers(2)], [0, 0, 0]],
      ['group 1 on an old revision', lws, [leader(0), leader(1, oldRevision)], [workers(0), workers(1)], [2, 2, 1]],
      [
        'group 1 without a revision label',
        lws,
        [leader(0), leader(1, { labels: {} })],
        [workers(0), workers(1)],
        [2, 2, 1],
      ],
      [
        'group 1 updated but not ready',
        lws,
        [leader(0, oldRevision), leader(1, { ready: false })],
        [workers(0), workers(1)],
        [2, 1, 1],
      ],
      [
        'names of other LWSes and worker pods are ignored',
        lws,
        [leader(0), leader(1, { name: 'other-1' }), leader(1, { name: 'demo-0-1', uid: 'w' })],
        [workers(0), workers(1)],
        [1, 1, 1],
      ],
      [
        'size 1: no worker StatefulSet needed',
        withLws({ leaderWorkerTemplate: { ...lws.spec.leaderWorkerTemplate, size: 1 } }),
        [leader(0, { labels: {} }), leader(1, { labels: {} })],
        [],
        [2, 2, 0],
      ],
      [
        'replicas defaulted to 1',
        withLws({ replicas: undefined }),
        [leader(0), leader(1)],
        [workers(0), workers(1)],
        [1, 1, 1],
      ],
      ['replicas 0', withLws({ replicas: 0 }), [leader(0)], [workers(0)], [0, 0, 0]],
    ];
    for (const [what, l, leaders, sets, [replicas, ready, updated]] of cases) {
      it(`${what}: replicas ${replicas}, ready ${ready}, updated ${updated}`, () => {
        const status = computeStatusV1(l, leaders, sets, NOW);
        assert.deepEqual([status.replicas, status.readyReplicas, status.updatedReplicas], [replicas, ready, updated]);
      });
    }

    it('updatedReplicas follows the revision of the current spec', () => {
      const changed = withLws({
        leaderWorkerTemplate: {
          ...lws.spec.leaderWorkerTemplate,
          workerTemplate: { spec: { containers: [{ name: 'worker', image: 'nginx:1.27' }] } },
        },
      });
      const next = { labels: { [LABEL_TEMPLATE_REVISION_HASH]: templateRevisionHash(changed.spec) } };
      const leaders = [leader(0, next), leader(1)];
      assert.equal(computeStatusV1(changed, leaders, [workers(0), workers(1)], NOW).updatedReplicas, 1);
      assert.equal(computeStatusV1(lws, leaders, [workers(0), workers(1)], NOW).updatedReplicas, 1);
    });

    it('carries the selector and generation', () => {
      const status = computeStatusV1(lws, [], [], NOW);
      assert.equal(status.hpaPodSelector, selectors.leadersOf('demo'));
      assert.equal(status.observedGeneration, 3);
      for (const c of status.conditions ?? []) assert.equal(c.observedGeneration, 3, c.type);
    });
  });

  describe('groupStatesV1', () => {
    it('reports every parsable leader, sorted, with terminating ones marked not ready', () => {
      const states = groupStatesV1(
        lws,
        [leader(3), leader(1, { deletionTimestamp: T0 }), leader(0, oldRevision), leader(2, { ready: false })],
        [workers(0), workers(1), workers(2), workers(3, 1)],
      );
      assert.deepEqual(states, [
        { groupIndex: 0, terminating: false, ready: true, updated: false },
        { groupIndex: 1, terminating: true, ready: false, updated: true },
        { groupIndex: 2, terminating: false, ready: false, updated: true },
        { groupIndex: 3, terminating: false, ready: false, updated: true },
      ]);
    });

    it('reads the LWS name from the LWS (an LWS named demo-1 has group 2 in pod demo-1-2)', () => {
      const named = { ...lws, metadata: { ...lws.metadata, name: 'demo-1' } };
      const states = groupStatesV1(named, [leader(0, { name: 'demo-1-2' })], [workers(0, 3, { name: 'demo-1-2' })]);
      assert.deepEqual(states, [{ groupIndex: 2, terminating: false, ready: true, updated: true }]);
    });
  });

  describe('computeStatusV1: conditions', () => {
    // [what, leaders, sets, Available, Progressing, UpdateInProgress] as `status reason message`, and whether the
    // controller steers a rolling update (surge groups kept after the last old group too)
    const cases: Array<[string, LeaderFactsV1[], WorkerSetFactsV1[], string, string, string, boolean?]> = [
      [
        'all groups ready and updated',
        [leader(0), leader(1)],
        [workers(0), workers(1)],
        'True AllGroupsReady 2 of 2 groups ready',
        'False Done all groups ready',
        'False Updated 2 of 2 groups on the current template',
      ],
      [
        'one group not ready',
        [leader(0), leader(1, { ready: false })],
        [workers(0), workers(1)],
        'False GroupsNotReady 1 of 2 groups ready',
        'True GroupsProgressing waiting for 1 groups to become ready',
        'False Updated 2 of 2 groups on the current template',
      ],
      [
        'no groups',
        [],
        [],
        'False GroupsNotReady 0 of 2 groups ready',
        'True GroupsProgressing waiting for 2 groups to become ready',
        'True GroupsUpdating 0 of 2 groups on the current template',
      ],
      [
        'all ready, one on an old revision',
        [leader(0), leader(1, oldRevision)],
        [workers(0), workers(1)],
        'True AllGroupsReady 2 of 2 groups ready',
        'False Done all groups ready',
        'True GroupsUpdating 1 of 2 groups on the current template',
      ],
      [
        'a terminating group does not count as ready or updated',
        [leader(0), leader(1, { deletionTimestamp: T0 })],
        [workers(0), workers(1)],
        'False GroupsNotReady 1 of 2 groups ready',
        'True GroupsProgressing waiting for 1 groups to become ready',
        'True GroupsUpdating 1 of 2 groups on the current template',
      ],
      [
        'extra groups above replicas do not count',
        [leader(0), leader(2), leader(3)],
        [workers(0), workers(2), workers(3)],
        'False GroupsNotReady 1 of 2 groups ready',
        'True GroupsProgressing waiting for 1 groups to become ready',
        'True GroupsUpdating 1 of 2 groups on the current template',
      ],
      [
        'rolling: all in range updated and ready, surge groups still kept',
        [leader(0), leader(1), leader(2)],
        [workers(0), workers(1), workers(2)],
        'True AllGroupsReady 2 of 2 groups ready',
        'False Done all groups ready',
        'True RollingUpdate 2 of 2 groups on the current template, rolling',
        true,
      ],
      [
        'rolling: an old group left',
        [leader(0), leader(1, oldRevision)],
        [workers(0), workers(1)],
        'True AllGroupsReady 2 of 2 groups ready',
        'False Done all groups ready',
        'True RollingUpdate 1 of 2 groups on the current template, rolling',
        true,
      ],
    ];
    for (const [what, leaders, sets, available, progressing, updating, rolling] of cases) {
      it(what, () => {
        const status = computeStatusV1(lws, leaders, sets, NOW, rolling);
        assert.deepEqual(
          status.conditions?.map((c) => c.type),
          ['Available', 'Progressing', 'UpdateInProgress'],
        );
        const text = (c: Condition | undefined) => (c ? `${c.status} ${c.reason} ${c.message}` : 'missing');
        const byType = conditionsOf(status);
        assert.equal(text(byType.Available), available);
        assert.equal(text(byType.Progressing), progressing);
        assert.equal(text(byType.UpdateInProgress), updating);
      });
    }

    const condition = (type: string, status: 'True' | 'False', reason = 'Earlier', time = T0): Condition => ({
      type,
      status,
      reason,
      message: 'earlier',
      lastTransitionTime: time,
      observedGeneration: 2,
    });
    const allReady: [LeaderFactsV1[], WorkerSetFactsV1[]] = [
      [leader(0), leader(1)],
      [workers(0), workers(1)],
    ];
    // Against an all-ready cluster: Available True, Progressing False, UpdateInProgress False.
    // [what, previous conditions, expected lastTransitionTime of Available, Progressing, UpdateInProgress]
    const transitions: Array<[string, Condition[] | undefined, [string, string, string]]> = [
      ['no previous status', undefined, [NOW, NOW, NOW]],
      ['no previous conditions', [], [NOW, NOW, NOW]],
      [
        'nothing flips',
        [condition('Available', 'True'), condition('Progressing', 'False'), condition('UpdateInProgress', 'False')],
        [T0, T0, T0],
      ],
      [
        'every condition flips',
        [condition('Available', 'False'), condition('Progressing', 'True'), condition('UpdateInProgress', 'True')],
        [NOW, NOW, NOW],
      ],
      [
        'only UpdateInProgress flips',
        [condition('Available', 'True'), condition('Progressing', 'False'), condition('UpdateInProgress', 'True')],
        [T0, T0, NOW],
      ],
      [
        'same status, other reason and message: kept',
        [
          condition('Available', 'True', 'SomethingElse'),
          condition('Progressing', 'False', 'Other'),
          condition('UpdateInProgress', 'False', 'X'),
        ],
        [T0, T0, T0],
      ],
      [
        'previous status Unknown counts as a flip',
        [condition('Available', 'True'), { ...condition('Progressing', 'False'), status: 'Unknown' }],
        [T0, NOW, NOW],
      ],
      ['only an unrelated condition', [condition('Ready', 'True')], [NOW, NOW, NOW]],
    ];
    for (const [what, previous, [available, progressing, updating]] of transitions) {
      it(`lastTransitionTime: ${what}`, () => {
        const l = { ...lws, status: previous === undefined ? undefined : { conditions: previous } };
        const byType = conditionsOf(computeStatusV1(l, ...allReady, NOW));
        assert.equal(byType.Available?.lastTransitionTime, available, 'Available');
        assert.equal(byType.Progressing?.lastTransitionTime, progressing, 'Progressing');
        assert.equal(byType.UpdateInProgress?.lastTransitionTime, updating, 'UpdateInProgress');
        // Reason, message and generation always follow the current state, flip or not.
        assert.equal(byType.Available?.reason, 'AllGroupsReady');
        assert.equal(byType.Available?.observedGeneration, 3);
      });
    }

    it('is stable: recomputing from its own result later changes nothing', () => {
      const first = computeStatusV1(lws, [leader(0), leader(1, { ready: false })], [workers(0), workers(1)], T0);
      const again = computeStatusV1(
        { ...lws, status: first },
        [leader(0), leader(1, { ready: false })],
        [workers(0), workers(1)],
        NOW,
      );
      assert.ok(sameStatus(first, again));
      const flipped = computeStatusV1({ ...lws, status: first }, ...allReady, NOW);
      assert.ok(!sameStatus(first, flipped));
      assert.equal(conditionsOf(flipped).Available?.lastTransitionTime, NOW);
    });
  });

  describe('rollingUpdateRecordedV1', () => {
    const withUpdateInProgress = (status: 'True' | 'False', reason: string) => ({
      ...lws,
      status: {
        conditions: [{ type: 'UpdateInProgress', status, reason, message: '', lastTransitionTime: T0 }],
      },
    });
    // [what, lws, recorded]
    const cases: Array<[string, LeaderWorkerSet, boolean]> = [
      ['no status', lws, false],
      ['UpdateInProgress True, RollingUpdate', withUpdateInProgress('True', 'RollingUpdate'), true],
      ['UpdateInProgress True, GroupsUpdating (not steered)', withUpdateInProgress('True', 'GroupsUpdating'), false],
      ['UpdateInProgress False', withUpdateInProgress('False', 'Updated'), false],
      [
        'what computeStatusV1 writes while rolling',
        { ...lws, status: computeStatusV1(lws, [leader(0), leader(1)], [workers(0), workers(1)], T0, true) },
        true,
      ],
      [
        'what computeStatusV1 writes otherwise',
        { ...lws, status: computeStatusV1(lws, [leader(0), leader(1)], [workers(0), workers(1)], T0) },
        false,
      ],
    ];
    for (const [what, l, recorded] of cases) {
      it(`${what}: ${recorded}`, () => assert.equal(rollingUpdateRecordedV1(l), recorded));
    }
  });

  describe('sameStatus', () => {
    const status = computeStatusV1(lws, [leader(0), leader(1)], [workers(0), workers(1)], T0);

    /** The same data with object keys written in reverse order at every level. */
    function reversedKeys<T>(value: T): T {
      if (Array.isArray(value)) return value.map(reversedKeys) as T;
      if (value !== null && typeof value === 'object') {
        const entries = Object.entries(value).reverse();
        return Object.fromEntries(entries.map(([k, v]) => [k, reversedKeys(v)])) as T;
      }
      return value;
    }

    // [what, current, same]
    const cases: Array<[string, LeaderWorkerSetStatus | undefined, boolean]> = [
      ['the same object', status, true],
      ['a deep copy', structuredClone(status), true],
      ['keys in another order', reversedKeys(status), true],
      ['an explicit undefined member', { ...status, extra: undefined } as LeaderWorkerSetStatus, true],
      ['no current status', undefined, false],
      ['an empty current status', {}, false],
      ['another readyReplicas', { ...status, readyReplicas: 1 }, false],
      ['another observedGeneration', { ...status, observedGeneration: 2 }, false],
      [
        'another lastTransitionTime',
        { ...status, conditions: status.conditions?.map((c) => ({ ...c, lastTransitionTime: NOW })) },
        false,
      ],
    ];
    for (const [what, current, same] of cases) {
      it(`${what}: ${same ? 'same' : 'different'}`, () => assert.equal(sameStatus(current, status), same));
    }
  });
});
