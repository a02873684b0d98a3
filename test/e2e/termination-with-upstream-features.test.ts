import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import type { LeaderWorkerSet, PodTerminationPolicy } from '../../src/model/index.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { useControllerSuite } from '../fixtures/controller-suite.js';
import type { PodRecorder } from '../fixtures/pod-recorder.js';

/**
 * spec.podTerminationPolicy once more, with a manifest that uses upstream's placement and storage features at once:
 * subgroups, exclusive placement (one group per fake node) and volume claims deleted with their pods. None of them
 * may change the order or the duration of a teardown. The plain manifest's cases are in termination.test.ts.
 */
const G = 5; // terminationGracePeriodSeconds
const GMS = G * 1000;
const TOPOLOGY = 'kubernetes.io/hostname';

function featureLws(name: string, policy: PodTerminationPolicy, replicas: number): LeaderWorkerSet {
  const template = (role: string) => ({
    spec: {
      terminationGracePeriodSeconds: G,
      containers: [{ name: role, image: 'registry.invalid/ai:1', volumeMounts: [{ name: 'cache', mountPath: '/c' }] }],
    },
  });
  return {
    apiVersion: 'leaderworkerset.x-k8s.io/v1',
    kind: 'LeaderWorkerSet',
    metadata: {
      name,
      // Not subgroup-exclusive on the same key: one node per subgroup and one per group cannot both hold.
      annotations: { 'leaderworkerset.sigs.k8s.io/exclusive-topology': TOPOLOGY },
    },
    spec: {
      podTerminationPolicy: policy,
      replicas,
      leaderWorkerTemplate: {
        size: 4,
        subGroupPolicy: { subGroupSize: 2 },
        leaderTemplate: template('leader'),
        workerTemplate: template('worker'),
        volumeClaimTemplates: [
          {
            metadata: { name: 'cache' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
          },
        ],
        persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' },
      },
    },
  };
}

describe('controller: pod termination policy with subgroups, exclusive placement and volume claims', function () {
  this.timeout(300_000);
  const suite = useControllerSuite('e2e-features', { recordPods: true });

  const groupPods = (pods: k8s.V1Pod[], name: string, i: number) =>
    pods.filter((p) => p.metadata!.name === `${name}-${i}` || p.metadata!.name!.startsWith(`${name}-${i}-`));

  async function groupGone(pods: k8s.V1Pod[]) {
    const uids = pods.map((p) => p.metadata!.uid!);
    await waitFor(
      'the old group to be gone',
      async () => (uids.every((u) => suite.recorder.byUid(u)?.goneAt) ? true : undefined),
      {
        timeoutMs: 6 * GMS,
        intervalMs: 100,
      },
    );
    return uids.map((u) => suite.recorder.byUid(u)!);
  }

  function split(records: ReturnType<PodRecorder['byUid']>[], leaderName: string) {
    const leader = records.find((r) => r!.name === leaderName)!;
    return { leader, workers: records.filter((r) => r!.name !== leaderName).map((r) => r!) };
  }

  async function claims(prefix: string): Promise<string[]> {
    const list = await suite.lws.core.listNamespacedPersistentVolumeClaim({ namespace: suite.namespace });
    return list.items
      .map((c) => c.metadata!)
      .filter((m) => !m.deletionTimestamp && (m.name === `cache-${prefix}` || m.name!.startsWith(`cache-${prefix}-`)))
      .map((m) => m.name!)
      .sort();
  }

  it('the groups come up with subgroup labels, one group per node, and a bound claim per pod', async () => {
    await suite.lws.create(featureLws('par', 'Parallel', 2));
    const pods = await suite.lws.waitForGroups('par', 2, 4, 180_000);
    for (const p of pods) {
      const labels = p.metadata!.labels!;
      const worker = Number(labels['leaderworkerset.sigs.k8s.io/worker-index']);
      // size 4, subgroups of 2: {0, 1} and {2, 3}.
      assert.equal(
        labels['leaderworkerset.sigs.k8s.io/subgroup-index'],
        String(Math.floor(worker / 2)),
        p.metadata!.name,
      );
      assert.match(labels['leaderworkerset.sigs.k8s.io/subgroup-key'] ?? '', /^[0-9a-f]{40}$/);
    }
    const nodes = (i: number) => new Set(groupPods(pods, 'par', i).map((p) => p.spec!.nodeName));
    assert.equal(nodes(0).size, 1, 'group 0 on one node');
    assert.equal(nodes(1).size, 1, 'group 1 on one node');
    assert.notDeepEqual([...nodes(0)], [...nodes(1)], 'each group has its node to itself');
    const terms = pods.find((p) => p.metadata!.name === 'par-0')!.spec!.affinity!.podAntiAffinity!
      .requiredDuringSchedulingIgnoredDuringExecution!;
    assert.ok(terms.some((t) => t.topologyKey === TOPOLOGY));
    await waitFor(
      'a Bound claim for each of the 8 pods',
      async () => {
        const list = await suite.lws.core.listNamespacedPersistentVolumeClaim({ namespace: suite.namespace });
        const bound = list.items.filter(
          (c) => c.status?.phase === 'Bound' && c.metadata!.name!.startsWith('cache-par-'),
        );
        return bound.length === 8 ? true : undefined;
      },
      { timeoutMs: 60_000 },
    );
  });

  it('Parallel: leader and workers terminate together; teardown about 1 x grace; the group comes back', async () => {
    const pods = await suite.lws.waitForGroups('par', 2, 4);
    const t0 = Date.now();
    await suite.lws.core.deleteNamespacedPod({ name: 'par-0', namespace: suite.namespace });
    const { leader, workers } = split(await groupGone(groupPods(pods, 'par', 0)), 'par-0');
    for (const w of workers) {
      assert.ok(w.terminatingAt! - leader.terminatingAt! < 1000, `${w.name} started late`);
    }
    const teardown = Math.max(leader.goneAt!, ...workers.map((w) => w.goneAt!)) - t0;
    assert.ok(teardown >= 0.9 * GMS && teardown < 1.8 * GMS, `Parallel teardown took ${teardown} ms`);
    await suite.lws.waitForGroups('par', 2, 4, 120_000);
  });

  it('scale-down 2 -> 1 under Parallel: about 1 x grace, and group 1 claims go (whenScaled: Delete)', async () => {
    const pods = await suite.lws.waitForGroups('par', 2, 4);
    const t0 = Date.now();
    await suite.lws.patchSpec('par', { replicas: 1 });
    const { leader, workers } = split(await groupGone(groupPods(pods, 'par', 1)), 'par-1');
    for (const w of workers) assert.ok(w.terminatingAt! - leader.terminatingAt! < 1000);
    const teardown = Math.max(leader.goneAt!, ...workers.map((w) => w.goneAt!)) - t0;
    assert.ok(teardown < 1.8 * GMS, `scale-down teardown took ${teardown} ms`);
    await waitFor('the claims of group 1 gone', async () => ((await claims('par-1')).length === 0 ? true : undefined), {
      timeoutMs: 60_000,
    });
    assert.equal((await claims('par-0')).length, 4, 'group 0 keeps its claims');
  });

  it('Sequential: workers terminate only once the leader is gone; teardown about 2 x grace', async () => {
    // The Parallel LWS holds one of the three fake nodes; this one takes another.
    await suite.lws.create(featureLws('seq', 'Sequential', 1));
    const pods = await suite.lws.waitForGroups('seq', 1, 4, 180_000);
    const t0 = Date.now();
    await suite.lws.core.deleteNamespacedPod({ name: 'seq-0', namespace: suite.namespace });
    const { leader, workers } = split(await groupGone(groupPods(pods, 'seq', 0)), 'seq-0');
    for (const w of workers)
      assert.ok(w.terminatingAt! >= leader.goneAt!, `${w.name} terminated before its leader was gone`);
    const teardown = Math.max(...workers.map((w) => w.goneAt!)) - t0;
    assert.ok(teardown >= 1.8 * GMS && teardown < 3.2 * GMS, `Sequential teardown took ${teardown} ms`);
    await suite.lws.waitForGroups('seq', 1, 4, 120_000);
  });

  for (const [name, low, high] of [
    ['par', 0.9, 1.8],
    ['seq', 1.8, 3.2],
  ] as const) {
    it(`deleting the ${name === 'par' ? 'Parallel' : 'Sequential'} LWS takes about ${name === 'par' ? 1 : 2} x grace and deletes its claims (whenDeleted: Delete)`, async () => {
      const pods = await suite.lws.pods(name);
      const t0 = Date.now();
      await suite.lws.delete(name, 'Background');
      const records = await groupGone(pods);
      const teardown = Math.max(...records.map((r) => r.goneAt!)) - t0;
      assert.ok(teardown >= low * GMS && teardown < high * GMS, `LWS deletion took ${teardown} ms`);
      await waitFor('no claim left', async () => ((await claims(name)).length === 0 ? true : undefined), {
        timeoutMs: 60_000,
      });
    });
  }
});
