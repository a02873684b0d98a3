import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import type { V1EnvVar, V1StatefulSet } from '@kubernetes/client-node';
import {
  buildGroupService,
  buildHeadlessService,
  buildLeaderStatefulSet,
  buildWorkerStatefulSet,
  leaderPodPatch,
  templateRevisionHash,
  type LeaderWorkerSet,
} from '../../src/model/index.js';
import { sampleLws } from './model-fixtures.js';

const leaderPod = { name: 'demo-1', uid: 'leader-uid-1' };
const groupKey = 'a'.repeat(40);

function envOf(sts: V1StatefulSet | undefined): V1EnvVar[] {
  return sts?.spec?.template.spec?.containers[0]?.env ?? [];
}

describe('model/templates', () => {
  describe('headless Service', () => {
    it('is named after the LWS, headless, publishes not-ready pods, owned by the LWS', () => {
      const svc = buildHeadlessService(sampleLws());
      assert.equal(svc?.metadata?.name, 'demo');
      assert.equal(svc?.metadata?.namespace, 'default');
      assert.equal(svc?.spec?.clusterIP, 'None');
      assert.equal(svc?.spec?.publishNotReadyAddresses, true);
      assert.deepEqual(svc?.spec?.selector, { 'leaderworkerset.sigs.k8s.io/name': 'demo' });
      assert.deepEqual(svc?.metadata?.ownerReferences, [
        {
          apiVersion: 'leaderworkerset.x-k8s.io/v1',
          kind: 'LeaderWorkerSet',
          name: 'demo',
          uid: 'lws-uid-1',
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
    });

    it('is not made under UniquePerReplica, where each group has its own Service (as upstream)', () => {
      const lws = sampleLws({ networkConfig: { subdomainPolicy: 'UniquePerReplica' } });
      assert.equal(buildHeadlessService(lws), undefined);
      const group = buildGroupService(lws, 1, leaderPod);
      assert.equal(group?.metadata?.name, 'demo-1');
      assert.equal(group?.metadata?.ownerReferences?.[0]?.uid, 'leader-uid-1');
      assert.deepEqual(group?.spec?.selector, {
        'leaderworkerset.sigs.k8s.io/name': 'demo',
        'leaderworkerset.sigs.k8s.io/group-index': '1',
      });
      assert.equal(buildGroupService(sampleLws(), 1, leaderPod), undefined);
    });

    it('needs the LWS uid', () => {
      const lws = sampleLws();
      delete lws.metadata.uid;
      assert.throws(() => buildHeadlessService(lws), /metadata.uid/);
    });
  });

  describe('leader StatefulSet', () => {
    const lws = sampleLws();
    const sts = buildLeaderStatefulSet(lws);
    const template = sts.spec?.template;

    it('follows the upstream object graph', () => {
      assert.equal(sts.metadata?.name, 'demo');
      assert.equal(sts.spec?.serviceName, 'demo');
      assert.equal(sts.spec?.podManagementPolicy, 'Parallel');
      assert.equal(sts.spec?.replicas, 2);
      assert.deepEqual(sts.spec?.selector.matchLabels, {
        'leaderworkerset.sigs.k8s.io/name': 'demo',
        'leaderworkerset.sigs.k8s.io/worker-index': '0',
      });
      const owner = sts.metadata?.ownerReferences?.[0];
      assert.deepEqual(
        [owner?.kind, owner?.uid, owner?.controller, owner?.blockOwnerDeletion],
        ['LeaderWorkerSet', 'lws-uid-1', true, true],
      );
    });

    it('labels and annotates the leader pod template, whose labels match the selector', () => {
      assert.deepEqual(template?.metadata?.labels, {
        'leaderworkerset.sigs.k8s.io/name': 'demo',
        'leaderworkerset.sigs.k8s.io/worker-index': '0',
        'leaderworkerset.sigs.k8s.io/template-revision-hash': templateRevisionHash(lws.spec),
      });
      assert.deepEqual(template?.metadata?.annotations, {
        'leaderworkerset.sigs.k8s.io/size': '4',
      });
      const labels: Record<string, string> = template?.metadata?.labels ?? {};
      for (const [k, v] of Object.entries(sts.spec?.selector.matchLabels ?? {})) {
        assert.equal(labels[k], v);
      }
    });

    it('keeps the termination policy out of the template, so switching it rolls no group', () => {
      const seq = buildLeaderStatefulSet(sampleLws({ podTerminationPolicy: 'Sequential' }));
      assert.deepEqual(seq.spec?.template, sts.spec?.template);
    });

    it('patches a live leader pod with its group index, group key and the policy', () => {
      assert.deepEqual(leaderPodPatch({ groupIndex: 2, groupKey: 'abc', podTerminationPolicy: 'Parallel' }), {
        metadata: {
          labels: { 'leaderworkerset.sigs.k8s.io/group-index': '2', 'leaderworkerset.sigs.k8s.io/group-key': 'abc' },
          annotations: { 'leaderworkerset.sigs.k8s.io/pod-termination-policy': 'Parallel' },
        },
      });
    });

    it('uses the leader template, or the worker template when there is none', () => {
      assert.equal(template?.spec?.containers[0]?.name, 'leader');
      const noLeader = sampleLws();
      delete noLeader.spec.leaderWorkerTemplate.leaderTemplate;
      assert.equal(buildLeaderStatefulSet(noLeader).spec?.template.spec?.containers[0]?.name, 'worker');
    });

    it('gives the leader the LWS env vars, group index from the pod-index label', () => {
      assert.deepEqual(envOf(sts), [
        {
          name: 'LWS_GROUP_INDEX',
          valueFrom: { fieldRef: { fieldPath: "metadata.labels['apps.kubernetes.io/pod-index']" } },
        },
        { name: 'LWS_LEADER_ADDRESS', value: 'demo-$(LWS_GROUP_INDEX).demo.default' },
        { name: 'LWS_GROUP_SIZE', value: '4' },
        { name: 'LWS_WORKER_INDEX', value: '0' },
      ]);
    });

    it("keeps the user's template labels and does not touch the LWS", () => {
      const withLabels: LeaderWorkerSet = sampleLws();
      withLabels.spec.leaderWorkerTemplate.leaderTemplate!.metadata = { labels: { app: 'x' }, annotations: { a: 'b' } };
      const before = JSON.stringify(withLabels);
      const out = buildLeaderStatefulSet(withLabels).spec?.template.metadata;
      assert.equal(out?.labels?.['app'], 'x');
      assert.equal(out?.annotations?.['a'], 'b');
      assert.equal(JSON.stringify(withLabels), before);
    });

    it('takes replicas, partition and hash overrides and defaults them from the spec', () => {
      const custom = buildLeaderStatefulSet(lws, { replicas: 3, partition: 1, revisionHash: 'abc' });
      assert.equal(custom.spec?.replicas, 3);
      assert.equal(custom.spec?.updateStrategy?.rollingUpdate?.partition, 1);
      assert.equal(
        custom.spec?.template.metadata?.labels?.['leaderworkerset.sigs.k8s.io/template-revision-hash'],
        'abc',
      );
      assert.deepEqual(sts.spec?.updateStrategy, {
        type: 'RollingUpdate',
        rollingUpdate: { partition: 0, maxUnavailable: 1 },
      });
    });

    it('annotates the subdomain policy under UniquePerReplica', () => {
      const upr = buildLeaderStatefulSet(sampleLws({ networkConfig: { subdomainPolicy: 'UniquePerReplica' } }));
      assert.equal(
        upr.spec?.template.metadata?.annotations?.['leaderworkerset.sigs.k8s.io/subdomainPolicy'],
        'UniquePerReplica',
      );
      assert.equal(upr.spec?.serviceName, 'demo');
    });
  });

  describe('worker StatefulSet', () => {
    const lws = sampleLws();
    const sts = buildWorkerStatefulSet(lws, { groupIndex: 1, leaderPod, groupKey });
    const selector = {
      'leaderworkerset.sigs.k8s.io/name': 'demo',
      'leaderworkerset.sigs.k8s.io/group-index': '1',
      'leaderworkerset.sigs.k8s.io/group-key': groupKey,
    };

    it('is named after the leader pod, size-1 replicas from ordinal 1', () => {
      assert.equal(sts?.metadata?.name, 'demo-1');
      assert.equal(sts?.spec?.replicas, 3);
      assert.deepEqual(sts?.spec?.ordinals, { start: 1 });
      assert.equal(sts?.spec?.serviceName, 'demo');
      assert.equal(sts?.spec?.podManagementPolicy, 'Parallel');
      assert.deepEqual(sts?.spec?.selector.matchLabels, selector);
    });

    it('is owned by the leader pod (controller, blockOwnerDeletion), not the LWS', () => {
      assert.deepEqual(sts?.metadata?.ownerReferences, [
        {
          apiVersion: 'v1',
          kind: 'Pod',
          name: 'demo-1',
          uid: 'leader-uid-1',
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
    });

    it('labels and annotates the worker template, whose labels match the selector', () => {
      assert.deepEqual(sts?.spec?.template.metadata?.labels, {
        ...selector,
        'leaderworkerset.sigs.k8s.io/template-revision-hash': templateRevisionHash(lws.spec),
      });
      assert.deepEqual(sts?.spec?.template.metadata?.annotations, {
        'leaderworkerset.sigs.k8s.io/size': '4',
        'leaderworkerset.sigs.k8s.io/leader-name': 'demo-1',
      });
      assert.equal(sts?.spec?.template.spec?.containers[0]?.name, 'worker');
    });

    it("uses the leader's revision hash when given", () => {
      const s = buildWorkerStatefulSet(lws, { groupIndex: 1, leaderPod, groupKey, revisionHash: 'old' });
      assert.equal(s?.spec?.template.metadata?.labels?.['leaderworkerset.sigs.k8s.io/template-revision-hash'], 'old');
    });

    it('gives the workers the LWS env vars, worker index from the pod-index label', () => {
      assert.deepEqual(envOf(sts), [
        { name: 'LWS_GROUP_INDEX', value: '1' },
        { name: 'LWS_LEADER_ADDRESS', value: 'demo-1.demo.default' },
        { name: 'LWS_GROUP_SIZE', value: '4' },
        {
          name: 'LWS_WORKER_INDEX',
          valueFrom: { fieldRef: { fieldPath: "metadata.labels['apps.kubernetes.io/pod-index']" } },
        },
      ]);
    });

    it('uses the per-group Service under UniquePerReplica, and the leader address under it (as upstream)', () => {
      const s = buildWorkerStatefulSet(sampleLws({ networkConfig: { subdomainPolicy: 'UniquePerReplica' } }), {
        groupIndex: 1,
        leaderPod,
        groupKey,
      });
      assert.equal(s?.spec?.serviceName, 'demo-1');
      assert.equal(envOf(s).find((e) => e.name === 'LWS_LEADER_ADDRESS')?.value, 'demo-1.demo-1.default');
      const leaders = buildLeaderStatefulSet(sampleLws({ networkConfig: { subdomainPolicy: 'UniquePerReplica' } }));
      assert.equal(
        envOf(leaders).find((e) => e.name === 'LWS_LEADER_ADDRESS')?.value,
        'demo-$(LWS_GROUP_INDEX).demo-$(LWS_GROUP_INDEX).default',
      );
    });

    it('does not exist for size 1 (a group is then its leader alone)', () => {
      const single = sampleLws();
      single.spec.leaderWorkerTemplate.size = 1;
      assert.equal(
        buildWorkerStatefulSet(single, { groupIndex: 0, leaderPod: { name: 'demo-0', uid: 'u' }, groupKey }),
        undefined,
      );
    });

    it('refuses a leader pod of another group, or one without uid or group key', () => {
      assert.throws(() => buildWorkerStatefulSet(lws, { groupIndex: 2, leaderPod, groupKey }), /must be named demo-2/);
      assert.throws(
        () => buildWorkerStatefulSet(lws, { groupIndex: 1, leaderPod: { name: 'demo-1', uid: '' }, groupKey }),
        /uid/,
      );
      assert.throws(() => buildWorkerStatefulSet(lws, { groupIndex: 1, leaderPod, groupKey: '' }), /group key/);
    });
  });

  describe('upstream v1 fields on both StatefulSets', () => {
    const claim = {
      metadata: { name: 'model-cache', labels: { dropped: 'yes' } },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: 'fast',
        resources: { requests: { storage: '10Gi' } },
        selector: { matchLabels: { dropped: 'yes' } },
      },
    };
    const builtClaim = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'model-cache', namespace: 'default' },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'fast', resources: { requests: { storage: '10Gi' } } },
    };
    const withLwt = (
      lwt: Partial<LeaderWorkerSet['spec']['leaderWorkerTemplate']>,
      meta: Partial<LeaderWorkerSet['metadata']> = {},
    ) => {
      const lws = sampleLws();
      lws.spec.leaderWorkerTemplate = { ...lws.spec.leaderWorkerTemplate, ...lwt };
      lws.metadata = { ...lws.metadata, ...meta };
      return lws;
    };
    const both = (lws: LeaderWorkerSet) => ({
      leader: buildLeaderStatefulSet(lws),
      worker: buildWorkerStatefulSet(lws, { groupIndex: 1, leaderPod, groupKey })!,
    });

    const rows: Array<{
      name: string;
      lws: LeaderWorkerSet;
      check: (s: { leader: V1StatefulSet; worker: V1StatefulSet }) => void;
    }> = [
      {
        name: 'volume claim templates keep only the fields upstream copies (name, namespace, access modes, class, mode, resources)',
        lws: withLwt({ volumeClaimTemplates: [claim] }),
        check: ({ leader, worker }) => {
          assert.deepEqual(leader.spec?.volumeClaimTemplates, [builtClaim]);
          assert.deepEqual(worker.spec?.volumeClaimTemplates, [builtClaim]);
        },
      },
      {
        name: 'the claim retention policy is copied as is',
        lws: withLwt({ persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' } }),
        check: ({ leader, worker }) => {
          const want = { whenDeleted: 'Delete', whenScaled: 'Retain' };
          assert.deepEqual(leader.spec?.persistentVolumeClaimRetentionPolicy, want);
          assert.deepEqual(worker.spec?.persistentVolumeClaimRetentionPolicy, want);
        },
      },
      {
        name: 'no claims: neither field is set',
        lws: sampleLws(),
        check: ({ leader, worker }) => {
          for (const s of [leader, worker]) {
            assert.equal(s.spec?.volumeClaimTemplates, undefined);
            assert.equal(s.spec?.persistentVolumeClaimRetentionPolicy, undefined);
          }
        },
      },
      {
        name: "the LWS's labels and annotations go onto both, ours win, and the leader's records spec.replicas",
        lws: withLwt(
          {},
          {
            labels: { team: 'infer', 'leaderworkerset.sigs.k8s.io/name': 'not-this' },
            annotations: { owner: 'alice' },
          },
        ),
        check: ({ leader, worker }) => {
          assert.equal(leader.metadata?.labels?.['team'], 'infer');
          assert.equal(leader.metadata?.labels?.['leaderworkerset.sigs.k8s.io/name'], 'demo');
          assert.deepEqual(leader.metadata?.annotations, {
            owner: 'alice',
            'leaderworkerset.sigs.k8s.io/replicas': '2',
          });
          assert.equal(worker.metadata?.labels?.['team'], 'infer');
          assert.equal(worker.metadata?.labels?.['leaderworkerset.sigs.k8s.io/group-index'], '1');
          assert.deepEqual(worker.metadata?.annotations, { owner: 'alice' });
          assert.equal(leader.spec?.template.metadata?.labels?.['team'], undefined, 'not onto the pods');
        },
      },
      {
        name: 'exclusive topology and the subgroup policy are told to every pod by annotations',
        lws: withLwt(
          { subGroupPolicy: { subGroupSize: 2 } },
          {
            annotations: {
              'leaderworkerset.sigs.k8s.io/exclusive-topology': 'cloud.google.com/gke-nodepool',
              'leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology': 'topology.kubernetes.io/zone',
            },
          },
        ),
        check: ({ leader, worker }) => {
          const want = {
            'leaderworkerset.sigs.k8s.io/size': '4',
            'leaderworkerset.sigs.k8s.io/exclusive-topology': 'cloud.google.com/gke-nodepool',
            'leaderworkerset.sigs.k8s.io/subgroup-policy-type': 'LeaderWorker',
            'leaderworkerset.sigs.k8s.io/subgroup-size': '2',
            'leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology': 'topology.kubernetes.io/zone',
          };
          assert.deepEqual(leader.spec?.template.metadata?.annotations, want);
          assert.deepEqual(worker.spec?.template.metadata?.annotations, {
            ...want,
            'leaderworkerset.sigs.k8s.io/leader-name': 'demo-1',
          });
        },
      },
      {
        name: 'subgroup exclusive topology without a subgroup policy is not passed on',
        lws: withLwt({}, { annotations: { 'leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology': 'zone' } }),
        check: ({ leader }) => {
          assert.deepEqual(leader.spec?.template.metadata?.annotations, { 'leaderworkerset.sigs.k8s.io/size': '4' });
        },
      },
    ];
    for (const row of rows) it(row.name, () => row.check(both(row.lws)));

    it("pins the workers to the leader's topology domain", () => {
      const sts = buildWorkerStatefulSet(sampleLws(), {
        groupIndex: 1,
        leaderPod,
        groupKey,
        topology: { key: 'cloud.google.com/gke-nodepool', value: 'pool-a' },
      });
      assert.deepEqual(sts?.spec?.template.spec?.nodeSelector, { 'cloud.google.com/gke-nodepool': 'pool-a' });
    });

    it('tells the workers when the leader template requests TPUs, and only then', () => {
      const tpu = { name: 'tpu', image: 'jax', resources: { limits: { 'google.com/tpu': '4' } } };
      const annotation = (lws: LeaderWorkerSet) =>
        buildWorkerStatefulSet(lws, { groupIndex: 1, leaderPod, groupKey })?.spec?.template.metadata?.annotations?.[
          'leaderworkerset.sigs.k8s.io/leader-requests-tpus'
        ];
      assert.equal(annotation(withLwt({ leaderTemplate: { spec: { containers: [tpu] } } })), 'true');
      const workerOnly = withLwt({ workerTemplate: { spec: { containers: [tpu] } } });
      assert.equal(annotation(workerOnly), undefined, 'the leader template requests none');
      delete workerOnly.spec.leaderWorkerTemplate.leaderTemplate;
      assert.equal(annotation(workerOnly), 'true', 'no leader template: the leader runs the worker template');
    });
  });
});
