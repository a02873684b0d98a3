import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import {
  ANNOTATION_EXCLUSIVE_TOPOLOGY,
  ANNOTATION_GROUP_FAILED,
  ANNOTATION_RECOVER,
  isDeleting,
  LABEL_NAME,
  LABEL_TEMPLATE_REVISION_HASH,
  LABEL_WORKER_INDEX,
  lwsFacts,
  templateRevisionHash,
  type LeaderWorkerSet,
  type ObjectKey,
  type PodFacts,
  type StatefulSetFacts,
} from '../../src/model/index.js';
import {
  groupChangeAction,
  leaderDeletedAt,
  lwsChangeMatters,
  statefulSetChangeMatters,
  podActions,
  reconcileAction,
  reconcileEndAction,
  type Knowledge,
  type StartAction,
} from '../../src/trigger/decide.js';
import type { SeenWorkers } from '../../src/activities/types.js';
import type { ProvisionGroupInput } from '../../src/workflows/provision-group.js';
import { sampleLws } from './model-fixtures.js';

// sampleLws: default/demo, generation 3, replicas 2, size 4.
const lws = sampleLws();
/** The cluster the trigger watches. */
const C = 'c1';
const ref: ObjectKey = { namespace: 'default', name: 'demo' };
const currentRevision = templateRevisionHash(lws.spec);
const DELETED_AT = '2025-01-01T00:00:00Z';
/** A pod deleted at DELETED_AT with a 30 s grace period. */
const TERMINATING = { deletionTimestamp: '2025-01-01T00:00:30Z', deletionGracePeriodSeconds: 30 };

/** `lws` deleted and created again under its name at RECREATED_AT; BEFORE and AFTER bracket that. */
const RECREATED_AT = '2025-02-01T10:00:05Z';
const BEFORE = '2025-02-01T09:00:00Z';
const AFTER = '2025-02-01T10:00:09Z';

function deleting(l: LeaderWorkerSet): LeaderWorkerSet {
  return { ...l, metadata: { ...l.metadata, deletionTimestamp: DELETED_AT } };
}

function withMeta(l: LeaderWorkerSet, meta: Partial<LeaderWorkerSet['metadata']>): LeaderWorkerSet {
  return { ...l, metadata: { ...l.metadata, ...meta } };
}

function leader(group: number, over: Partial<PodFacts> = {}): PodFacts {
  return {
    namespace: 'default',
    name: `demo-${group}`,
    uid: `leader-${group}`,
    labels: {
      [LABEL_NAME]: 'demo',
      [LABEL_WORKER_INDEX]: '0',
      [LABEL_TEMPLATE_REVISION_HASH]: currentRevision,
    },
    annotations: {},
    ready: true,
    restartCount: 0,
    ownerUid: 'leader-sts',
    ...over,
  };
}

/** A worker pod whose controlling owner is the worker StatefulSet `sts-<group>` of the current incarnation. */
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

interface World {
  lws?: LeaderWorkerSet;
  /** Worker StatefulSet uid -> the leader pod that owns it (the owner chain, never names). */
  stsOwners?: Record<string, PodFacts>;
  started?: string[];
  /** Leader uid -> its worker StatefulSet and pods as the watches showed them. */
  workers?: Record<string, SeenWorkers>;
  /** Namespaces being deleted. */
  terminatingNamespaces?: string[];
  /** The leader StatefulSet's spec.replicas (above the LWS's while a rollout keeps surge groups). */
  leaderReplicas?: number;
}

function fakeKnowledge(world: World = {}): Knowledge {
  return {
    lws: (r) =>
      world.lws && world.lws.metadata.namespace === r.namespace && world.lws.metadata.name === r.name
        ? world.lws
        : undefined,
    leaderOfWorker: (w) => (w.ownerUid ? world.stsOwners?.[w.ownerUid] : undefined),
    groupStarted: (uid) => world.started?.includes(uid) ?? false,
    workersOf: (uid) => world.workers?.[uid],
    namespaceTerminating: (namespace) => world.terminatingNamespaces?.includes(namespace) ?? false,
    leaderReplicas: (r) => (world.lws?.metadata.name === r.name ? world.leaderReplicas : undefined),
  };
}

/** `<workflowType> <workflowId> <lifecycle>`: the parts of an action a table can compare at a glance. */
function brief(actions: StartAction[]): string[] {
  return actions.map((a) => `${a.kind} ${a.workflowType} ${a.workflowId} ${a.lifecycle ?? '-'}`);
}

const provision = (group: number, uid: string) =>
  `start provisionGroup lws/c1/default/demo/group-${group}/provision/${uid} provision`;
const teardown = (group: number, uid: string, lifecycle: string) =>
  `start teardownGroup lws/c1/default/demo/group-${group}/teardown/${uid} ${lifecycle}`;
