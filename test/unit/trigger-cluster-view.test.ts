import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import {
  ANNOTATION_SIZE,
  LABEL_NAME,
  LABEL_WORKER_INDEX,
  type LeaderWorkerSet,
  type PodFacts,
  type StatefulSetFacts,
} from '../../src/model/index.js';
import { ClusterView } from '../../src/trigger/cluster-view.js';
import { identityOf } from '../fixtures/fake-activities.js';
import { podActions } from '../../src/trigger/decide.js';
import { sampleLws } from './model-fixtures.js';

// sampleLws: default/demo, replicas 2, size 4 (so a group is started when its worker StatefulSet has 3 ready).
const lws = sampleLws();
/** The cluster the trigger watches. */
const C = 'c1';

function lwsOfSize(size: number | undefined): LeaderWorkerSet {
  return sampleLws({ leaderWorkerTemplate: { ...lws.spec.leaderWorkerTemplate, size } });
}

/** Being deleted: a deletionTimestamp (when the grace period ends). */
const TERMINATING = { deletionTimestamp: '2025-01-01T00:00:30Z', deletionGracePeriodSeconds: 30 };

function leader(group: number, over: Partial<PodFacts> = {}): PodFacts {
  return {
    namespace: 'default',
    name: `demo-${group}`,
    uid: `leader-${group}`,
    labels: { [LABEL_NAME]: 'demo', [LABEL_WORKER_INDEX]: '0' },
    annotations: {},
    ready: true,
    restartCount: 0,
    ownerUid: 'leader-sts',
    ...over,
  };
}

function worker(group: number, index: number, over: Partial<PodFacts> = {}): PodFacts {
  return {
    namespace: 'default',
    name: `demo-${group}-${index}`,
    uid: `worker-${group}-${index}`,
    labels: { [LABEL_NAME]: 'demo', [LABEL_WORKER_INDEX]: String(index) },
    annotations: {},
    ready: true,
    restartCount: 0,
    ownerUid: `sts-${group}`,
    ...over,
  };
}

/** Worker StatefulSet `sts-<group>`, owned by leader `leader-<group>` unless told otherwise. */
function workerSet(group: number, readyReplicas: number, over: Partial<StatefulSetFacts> = {}): StatefulSetFacts {
  return {
    namespace: 'default',
    name: `demo-${group}`,
    uid: `sts-${group}`,
    labels: { [LABEL_NAME]: 'demo' },
    replicas: 3,
    readyReplicas,
    ownerUid: `leader-${group}`,
    ...over,
  };
}

/** A view that knows `l` (null: knows no LWS). */
function viewWith(l: LeaderWorkerSet | null = lws): ClusterView {
  const view = new ClusterView();
  if (l) view.setLws(l);
  return view;
}

