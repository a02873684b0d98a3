// judgeTeardown: what a teardown decides from its first reads (docs/architecture.md), one row per situation.
import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import {
  ANNOTATION_POD_TERMINATION_POLICY,
  ANNOTATION_RECREATE_REASON,
  LABEL_TEMPLATE_REVISION_HASH,
  judgeTeardown,
  lwsFacts,
  type LeaderWorkerSet,
  type Lifecycle,
  type PodFacts,
  type PodTerminationPolicy,
  type StatefulSetFacts,
  type TeardownReads,
} from '../../src/model/index.js';

const T0 = '2026-01-01T00:00:00Z';
const LATER = '2026-01-01T01:00:00Z';

function lws(
  opts: {
    policy?: PodTerminationPolicy;
    replicas?: number;
    createdAt?: string;
    deleting?: boolean;
    notReadySeconds?: number;
  } = {},
) {
  const l: LeaderWorkerSet = {
    metadata: {
      name: 'demo',
      namespace: 'default',
      uid: 'lws-uid',
      creationTimestamp: opts.createdAt ?? T0,
      ...(opts.deleting && { deletionTimestamp: LATER }),
    },
    spec: {
      replicas: opts.replicas ?? 2,
      leaderWorkerTemplate: { size: 3, workerTemplate: { spec: { containers: [{ name: 'w', image: 'x' }] } } },
      ...(opts.policy && { podTerminationPolicy: opts.policy }),
      ...(opts.notReadySeconds !== undefined && { forceDeleteOnNodeNotReadySeconds: opts.notReadySeconds }),
    },
  };
  // As the teardown reads it (model/lws-facts.ts).
  return lwsFacts(l);
}

const current = lws().revision;

function leader(
  uid: string,
  opts: { terminating?: boolean; annotation?: PodTerminationPolicy; revision?: string; createdAt?: string } = {},
): PodFacts {
  return {
    namespace: 'default',
    name: 'demo-1',
    uid,
    labels: { [LABEL_TEMPLATE_REVISION_HASH]: opts.revision ?? current },
    annotations: opts.annotation ? { [ANNOTATION_POD_TERMINATION_POLICY]: opts.annotation } : {},
    createdAt: opts.createdAt ?? LATER,
    ...(opts.terminating && { deletionTimestamp: LATER }),
    ready: true,
    restartCount: 0,
  };
}

function workers(ownerUid: string, opts: { terminating?: boolean } = {}): StatefulSetFacts {
  return {
    namespace: 'default',
    name: 'demo-1',
    uid: `sts-of-${ownerUid}`,
    labels: {},
    ownerUid,
    replicas: 2,
    readyReplicas: 2,
    ...(opts.terminating && { deletionTimestamp: LATER }),
  };
}

const workerPod = (ownerUid: string, i: number): PodFacts => ({
  ...leader(`w${i}-of-${ownerUid}`),
  name: `demo-1-${i}`,
  ownerUid,
});

const leaderSts = (replicas: number, ownerUid = 'lws-uid'): StatefulSetFacts => ({
  ...workers(ownerUid),
  name: 'demo',
  uid: 'leader-sts',
  replicas,
});

interface Row {
  name: string;
  reads: Partial<TeardownReads>;
  /** The trigger's lifecycle (default rebuild). */
  judged?: Lifecycle;
  workersDeleted?: boolean;
  /** Expected; unset: Sequential from the default, a rebuild, no delete, the LWS the group's, no own workers. */
  policy?: PodTerminationPolicy;
  source?: 'spec' | 'annotation' | 'default';
  lifecycle?: Lifecycle;
  deletes?: boolean;
  /** The LWS is the group's: Events go to it. */
  lwsOfGroup?: boolean;
  ownWorkers?: boolean;
  /** The opt-in to force deletes on NotReady alone the waits get (model/dead-node.ts). */
  notReadySeconds?: number;
  /** Why the restart policy recreated the group, from this leader's annotation. */
  recreatedBecause?: string;
}

/** A group whose LWS is gone, or is another of its name: its leader's policy, a delete, no Events. */
const byItsOwnAnnotation = {
  policy: 'Parallel',
  source: 'annotation',
  lifecycle: 'delete',
  deletes: true,
  lwsOfGroup: false,
  ownWorkers: true,
} as const;