/** A restart before the group fully started has its own ID (see names.ts), so the two never collide. */
const recreate = (group: number, leaderUid: string, started = false) =>
  `start recreateGroup lws/c1/default/demo/group-${group}/recreate/${leaderUid}${started ? '' : '/before-start'} recreate`;

const recoverGroup = (group: number, leaderUid: string) =>
  `start recreateGroup lws/c1/default/demo/group-${group}/recreate/${leaderUid}/recover recreate`;
const recreated = withMeta(lws, { uid: 'lws-uid-2', creationTimestamp: RECREATED_AT });

describe('trigger/decide', () => {
  describe('podActions', () => {
    const owners = { 'sts-0': leader(0), 'sts-1': leader(1) };
    const know = fakeKnowledge({ lws, stsOwners: owners });

    // [what, pod, world, expected brief]
    const cases: Array<[string, PodFacts, World, string[]]> = [
      // Leaders: provision while alive, teardown while terminating.
      ['a new leader pod', leader(1), { lws }, [provision(1, 'leader-1')]],
      ['a new leader pod that is not Ready yet', leader(0, { ready: false }), { lws }, [provision(0, 'leader-0')]],
      ['a leader of a group above replicas (still alive)', leader(3), { lws }, [provision(3, 'leader-3')]],
      ['a leader whose LWS is unknown', leader(1), {}, []],
      ['a leader whose LWS is being deleted', leader(1), { lws: deleting(lws) }, []],
      ['a leader of another LWS of the same name elsewhere', leader(1, { namespace: 'team-a' }), { lws }, []],
      ['a terminating leader', leader(1, { ...TERMINATING }), { lws }, [teardown(1, 'leader-1', 'rebuild')]],
      [
        'a terminating leader above replicas',
        leader(2, { ...TERMINATING }),
        { lws },
        [teardown(2, 'leader-2', 'scale-down')],
      ],
      [
        'a terminating surge leader the leader StatefulSet still wants (mid-rollout)',
        leader(2, { ...TERMINATING }),
        { lws, leaderReplicas: 3 },
        [teardown(2, 'leader-2', 'rebuild')],
      ],
      [
        'a terminating surge leader once the leader StatefulSet is back to replicas',
        leader(2, { ...TERMINATING }),
        { lws, leaderReplicas: 2 },
        [teardown(2, 'leader-2', 'scale-down')],
      ],
      [
        'a terminating surge leader while the LWS is being deleted',
        leader(2, { ...TERMINATING }),
        { lws: deleting(lws), leaderReplicas: 3 },
        [teardown(2, 'leader-2', 'delete')],
      ],
      [
        'a terminating leader on an old revision',
        leader(0, { ...TERMINATING, labels: { ...leader(0).labels, [LABEL_TEMPLATE_REVISION_HASH]: 'old' } }),
        { lws },
        [teardown(0, 'leader-0', 'rolling-update')],
      ],
      ['a terminating leader, LWS unknown', leader(0, { ...TERMINATING }), {}, [teardown(0, 'leader-0', 'delete')]],
      [
        'a terminating leader, LWS being deleted',
        leader(0, { ...TERMINATING }),
        { lws: deleting(lws) },
        [teardown(0, 'leader-0', 'delete')],
      ],
      [
        'a terminating leader that had restarted (teardown only)',
        leader(0, { ...TERMINATING, restartCount: 2 }),
        { lws, stsOwners: owners },
        [teardown(0, 'leader-0', 'rebuild')],
      ],

      // Restart policy on the leader itself.
      [
        'a leader whose container restarted',
        leader(1, { restartCount: 1 }),
        { lws },
        [provision(1, 'leader-1'), recreate(1, 'leader-1')],
      ],
      ['a restarted leader, LWS being deleted', leader(1, { restartCount: 1 }), { lws: deleting(lws) }, []],

      // A failed group (restart budget spent) the user asked to recover: rebuilt, whatever its restarts.
      [
        'a failed leader annotated recover=true',
        leader(1, {
          restartCount: 4,
          annotations: { [ANNOTATION_GROUP_FAILED]: 'spent', [ANNOTATION_RECOVER]: 'true' },
        }),
        { lws },
        [provision(1, 'leader-1'), recoverGroup(1, 'leader-1')],
      ],
      [
        'recover=true on a group that has not failed: an ordinary restart',
        leader(1, { restartCount: 1, annotations: { [ANNOTATION_RECOVER]: 'true' } }),
        { lws },
        [provision(1, 'leader-1'), recreate(1, 'leader-1')],
      ],
      [
        'a failed leader annotated recover=true, LWS being deleted',
        leader(1, { annotations: { [ANNOTATION_GROUP_FAILED]: 'spent', [ANNOTATION_RECOVER]: 'true' } }),
        { lws: deleting(lws) },
        [],
      ],
      ['a restarted leader, LWS unknown', leader(1, { restartCount: 1 }), {}, []],

      // Workers never provision or tear down.
      ['a healthy worker', worker(1, 2), { lws, stsOwners: owners }, []],
      ['a healthy worker, LWS unknown', worker(1, 2), { stsOwners: owners }, []],
      ['a worker that is not Ready', worker(1, 2, { ready: false }), { lws, stsOwners: owners }, []],

      // Restart policy on workers: keyed by the leader found through the owner chain.
      [
        'a worker whose container restarted',
        worker(1, 2, { restartCount: 3 }),
        { lws, stsOwners: owners },
        [recreate(1, 'leader-1')],
      ],
      ['a deleted worker', worker(0, 3, { ...TERMINATING }), { lws, stsOwners: owners }, [recreate(0, 'leader-0')]],
      [
        'a deleted worker that had also restarted',
        worker(0, 3, { ...TERMINATING, restartCount: 1 }),
        { lws, stsOwners: owners },
        [recreate(0, 'leader-0')],
      ],
      [
        'a restarted worker whose leader is terminating',
        worker(1, 1, { restartCount: 1 }),
        { lws, stsOwners: { 'sts-1': leader(1, { ...TERMINATING }) } },
        [],
      ],
      [
        'a deleted worker whose leader is terminating (the group is being torn down)',
        worker(1, 1, { ...TERMINATING }),
        { lws, stsOwners: { 'sts-1': leader(1, { ...TERMINATING }) } },
        [],
      ],
      [
        "an old group's deleted worker whose StatefulSet belongs to a gone leader",
        // A replacement leader demo-1 (uid leader-1-new) owns sts-1-new; the worker's own sts-1 has no known owner.
        worker(1, 2, { ...TERMINATING }),
        { lws, stsOwners: { 'sts-1-new': leader(1, { uid: 'leader-1-new' }) } },
        [],
      ],
      [
        "an old group's restarted worker whose StatefulSet belongs to a gone leader",
        worker(1, 2, { restartCount: 4 }),
        { lws, stsOwners: { 'sts-1-new': leader(1, { uid: 'leader-1-new' }) } },
        [],
      ],
      ['a worker without a controlling owner', worker(1, 2, { ownerUid: undefined, ...TERMINATING }), { lws }, []],
      [
        'a deleted worker, LWS being deleted',
        worker(0, 3, { ...TERMINATING }),
        { lws: deleting(lws), stsOwners: owners },
        [],
      ],
      ['a restarted worker, LWS unknown', worker(0, 3, { restartCount: 1 }), { stsOwners: owners }, []],

      // A namespace being deleted takes its LWS with it: its pods go in any order, and none is to be replaced.
      [
        'a terminating leader in a namespace being deleted, its LWS still there',
        leader(1, { ...TERMINATING }),
        { lws, terminatingNamespaces: ['default'] },
        [teardown(1, 'leader-1', 'delete')],
      ],
      [
        'a terminating leader while another namespace is being deleted',
        leader(1, { ...TERMINATING }),
        { lws, terminatingNamespaces: ['team-a'] },
        [teardown(1, 'leader-1', 'rebuild')],
      ],
      ['a new leader in a namespace being deleted', leader(1), { lws, terminatingNamespaces: ['default'] }, []],
      [
        'a restarted leader in a namespace being deleted',
        leader(1, { restartCount: 1 }),
        { lws, terminatingNamespaces: ['default'] },
        [],
      ],
      [
        'a worker deleted before its leader in a namespace being deleted',
        worker(0, 3, { ...TERMINATING }),
        { lws, stsOwners: owners, terminatingNamespaces: ['default'] },
        [],
      ],

      // The LWS deleted and created again under its name: pods created before it are the older one's, going.
      [
        "a terminating leader of the older LWS: that one's deletion",
        leader(0, { ...TERMINATING, createdAt: BEFORE }),
        { lws: recreated },
        [teardown(0, 'leader-0', 'delete')],
      ],
      [
        'a leader of the older LWS, not yet terminating: no provision',
        leader(0, { createdAt: BEFORE }),
        { lws: recreated },
        [],
      ],
      [
        'a restarted worker of the older LWS: no recreate',
        worker(0, 1, { restartCount: 1, createdAt: BEFORE }),
        { lws: recreated, stsOwners: { 'sts-0': leader(0, { createdAt: BEFORE }) } },
        [],
      ],
      [
        'a leader created in the same second as the LWS (whole seconds): its own',
        leader(0, { ...TERMINATING, createdAt: RECREATED_AT }),
        { lws: recreated },
        [teardown(0, 'leader-0', 'rebuild')],
      ],
      ['a leader of the new LWS', leader(0, { createdAt: AFTER }), { lws: recreated }, [provision(0, 'leader-0')]],
    ];
    for (const [what, pod, world, expected] of cases) {
      it(`${what}: ${expected.length === 0 ? 'nothing' : expected.join('; ')}`, () => {
        assert.deepEqual(brief(podActions(C, pod, fakeKnowledge(world), false)), expected);
      });
    }

    // Names that do not parse (or no name label): ignored, however alarming the pod looks.
    const ignored: Array<[string, PodFacts]> = [
      ['no LWS name label', leader(1, { labels: {}, restartCount: 1 })],
      ['a name of another LWS', leader(1, { name: 'other-1', ...TERMINATING })],
      ['a leading-zero ordinal', leader(1, { name: 'demo-01', ...TERMINATING })],
      ['a trailing non-number', leader(1, { name: 'demo-1a', ...TERMINATING })],
      ['worker ordinal 0', worker(1, 0, { name: 'demo-1-0', ...TERMINATING })],
      ['three ordinals', worker(1, 2, { name: 'demo-1-2-3', ...TERMINATING, restartCount: 1 })],
      ['just the LWS name', leader(0, { name: 'demo', ...TERMINATING })],
    ];
    for (const [what, pod] of ignored) {
      it(`ignores a pod with ${what}`, () => {
        assert.deepEqual(podActions(C, pod, fakeKnowledge({ lws, stsOwners: owners }), true), []);
      });
    }

    it('takes the LWS from the name label (an LWS named demo-1 has leader demo-1-2 in group 2)', () => {
      const other = withMeta(lws, { name: 'demo-1' });
      const pod = leader(0, { name: 'demo-1-2', uid: 'u', labels: { [LABEL_NAME]: 'demo-1' } });
      const actions = podActions(C, pod, fakeKnowledge({ lws: other }), false);
      assert.deepEqual(
        actions.map((a) => a.workflowId),
        ['lws/c1/default/demo-1/group-2/provision/u'],
      );
      assert.deepEqual(actions[0]?.ref, { namespace: 'default', name: 'demo-1' });
    });

    it('gives provisionGroup the ref, group index, leader identity and what it saw of both', () => {
      const pod = leader(1);
      const [action, ...rest] = podActions(C, pod, know, true);
      assert.equal(rest.length, 0);
      const { status: _status, ...seenLws } = lwsFacts(lws);
      assert.deepEqual(action, {
        kind: 'start',
        workflowType: 'provisionGroup',
        workflowId: 'lws/c1/default/demo/group-1/provision/leader-1',
        summary: 'provision group 1 of default/demo',
        ref,
        groupIndex: 1,
        lifecycle: 'provision',
        args: [
          {
            ref,
            groupIndex: 1,
            leader: { namespace: 'default', name: 'demo-1', uid: 'leader-1' },
            seen: { lws: seenLws, leader: pod },
          },
        ],
        reason: 'leader demo-1 exists',
      });
    });

    // What the provisioning builds on at once: only when its workers wait for nothing, and never a template or status.
    const seenCases: Array<[string, LeaderWorkerSet, boolean]> = [
      ['LeaderCreated, no exclusive placement', lws, true],
      [
        'LeaderReady: the workers wait for the leader to be Ready',
        { ...lws, spec: { ...lws.spec, startupPolicy: 'LeaderReady' } },
        false,
      ],
      [
        'exclusive placement: the workers wait for the leader to be scheduled',
        withMeta(lws, { annotations: { [ANNOTATION_EXCLUSIVE_TOPOLOGY]: 'topology.kubernetes.io/zone' } }),
        false,
      ],
    ];
    for (const [what, world, given] of seenCases) {
      it(`provisionGroup's start ${given ? 'carries' : 'does not carry'} what the trigger saw: ${what}`, () => {
        const withStatus = { ...world, status: { replicas: 2, readyReplicas: 1 } } as LeaderWorkerSet;
        const [action] = podActions(C, leader(1), fakeKnowledge({ lws: withStatus }), false);
        assert.equal(action?.workflowType, 'provisionGroup');
        const input = action?.args[0] as ProvisionGroupInput;
        assert.equal(input.seen !== undefined, given);
        if (input.seen) {
          assert.equal(input.seen.lws.metadata.uid, lws.metadata.uid);
          assert.equal(input.seen.lws.metadata.generation, lws.metadata.generation);
          assert.ok(!('status' in input.seen.lws), 'no status in the start input');
          assert.ok(!JSON.stringify(input).includes('containers'), 'no template in the start input');
        }
      });
    }

    for (const searchAttributes of [true, false]) {
      it(`gives teardownGroup the lifecycle and searchAttributes=${searchAttributes}`, () => {
        const [action] = podActions(C, leader(2, { ...TERMINATING }), know, searchAttributes);
        assert.equal(action?.workflowType, 'teardownGroup');
        assert.equal(action?.groupIndex, 2);
        assert.deepEqual(action?.args, [
          {
            ref,
            groupIndex: 2,
            leader: { namespace: 'default', name: 'demo-2', uid: 'leader-2' },
            lifecycle: 'scale-down',
            searchAttributes,
            policy: lws.spec.podTerminationPolicy ?? 'Sequential',
            // From the pod's own record (TERMINATING), at the latest moment its whole seconds allow.
            leaderDeletedAt: '2025-01-01T00:00:00.999Z',
          },
        ]);
      });
    }

    // The trigger passes the policy it knows, so that under Parallel the workflow deletes the workers first.
    const policyCases: [string, PodFacts, LeaderWorkerSet | undefined, string][] = [
      ['from the LWS spec', leader(0, { ...TERMINATING }), sampleLws({ podTerminationPolicy: 'Parallel' }), 'Parallel'],
      [
        'from the leader annotation once the LWS is gone',
        leader(0, {
          ...TERMINATING,
          annotations: { 'leaderworkerset.sigs.k8s.io/pod-termination-policy': 'Parallel' },
        }),
        undefined,
        'Parallel',
      ],
      ['Sequential by default', leader(0, { ...TERMINATING }), undefined, 'Sequential'],
      [
        "from the leader annotation when the LWS of its name is a newer one (the older one's was Parallel)",
        leader(0, {
          ...TERMINATING,
          createdAt: BEFORE,
          annotations: { 'leaderworkerset.sigs.k8s.io/pod-termination-policy': 'Parallel' },
        }),
        withMeta(sampleLws({ podTerminationPolicy: 'Sequential' }), { creationTimestamp: RECREATED_AT }),
        'Parallel',
      ],
      [
        "from the leader annotation when the LWS of its name is a newer one (the older one's was Sequential)",
        leader(0, {
          ...TERMINATING,
          createdAt: BEFORE,
          annotations: { 'leaderworkerset.sigs.k8s.io/pod-termination-policy': 'Sequential' },
        }),
        withMeta(sampleLws({ podTerminationPolicy: 'Parallel' }), { creationTimestamp: RECREATED_AT }),
        'Sequential',
      ],
    ];
    for (const [what, pod, known, policy] of policyCases) {
      it(`passes teardownGroup the policy ${what}, in its input and for its search attribute`, () => {
        const [action] = podActions(C, pod, fakeKnowledge({ lws: known }), false);
        assert.equal((action?.args[0] as { policy?: string }).policy, policy);
        assert.equal(action?.policy, policy);
      });
    }

    // Under Parallel the workers as seen ride along, so that the workflow's delete reads nothing first.
    const seen: SeenWorkers = {
      statefulSet: { namespace: 'default', name: 'demo-0', uid: 'sts-0' },
      pods: [1, 2, 3].map((i) => ({ namespace: 'default', name: `demo-0-${i}`, uid: `worker-0-${i}` })),
    };
    const workersCases: [string, LeaderWorkerSet | undefined, Record<string, SeenWorkers>, SeenWorkers | undefined][] =
      [
        ['Parallel, workers seen', sampleLws({ podTerminationPolicy: 'Parallel' }), { 'leader-0': seen }, seen],
        ['Parallel, no worker StatefulSet seen', sampleLws({ podTerminationPolicy: 'Parallel' }), {}, undefined],
        ['Sequential: never', sampleLws({ podTerminationPolicy: 'Sequential' }), { 'leader-0': seen }, undefined],
        [
          "another leader's workers: never",
          sampleLws({ podTerminationPolicy: 'Parallel' }),
          { 'leader-1': seen },
          undefined,
        ],
      ];
    for (const [what, known, workers, expected] of workersCases) {
      it(`passes teardownGroup the workers as seen: ${what}`, () => {
        const [action] = podActions(C, leader(0, { ...TERMINATING }), fakeKnowledge({ lws: known, workers }), false);
        assert.equal(action?.workflowType, 'teardownGroup');
        assert.deepEqual((action?.args[0] as { workers?: SeenWorkers }).workers, expected);
      });
    }

    // [what, pod, groups that have started, expected groupHadStarted]
    const recreateArgs: Array<[string, PodFacts, string[], boolean]> = [
      ['restarted worker, group not yet started', worker(0, 1, { restartCount: 1 }), [], false],
      ['restarted worker, group started', worker(0, 1, { restartCount: 1 }), ['leader-0'], true],
      ['deleted worker, another group started', worker(0, 1, { ...TERMINATING }), ['leader-1'], false],
      ['restarted leader, group started', leader(0, { restartCount: 1 }), ['leader-0'], true],
    ];
    for (const [what, pod, started, hadStarted] of recreateArgs) {
      it(`gives recreateGroup the leader identity and groupHadStarted=${hadStarted} (${what})`, () => {
        const actions = podActions(C, pod, fakeKnowledge({ lws, stsOwners: owners, started }), false);
        const action = actions.find((a) => a.workflowType === 'recreateGroup');
        assert.ok(action);
        assert.equal(action.groupIndex, 0);
        assert.deepEqual(action.args, [
          {
            ref,
            groupIndex: 0,
            leader: { namespace: 'default', name: 'demo-0', uid: 'leader-0' },
            cause: isDeleting(pod) ? 'pod-deletion' : 'container-restart',
            pod: pod.name,
            reason: action.reason,
            groupHadStarted: hadStarted,
          },
        ]);
        assert.match(action.reason, isDeleting(pod) ? /was deleted/ : /restarted/);
        assert.match(action.reason, new RegExp(pod.name));
      });
    }

    it('never starts provision or teardown for worker pods, whatever their state', () => {
      for (const deletingPod of [false, true]) {
        for (const restartCount of [0, 1]) {
          for (const world of [{ lws, stsOwners: owners }, {}, { lws: deleting(lws), stsOwners: owners }]) {
            const actions = podActions(
              C,
              worker(1, 3, { ...(deletingPod ? TERMINATING : {}), restartCount }),
              fakeKnowledge(world),
              true,
            );
            const types = actions.map((a) => a.workflowType);
            assert.ok(!types.includes('provisionGroup'), `provision for ${JSON.stringify({ deletingPod, world })}`);
            assert.ok(!types.includes('teardownGroup'), `teardown for ${JSON.stringify({ deletingPod, world })}`);
          }
        }
      }
    });
  });

  describe('leaderDeletedAt', () => {
    const recorded = Date.parse('2025-01-01T00:00:00Z');
    const iso = (ms: number) => new Date(ms).toISOString();
    // [what, the pod's record of its deletion (whole seconds), when the trigger saw it, expected]
    const cases: [string, Partial<PodFacts>, number | undefined, string | undefined][] = [
      ['seen as it happened: when the trigger saw it', TERMINATING, recorded + 420, iso(recorded + 420)],
      ['seen a minute late: the latest moment the record allows', TERMINATING, recorded + 60_000, iso(recorded + 999)],
      [
        'force-deleted (no grace period), seen late: the record',
        { deletionTimestamp: iso(recorded) },
        recorded + 60_000,
        iso(recorded + 999),
      ],
      ['no record (not possible for a deleting pod): when seen', {}, recorded + 420, iso(recorded + 420)],
      ['not seen (no time given): the record', TERMINATING, undefined, iso(recorded + 999)],
      ['neither', {}, undefined, undefined],
    ];
    for (const [what, record, observedAt, expected] of cases) {
      it(what, () => {
        const pod = leader(0, record);
        assert.equal(leaderDeletedAt(pod, observedAt), expected);
      });
    }

    it('rides along in the teardown start, when the trigger gives the time it saw the pod', () => {
      const pod = leader(1, TERMINATING);
      const [action] = podActions(C, pod, fakeKnowledge({ lws }), false, recorded + 60_000);
      assert.equal(action?.workflowType, 'teardownGroup');
      assert.equal((action?.args[0] as { leaderDeletedAt?: string }).leaderDeletedAt, iso(recorded + 999));
    });
  });

  describe('groupChangeAction', () => {
    const updateInProgress = (status: 'True' | 'False', reason: string): LeaderWorkerSet => ({
      ...lws,
      status: {
        conditions: [{ type: 'UpdateInProgress', status, reason, message: '', lastTransitionTime: DELETED_AT }],
      },
    });
    const rolling = updateInProgress('True', 'RollingUpdate');
    // [what, lws, whether the change made its group Ready, whether the signal is batched (null: no action)]
    const cases: Array<[string, LeaderWorkerSet, boolean, boolean | null]> = [
      ['a group Ready, a rolling update under way: at once', rolling, true, false],
      [
        'a group Ready, a rolling update under way (upstream reason): at once',
        updateInProgress('True', 'GroupsUpdating'),
        true,
        false,
      ],
      ['any other change, a rolling update under way: batched', rolling, false, true],
      ['a group Ready, no rolling update: batched', updateInProgress('False', 'Updated'), true, true],
      ['a group Ready, no status yet: batched', lws, true, true],
      ['any other change: batched', lws, false, true],
      ['being deleted while rolling: nothing', deleting(rolling), true, null],
    ];
    for (const [what, l, groupReady, batch] of cases) {
      it(what, () => {
        const action = groupChangeAction(C, l, 'pod demo-1 changed', groupReady);
        if (batch === null) return assert.equal(action, undefined);
        assert.equal(action?.workflowId, 'lws/c1/default/demo/reconcile/3');
        assert.equal(action?.kind, 'signal-with-start');
        assert.equal(action?.batch, batch);
      });
    }
  });

  describe('lwsChangeMatters', () => {
    const withStatus = (l: LeaderWorkerSet): LeaderWorkerSet => ({
      ...withMeta(l, { resourceVersion: '99' }),
      status: { replicas: 2, readyReplicas: 1 },
    });
    // [what, before, after, whether the reconcile is told]
    const cases: Array<[string, LeaderWorkerSet | undefined, LeaderWorkerSet, boolean]> = [
      ['first seen', undefined, lws, true],
      ['its status written (with a new resourceVersion)', lws, withStatus(lws), false],
      ['the same object again (a resync of the watch)', lws, lws, false],
      ['a new generation', lws, withMeta(lws, { generation: 4 }), true],
      ['being deleted', lws, deleting(lws), true],
      ['created again under the name', lws, withMeta(lws, { uid: 'another' }), true],
      ['an annotation added', lws, withMeta(lws, { annotations: { [ANNOTATION_EXCLUSIVE_TOPOLOGY]: 'zone' } }), true],
      [
        'an annotation changed',
        withMeta(lws, { annotations: { a: '1' } }),
        withMeta(lws, { annotations: { a: '2' } }),
        true,
      ],
      ['a label added', lws, withMeta(lws, { labels: { team: 'a' } }), true],
    ];
    for (const [what, before, after, matters] of cases) {
      it(`${what}: ${matters ? 'told' : 'not told'}`, () => assert.equal(lwsChangeMatters(before, after), matters));
    }
  });

  describe('statefulSetChangeMatters', () => {
    const workers: StatefulSetFacts = {
      namespace: 'default',
      name: 'demo-0',
      uid: 'sts-0',
      labels: {},
      ownerUid: 'leader-0',
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      rolledOut: true,
    };
    // [what, the change, whether the reconcile is told]
    const cases: Array<[string, Partial<StatefulSetFacts> | undefined, boolean]> = [
      ['first seen', undefined, true],
      ['nothing the status reads (a label)', { labels: { other: 'x' } }, false],
      ['a replica no longer ready', { readyReplicas: 2 }, true],
      ['a replica no longer available (ready as before)', { availableReplicas: 2 }, true],
      ['a pod left on an older revision', { rolledOut: false }, true],
      ['scaled', { replicas: 4 }, true],
      ['being deleted', { deletionTimestamp: DELETED_AT }, true],
    ];
    for (const [what, change, matters] of cases) {
      it(`${what}: ${matters ? 'told' : 'not told'}`, () => {
        const [before, after] = change === undefined ? [undefined, workers] : [workers, { ...workers, ...change }];
        assert.equal(statefulSetChangeMatters(before, after), matters);
      });
    }
  });

  describe('reconcileAction', () => {
    // [what, lws, expected workflow ID or undefined]
    const cases: Array<[string, LeaderWorkerSet, string | undefined]> = [
      ['generation 3', lws, 'lws/c1/default/demo/reconcile/3'],
      [
        'generation 12 in team-a',
        withMeta(lws, { namespace: 'team-a', generation: 12 }),
        'lws/c1/team-a/demo/reconcile/12',
      ],
      ['no generation (treated as 1)', withMeta(lws, { generation: undefined }), 'lws/c1/default/demo/reconcile/1'],
      ['being deleted', deleting(lws), undefined],
      ['being deleted (Date timestamp)', withMeta(lws, { deletionTimestamp: new Date(DELETED_AT) }), undefined],
      ['no namespace', withMeta(lws, { namespace: undefined }), undefined],
      ['no name', withMeta(lws, { name: undefined }), undefined],
    ];
    for (const [what, l, id] of cases) {
      it(`${what}: ${id ?? 'nothing'}`, () => assert.equal(reconcileAction(C, l, 'test')?.workflowId, id));
    }
  });

  // [what, the action, its kind]: the reconcile of the LWS's generation, told of a change; a deleted LWS's run is
  // only signalled (never started again).
  const reconcileCases: [string, () => StartAction | undefined, StartAction['kind']][] = [
    ['reconcileAction: signal-with-start', () => reconcileAction(C, lws, 'why'), 'signal-with-start'],
    ['reconcileEndAction, the LWS being deleted: signal', () => reconcileEndAction(C, deleting(lws), 'why'), 'signal'],
    ['reconcileEndAction, the LWS gone: signal', () => reconcileEndAction(C, lws, 'why'), 'signal'],
  ];
  for (const [what, act, kind] of reconcileCases) {
    it(`${what} reconcileLeaderWorkerSet with the ref and generation`, () => {
      assert.deepEqual(act(), {
        kind,
        lifecycle: 'reconcile',
        workflowType: 'reconcileLeaderWorkerSet',
        workflowId: 'lws/c1/default/demo/reconcile/3',
        summary: 'reconcile default/demo at generation 3',
        ref,
        args: [{ ref, generation: 3 }],
        reason: 'why',
      });
    });
  }

  it('reconcileEndAction: nothing for an LWS without a name', () => {
    assert.equal(reconcileEndAction(C, withMeta(lws, { name: undefined }), 'x'), undefined);
  });

  describe('determinism (a restarted trigger starts nothing new)', () => {
    const owners = { 'sts-0': leader(0), 'sts-1': leader(1) };
    const world: World = { lws, stsOwners: owners, started: ['leader-0'] };
    const pods: PodFacts[] = [
      leader(0),
      leader(1, { restartCount: 1 }),
      leader(2, { ...TERMINATING }),
      leader(0, { name: 'demo-0', uid: 'leader-0-old', ...TERMINATING }),
      worker(0, 1),
      worker(0, 2, { restartCount: 2 }),
      worker(0, 3, { ...TERMINATING }),
      worker(1, 3, { ...TERMINATING }),
    ];
    const ids = (know: Knowledge) => pods.flatMap((p) => podActions(C, p, know, true)).map((a) => a.workflowId);

    it('gives the same workflow IDs for the same input, from a fresh copy of the knowledge', () => {
      const first = ids(fakeKnowledge(world));
      const again = ids(fakeKnowledge(structuredClone(world)));
      assert.ok(first.length > 0);
      assert.deepEqual(again, first);
      assert.deepEqual(
        pods.flatMap((p) => podActions(C, structuredClone(p), fakeKnowledge(world), true)).map((a) => a.workflowId),
        first,
      );
    });

    it('gives the same IDs whatever the order the pods are seen in', () => {
      const know = fakeKnowledge(world);
      const backward = [...pods].reverse().flatMap((p) => podActions(C, p, know, true));
      assert.deepEqual(new Set(backward.map((a) => a.workflowId)), new Set(ids(know)));
    });

    it('gives a leader the same provision ID on every update of that pod (readiness, restarts)', () => {
      const seen = [leader(1, { ready: false }), leader(1), leader(1, { restartCount: 5 })].map(
        (p) =>
          podActions(C, p, fakeKnowledge(world), false).find((a) => a.workflowType === 'provisionGroup')?.workflowId,
      );
      assert.deepEqual(seen, Array(3).fill('lws/c1/default/demo/group-1/provision/leader-1'));
    });

    it('gives every restarted or deleted pod of one group incarnation the same recreate ID', () => {
      const group0 = [
        leader(0, { restartCount: 1 }),
        worker(0, 1, { restartCount: 1 }),
        worker(0, 2, { restartCount: 7 }),
        worker(0, 3, { ...TERMINATING }),
      ];
      const recreates = group0.flatMap((p) =>
        podActions(C, p, fakeKnowledge(world), false).filter((a) => a.workflowType === 'recreateGroup'),
      );
      assert.equal(recreates.length, group0.length);
      assert.deepEqual(
        new Set(recreates.map((a) => a.workflowId)),
        new Set(['lws/c1/default/demo/group-0/recreate/leader-0']),
      );
    });

    it('gives a new incarnation of a group (new leader uid) new provision and recreate IDs', () => {
      const old = podActions(C, leader(0, { restartCount: 1 }), fakeKnowledge(world), false).map((a) => a.workflowId);
      const fresh = podActions(C, leader(0, { uid: 'leader-0-new', restartCount: 1 }), fakeKnowledge(world), false).map(
        (a) => a.workflowId,
      );
      assert.equal(old.length, 2);
      assert.equal(fresh.length, 2);
      for (const id of fresh) assert.ok(!old.includes(id), `${id} reused`);
    });

    it("puts the trigger's cluster in every ID: the same LWS on another cluster meets none of them", () => {
      const pod = leader(1);
      const here = [reconcileAction(C, lws, 'a'), ...podActions(C, pod, fakeKnowledge({ lws }), false)];
      const there = [reconcileAction('c2', lws, 'a'), ...podActions('c2', pod, fakeKnowledge({ lws }), false)];
      assert.ok(here.length >= 2);
      assert.equal(here.length, there.length);
      for (const [i, a] of here.entries()) {
        assert.match(a!.workflowId, /^lws\/c1\/default\/demo\//);
        assert.equal(there[i]!.workflowId, a!.workflowId.replace('lws/c1/', 'lws/c2/'));
      }
    });

    it('gives the same reconcile ID for the same generation and a new one for the next', () => {
      assert.equal(reconcileAction(C, structuredClone(lws), 'a')?.workflowId, reconcileAction(C, lws, 'b')?.workflowId);
      assert.notEqual(
        reconcileAction(C, withMeta(lws, { generation: 4 }), 'a')?.workflowId,
        reconcileAction(C, lws, 'a')?.workflowId,
      );
    });

    // Under RecreateGroupAfterStart a restart before the group fully started is ignored; it must not use up the ID
    // of a later restart, which has to recreate the group.
    it('gives a restart after the group started a different recreate ID than one before (RecreateGroupAfterStart)', () => {
      const pod = worker(0, 1, { restartCount: 1 });
      const before = podActions(C, pod, fakeKnowledge({ lws, stsOwners: owners, started: [] }), false);
      const after = podActions(
        C,
        worker(0, 1, { restartCount: 2 }),
        fakeKnowledge({ lws, stsOwners: owners, started: ['leader-0'] }),
        false,
      );
      assert.notEqual(after[0]?.workflowId, before[0]?.workflowId);
    });
  });
});