describe('trigger/cluster-view', () => {
  describe('ClusterView: owner chain', () => {
    it("finds a worker pod's leader through worker pod -> worker StatefulSet -> leader pod", () => {
      const view = viewWith();
      view.setPod(leader(0));
      view.setPod(leader(1));
      view.setStatefulSet(workerSet(0, 0));
      view.setStatefulSet(workerSet(1, 0));
      assert.equal(view.leaderOfWorker(worker(0, 2))?.uid, 'leader-0');
      assert.equal(view.leaderOfWorker(worker(1, 3))?.uid, 'leader-1');
    });

    // [what, setup, worker, expected leader uid]
    const cases: Array<[string, (v: ClusterView) => void, PodFacts, string | undefined]> = [
      ['unknown worker StatefulSet', (v) => v.setPod(leader(0)), worker(0, 1), undefined],
      [
        'worker without a controlling owner',
        (v) => v.setPod(leader(0)),
        worker(0, 1, { ownerUid: undefined }),
        undefined,
      ],
      [
        'StatefulSet without an owner',
        (v) => {
          v.setPod(leader(0));
          v.setStatefulSet(workerSet(0, 0, { ownerUid: undefined }));
        },
        worker(0, 1),
        undefined,
      ],
      [
        'leader deleted from the view',
        (v) => {
          v.setPod(leader(0));
          v.setStatefulSet(workerSet(0, 0));
          v.deletePod('leader-0');
        },
        worker(0, 1),
        undefined,
      ],
      [
        'StatefulSet deleted from the view',
        (v) => {
          v.setPod(leader(0));
          v.setStatefulSet(workerSet(0, 0));
          v.deleteStatefulSet('sts-0');
        },
        worker(0, 1),
        undefined,
      ],
      [
        "old group's worker while a replacement leader of the same name exists",
        (v) => {
          // sts-0 was owned by leader-0, which is gone; demo-0 is now leader-0-new with its own sts-0-new.
          v.setStatefulSet(workerSet(0, 0));
          v.setPod(leader(0, { uid: 'leader-0-new' }));
          v.setStatefulSet(workerSet(0, 0, { uid: 'sts-0-new', ownerUid: 'leader-0-new' }));
        },
        worker(0, 1),
        undefined,
      ],
      [
        "new group's worker finds the replacement leader",
        (v) => {
          v.setStatefulSet(workerSet(0, 0));
          v.setPod(leader(0, { uid: 'leader-0-new' }));
          v.setStatefulSet(workerSet(0, 0, { uid: 'sts-0-new', ownerUid: 'leader-0-new' }));
        },
        worker(0, 1, { ownerUid: 'sts-0-new' }),
        'leader-0-new',
      ],
      [
        'a terminating leader is still found (decide checks whether it is)',
        (v) => {
          v.setPod(leader(0, TERMINATING));
          v.setStatefulSet(workerSet(0, 0));
        },
        worker(0, 1),
        'leader-0',
      ],
    ];
    for (const [what, setup, w, expected] of cases) {
      it(`${what}: ${expected ?? 'no leader'}`, () => {
        const view = viewWith();
        setup(view);
        assert.equal(view.leaderOfWorker(w)?.uid, expected);
      });
    }

    it('gives podActions a recreate keyed by the leader uid of the chain, and none once the leader terminates', () => {
      const view = viewWith();
      view.setStatefulSet(workerSet(0, 3));
      view.setPod(leader(0));
      const restarted = worker(0, 2, { restartCount: 1 });
      for (const w of [worker(0, 1), restarted, worker(0, 3)]) view.setPod(w);
      assert.deepEqual(
        podActions(C, restarted, view, false).map((a) => a.workflowId),
        ['lws/c1/default/demo/group-0/recreate/leader-0'],
      );
      view.setPod(leader(0, TERMINATING));
      assert.deepEqual(podActions(C, restarted, view, false), []);
    });
  });

  describe('ClusterView: workersOf', () => {
    it("gives the leader's worker StatefulSet and its pods not yet terminating, by the owner chain", () => {
      const view = viewWith();
      view.setPod(leader(0));
      view.setPod(leader(1));
      view.setStatefulSet(workerSet(0, 3));
      view.setStatefulSet(workerSet(1, 3));
      for (const i of [1, 2, 3]) view.setPod(worker(0, i, i === 3 ? TERMINATING : {}));
      view.setPod(worker(1, 1));
      // Same name as group 0's worker, another incarnation's StatefulSet: not group 0's.
      view.setPod(worker(0, 4, { ownerUid: 'sts-old' }));
      assert.deepEqual(view.workersOf('leader-0'), {
        statefulSet: identityOf(workerSet(0, 3)),
        pods: [identityOf(worker(0, 1)), identityOf(worker(0, 2))],
      });
      assert.deepEqual(view.workersOf('leader-1')?.pods, [identityOf(worker(1, 1))]);
    });

    it('follows the pods and StatefulSets as they change owner, go, and come back', () => {
      const view = viewWith();
      view.setStatefulSet(workerSet(0, 3));
      view.setPod(worker(0, 1));
      view.setPod(worker(0, 2));
      view.setPod(worker(0, 2, { ownerUid: undefined })); // released by its StatefulSet
      view.deletePod(worker(0, 1).uid);
      assert.deepEqual(view.workersOf('leader-0')?.pods, []);
      view.setPod(worker(0, 2)); // adopted again
      assert.deepEqual(view.workersOf('leader-0')?.pods, [identityOf(worker(0, 2))]);
      view.setStatefulSet(workerSet(0, 3, { ownerUid: 'leader-9' }));
      assert.equal(view.workersOf('leader-0'), undefined);
      assert.equal(view.workersOf('leader-9')?.statefulSet.uid, 'sts-0');
      view.deleteStatefulSet('sts-0');
      assert.equal(view.workersOf('leader-9'), undefined);
    });

    // [what, StatefulSets known]
    const none: Array<[string, StatefulSetFacts[]]> = [
      ['no StatefulSet seen', []],
      ["only another leader's", [workerSet(1, 3)]],
      [
        'its StatefulSet already being deleted',
        [workerSet(0, 3, { deletionTimestamp: TERMINATING.deletionTimestamp })],
      ],
    ];
    for (const [what, sets] of none) {
      it(`gives nothing when ${what}`, () => {
        const view = viewWith();
        for (const s of sets) view.setStatefulSet(s);
        view.setPod(worker(0, 1));
        assert.equal(view.workersOf('leader-0'), undefined);
      });
    }
  });

  describe('ClusterView: groupReady (the change a rollout step waits for)', () => {
    // [what, lws, leader, worker StatefulSets, expected]
    const cases: Array<[string, LeaderWorkerSet | null, PodFacts, StatefulSetFacts[], boolean]> = [
      ['leader Ready, 3 of 3 workers ready', lws, leader(0), [workerSet(0, 3)], true],
      ['leader Ready, 2 of 3 workers ready', lws, leader(0), [workerSet(0, 2)], false],
      ['leader not Ready, 3 of 3 workers ready', lws, leader(0, { ready: false }), [workerSet(0, 3)], false],
      ['leader Ready, no worker StatefulSet', lws, leader(0), [], false],
      ['leader terminating', lws, leader(0, TERMINATING), [workerSet(0, 3)], false],
      ['ready workers owned by another leader', lws, leader(0), [workerSet(0, 3, { ownerUid: 'leader-0-old' })], false],
      ['LWS unknown', null, leader(0), [workerSet(0, 3)], false],
      ['a worker pod, not a leader', lws, worker(0, 1, { uid: 'leader-0' }), [workerSet(0, 3)], false],
      ['size 1: leader Ready is enough', lwsOfSize(1), leader(0), [], true],
      [
        'its own size (annotation 2) under spec size 4: 1 ready worker',
        lws,
        leader(0, { annotations: { [ANNOTATION_SIZE]: '2' } }),
        [workerSet(0, 1)],
        true,
      ],
    ];
    for (const [what, l, pod, sets, expected] of cases) {
      it(`${what}: ${expected ? 'Ready' : 'not Ready'}`, () => {
        const view = viewWith(l);
        for (const s of sets) view.setStatefulSet(s);
        view.setPod(pod);
        assert.equal(view.groupReady('leader-0'), expected);
      });
    }
  });

  describe('ClusterView: groupStarted (upstream: every pod there, none Pending)', () => {
    const running = { phase: 'Running' };
    const pending = { phase: 'Pending' };
    const workers = (n: number, over: Partial<PodFacts> = running) =>
      Array.from({ length: n }, (_, i) => worker(0, i + 1, over));
    // [what, lws, leader, worker StatefulSets, worker pods, expected]
    const cases: Array<[string, LeaderWorkerSet | null, PodFacts, StatefulSetFacts[], PodFacts[], boolean]> = [
      ['all 4 pods Running', lws, leader(0, running), [workerSet(0, 3)], workers(3), true],
      [
        'all 4 pods there, not Ready yet (Running)',
        lws,
        leader(0, { ...running, ready: false }),
        [workerSet(0, 0)],
        workers(3, { ...running, ready: false }),
        true,
      ],
      ['a worker Pending', lws, leader(0, running), [workerSet(0, 2)], [...workers(2), worker(0, 3, pending)], false],
      ['the leader Pending', lws, leader(0, pending), [workerSet(0, 3)], workers(3), false],
      ['a worker missing', lws, leader(0, running), [workerSet(0, 2)], workers(2), false],
      ['no worker StatefulSet yet', lws, leader(0, running), [], [], false],
      [
        'workers of another leader',
        lws,
        leader(0, running),
        [workerSet(0, 3, { ownerUid: 'leader-0-old' })],
        workers(3),
        false,
      ],
      ['LWS unknown', null, leader(0, running), [workerSet(0, 3)], workers(3), false],
      ['size 1: the leader Running', lwsOfSize(1), leader(0, running), [], [], true],
      ['size 1: the leader Pending', lwsOfSize(1), leader(0, pending), [], [], false],
      [
        'its own size (annotation 2) under spec size 4',
        lws,
        leader(0, { ...running, annotations: { [ANNOTATION_SIZE]: '2' } }),
        [workerSet(0, 1, { replicas: 1 })],
        workers(1),
        true,
      ],
    ];
    for (const [what, l, pod, sets, pods, expected] of cases) {
      it(`${what}: ${expected ? 'started' : 'not started'}`, () => {
        const view = viewWith(l);
        view.setPod(pod);
        for (const s of sets) view.setStatefulSet(s);
        for (const p of pods) view.setPod(p);
        assert.equal(view.groupStarted('leader-0'), expected);
      });
    }
  });

  describe('ClusterView: bookkeeping', () => {
    it('keeps LWSes by namespace and name', () => {
      const view = new ClusterView();
      const other = sampleLws();
      other.metadata = { ...other.metadata, namespace: 'team-a' };
      view.setLws(lws);
      view.setLws(other);
      assert.equal(view.lws({ namespace: 'default', name: 'demo' }), lws);
      assert.equal(view.lws({ namespace: 'team-a', name: 'demo' }), other);
      assert.equal(view.lws({ namespace: 'default', name: 'nope' }), undefined);
      assert.equal(view.allLws().length, 2);
      view.deleteLws(lws);
      assert.equal(view.lws({ namespace: 'default', name: 'demo' }), undefined);
      assert.deepEqual(view.allLws(), [other]);
    });

    it('returns the previous pod and StatefulSet on update and delete', () => {
      const view = viewWith();
      assert.equal(view.setPod(leader(0, { ready: false })), undefined);
      assert.equal(view.setPod(leader(0))?.ready, false);
      assert.equal(view.deletePod('leader-0')?.ready, true);
      assert.equal(view.deletePod('leader-0'), undefined);
      assert.equal(view.setStatefulSet(workerSet(0, 1)), undefined);
      assert.equal(view.setStatefulSet(workerSet(0, 2))?.readyReplicas, 1);
      assert.equal(view.deleteStatefulSet('sts-0')?.readyReplicas, 2);
      assert.deepEqual(view.allPods(), []);
    });

    it("knows the leader StatefulSet's replicas: the one the LWS owns, of its name, not being deleted", () => {
      const view = viewWith();
      const ref = { namespace: 'default', name: 'demo' };
      const leaderSet = (over: Partial<StatefulSetFacts>): StatefulSetFacts => ({
        ...workerSet(0, 0),
        name: 'demo',
        uid: 'leader-sts',
        ownerUid: 'lws-uid-1',
        ...over,
      });
      assert.equal(view.leaderReplicas(ref), undefined, 'not seen yet');
      view.setStatefulSet(workerSet(0, 3)); // a worker StatefulSet: owned by a leader pod
      assert.equal(view.leaderReplicas(ref), undefined);
      view.setStatefulSet(leaderSet({ replicas: 3 }));
      assert.equal(view.leaderReplicas(ref), 3, 'a surge group kept');
      view.setStatefulSet(leaderSet({ replicas: 2 }));
      assert.equal(view.leaderReplicas(ref), 2, 'as it changes');
      assert.equal(view.leaderReplicas({ namespace: 'team-a', name: 'demo' }), undefined, 'another LWS');
      view.setStatefulSet(leaderSet({ replicas: 2, deletionTimestamp: TERMINATING.deletionTimestamp }));
      assert.equal(view.leaderReplicas(ref), undefined, 'being deleted');
      view.setStatefulSet(leaderSet({ uid: 'older', ownerUid: 'an-older-lws-uid', replicas: 5 }));
      view.deleteStatefulSet('leader-sts');
      assert.equal(view.leaderReplicas(ref), undefined, "an earlier LWS's, not this one's");
    });

    it('knows which namespaces are being deleted, as their watch shows them', () => {
      const view = new ClusterView();
      view.setNamespace('team-a', false);
      view.setNamespace('team-b', true);
      assert.equal(view.namespaceTerminating('team-a'), false);
      assert.equal(view.namespaceTerminating('team-b'), true);
      assert.equal(view.namespaceTerminating('never-seen'), false);
      view.setNamespace('team-a', true);
      assert.equal(view.namespaceTerminating('team-a'), true);
      // Gone, and later made again under the same name: a new namespace, not being deleted.
      view.deleteNamespace('team-b');
      assert.equal(view.namespaceTerminating('team-b'), false);
      view.setNamespace('team-b', false);
      assert.equal(view.namespaceTerminating('team-b'), false);
    });
  });
});