const L = 'L';
const terminating = leader(L, { terminating: true });
const rows: Row[] = [
  {
    name: 'Parallel, leader terminating: deletes its workers',
    reads: { lws: lws({ policy: 'Parallel' }), leaderPod: terminating, workerStatefulSet: workers(L) },
    policy: 'Parallel',
    source: 'spec',
    deletes: true,
    ownWorkers: true,
  },
  {
    name: 'Parallel, already deleted in the first round: not again',
    reads: { lws: lws({ policy: 'Parallel' }), leaderPod: terminating, workerStatefulSet: workers(L) },
    workersDeleted: true,
    policy: 'Parallel',
    source: 'spec',
    ownWorkers: true,
  },
  {
    name: 'Sequential: observes only',
    reads: { lws: lws({ policy: 'Sequential' }), leaderPod: terminating, workerStatefulSet: workers(L) },
    source: 'spec',
    ownWorkers: true,
  },
  {
    name: 'Parallel, leader not terminating: never deletes',
    reads: { lws: lws({ policy: 'Parallel' }), leaderPod: leader(L), workerStatefulSet: workers(L) },
    policy: 'Parallel',
    source: 'spec',
    ownWorkers: true,
  },
  {
    name: 'Parallel, the StatefulSet of a new leader: never touched, not followed',
    reads: { lws: lws({ policy: 'Parallel' }), leaderPod: leader('NEW'), workerStatefulSet: workers('NEW') },
    policy: 'Parallel',
    source: 'spec',
  },
  {
    name: 'Parallel, StatefulSet already deleting: followed, not deleted',
    reads: {
      lws: lws({ policy: 'Parallel' }),
      leaderPod: terminating,
      workerStatefulSet: workers(L, { terminating: true }),
    },
    policy: 'Parallel',
    source: 'spec',
    ownWorkers: true,
  },
  {
    name: 'Parallel, leader gone: the garbage collector has its workers',
    reads: { lws: lws({ policy: 'Parallel' }), leaderPod: null, workerStatefulSet: workers(L) },
    policy: 'Parallel',
    source: 'spec',
    ownWorkers: true,
  },
  {
    name: "LWS gone: the leader's annotation, no Events",
    reads: {
      lws: null,
      leaderPod: leader(L, { terminating: true, annotation: 'Parallel' }),
      workerStatefulSet: workers(L),
    },
    judged: 'delete',
    ...byItsOwnAnnotation,
  },
  {
    name: "LWS created again after the leader: the leader's own policy, a delete, no Events to the new one",
    reads: {
      lws: lws({ policy: 'Sequential', createdAt: '2026-01-01T00:30:00Z' }),
      leaderPod: leader(L, { terminating: true, annotation: 'Parallel', createdAt: T0 }),
      workerStatefulSet: workers(L),
    },
    ...byItsOwnAnnotation,
  },
  {
    name: 'scaled down a moment before the trigger saw it: a scale-down',
    reads: { lws: lws({ replicas: 1 }), leaderPod: terminating, leaderStatefulSet: leaderSts(1) },
    lifecycle: 'scale-down',
  },
  {
    name: 'a surge group the rollout keeps: a rebuild',
    reads: { lws: lws({ replicas: 1 }), leaderPod: terminating, leaderStatefulSet: leaderSts(2) },
    judged: 'scale-down',
  },
  {
    name: "another LWS's leader StatefulSet keeps no surge group",
    reads: { lws: lws({ replicas: 1 }), leaderPod: terminating, leaderStatefulSet: leaderSts(2, 'another-lws') },
    lifecycle: 'scale-down',
  },
  {
    name: 'built from an older template: a rolling update',
    reads: { lws: lws(), leaderPod: leader(L, { terminating: true, revision: 'old' }) },
    lifecycle: 'rolling-update',
  },
  {
    name: "the leader's replacement already: the trigger's lifecycle stands",
    reads: { lws: lws({ replicas: 0 }), leaderPod: leader('NEW') },
    judged: 'rebuild',
  },
  {
    name: "the group's LWS opted in to force deletes on NotReady alone: the waits get its seconds",
    reads: { lws: lws({ notReadySeconds: 0 }), leaderPod: terminating },
    notReadySeconds: 0,
  },
  {
    name: 'an LWS created again after the leader opts in none of the old groups',
    reads: {
      lws: lws({ createdAt: '2026-01-01T00:30:00Z', notReadySeconds: 300 }),
      leaderPod: leader(L, { terminating: true, createdAt: T0 }),
    },
    lifecycle: 'delete',
    lwsOfGroup: false,
  },
  {
    name: 'recreated by the restart policy: the reason its recreate wrote on this leader',
    reads: { lws: lws(), leaderPod: { ...terminating, annotations: { [ANNOTATION_RECREATE_REASON]: 'a crash' } } },
    recreatedBecause: 'a crash',
  },
  {
    name: "the leader's replacement's reason is not this group's",
    reads: { lws: lws(), leaderPod: { ...leader('NEW'), annotations: { [ANNOTATION_RECREATE_REASON]: 'a crash' } } },
  },
  {
    name: 'a delete stays a delete, whatever LWS of that name exists now',
    reads: { lws: lws(), leaderPod: terminating },
    judged: 'delete',
    lifecycle: 'delete',
  },
];

describe('model/teardown judgeTeardown', () => {
  for (const row of rows) {
    it(row.name, () => {
      const reads: TeardownReads = {
        lws: null,
        leaderPod: null,
        workerStatefulSet: null,
        groupPods: [workerPod(`sts-of-${L}`, 1), workerPod('sts-of-NEW', 2)],
        ...row.reads,
      };
      const group = {
        groupIndex: 1,
        leader: { namespace: 'default', name: 'demo-1', uid: L },
        lifecycle: row.judged ?? 'rebuild',
      };
      const j = judgeTeardown(group, reads, row.workersDeleted ?? false);
      const { policy = 'Sequential', source = 'default', lifecycle = 'rebuild' } = row;
      assert.deepEqual({ policy: j.policy, source: j.source, lifecycle: j.lifecycle }, { policy, source, lifecycle });
      assert.deepEqual(
        j.deleteWorkers,
        row.deletes ? { namespace: 'default', name: 'demo-1', uid: 'sts-of-L' } : undefined,
      );
      assert.equal(j.lwsUid, (row.lwsOfGroup ?? true) ? 'lws-uid' : undefined);
      assert.equal(j.forceDeleteOnNodeNotReadySeconds, row.notReadySeconds);
      assert.equal(j.recreatedBecause, row.recreatedBecause);
      if (row.ownWorkers) {
        assert.equal(j.ownWorkers?.statefulSet.uid, 'sts-of-L');
        assert.deepEqual(
          j.ownWorkers?.pods.map((p) => p.name),
          ['demo-1-1'],
          'only its own pods',
        );
      } else {
        assert.equal(j.ownWorkers, null);
      }
    });
  }
});
