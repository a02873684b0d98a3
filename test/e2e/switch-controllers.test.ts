import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import {
  ANNOTATION_ADOPTED_REVISION,
  ANNOTATION_APPLIED_HASH,
  LABEL_NAME,
  LABEL_TEMPLATE_REVISION_HASH,
  type LeaderWorkerSet,
} from '../../src/model/index.js';
import { localKubeConfig } from '../../src/stack/cluster.js';
import { waitFor } from '../../src/stack/processes.js';
import { cleanUpUpstreamLws, startUpstreamLws, type UpstreamLws } from '../../src/stack/upstream-lws.js';
import { versions } from '../../src/stack/versions.js';
import { ensureCluster } from '../fixtures/cluster.js';
import { startController, type Controller } from '../fixtures/controller.js';
import { LwsClient } from '../fixtures/lws.js';
import { createTestNamespace, deleteTestNamespace } from '../fixtures/namespace.js';

/**
 * A switch between upstream's controller and this one, both ways, as README "Coming from upstream" makes it: upstream
 * runs five LWSes, this project takes them over, rebuilds one group under Parallel, and upstream takes them back. At
 * neither switch may a pod or a StatefulSet be made again: each would restart a model server.
 */
const G = 2; // terminationGracePeriodSeconds
const TOPOLOGY = 'kubernetes.io/hostname';

interface Kind {
  replicas: number;
  size: number;
  lws: LeaderWorkerSet;
}

function lwsOf(name: string, replicas: number, size: number, extra: (lws: LeaderWorkerSet) => void = () => {}): Kind {
  const template = (role: string) => ({
    spec: { terminationGracePeriodSeconds: G, containers: [{ name: role, image: 'registry.invalid/ai:1' }] },
  });
  // No podTerminationPolicy: upstream's v0.9.0 CRD has no such field.
  const lws = {
    apiVersion: 'leaderworkerset.x-k8s.io/v1',
    kind: 'LeaderWorkerSet',
    metadata: { name },
    spec: {
      replicas,
      leaderWorkerTemplate: { size, leaderTemplate: template('leader'), workerTemplate: template('worker') },
    },
  } as LeaderWorkerSet;
  extra(lws);
  return { replicas, size, lws };
}

const KINDS: Kind[] = [
  // First, alone: its group takes a node to itself, which the groups created after it then avoid.
  lwsOf(
    'exclusive',
    1,
    2,
    (l) => (l.metadata.annotations = { 'leaderworkerset.sigs.k8s.io/exclusive-topology': TOPOLOGY }),
  ),
  lwsOf('plain', 2, 3),
  lwsOf('subgroups', 2, 4, (l) => (l.spec.leaderWorkerTemplate.subGroupPolicy = { subGroupSize: 2 })),
  lwsOf('claims', 2, 2, (l) => {
    const lwt = l.spec.leaderWorkerTemplate;
    for (const t of [lwt.leaderTemplate!, lwt.workerTemplate]) {
      t.spec!.containers[0]!.volumeMounts = [{ name: 'cache', mountPath: '/cache' }];
    }
    lwt.volumeClaimTemplates = [
      {
        metadata: { name: 'cache' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    ];
  }),
  lwsOf('unique', 2, 2, (l) => (l.spec.networkConfig = { subdomainPolicy: 'UniquePerReplica' })),
];

/** Every pod and StatefulSet of the LWSes, by name: its uid. */
type Snapshot = Record<string, string>;

describe(`switching between upstream LeaderWorkerSet v${versions.lwsUpstream} and this controller, both ways`, function () {
  this.timeout(300_000);
  let kc: k8s.KubeConfig;
  let namespace: string;
  let lws: LwsClient;
  let upstream: UpstreamLws | undefined;
  let controller: Controller | undefined;
  let seen: Snapshot;
  let keys: Record<string, string>;

  before(async function () {
    this.timeout(300_000);
    await ensureCluster();
    kc = localKubeConfig();
    namespace = await createTestNamespace(kc, 'e2e-switch');
    lws = new LwsClient(kc, namespace);
  });

  after(async function () {
    this.timeout(300_000);
    await controller?.stop();
    // Upstream's stop deletes the LWSes and puts our CRD and webhooks back; undone too if a test failed half-way.
    await upstream?.stop().catch(() => undefined);
    await cleanUpUpstreamLws({ kc });
    await deleteTestNamespace(kc, namespace);
  });

  async function snapshot(): Promise<Snapshot> {
    const [pods, sets] = await Promise.all([
      lws.core.listNamespacedPod({ namespace, labelSelector: LABEL_NAME }),
      lws.apps.listNamespacedStatefulSet({ namespace }),
    ]);
    return Object.fromEntries([
      ...pods.items
        .filter((p) => !p.metadata?.deletionTimestamp)
        .map((p) => [`pod/${p.metadata!.name}`, p.metadata!.uid!]),
      ...sets.items.map((s) => [`sts/${s.metadata!.name}`, s.metadata!.uid!]),
    ]);
  }

  async function allReady(): Promise<void> {
    for (const k of KINDS) await lws.waitForGroups(k.lws.metadata.name!, k.replicas, k.size, 180_000);
  }

  /** What a change to a template would have done by now: the StatefulSet controller replaces pods within a second. */
  const settle = () => new Promise((r) => setTimeout(r, 5_000));

  it('upstream runs five LWSes: plain, subgroups, exclusive placement, volume claims, UniquePerReplica', async () => {
    upstream = await startUpstreamLws({ kc });
    const [first, ...rest] = KINDS;
    await lws.create(first!.lws);
    await lws.waitForGroups(first!.lws.metadata.name!, first!.replicas, first!.size, 120_000);
    for (const k of rest) await lws.create(k.lws);
    await allReady();
    seen = await snapshot();
    keys = {};
    for (const k of KINDS) {
      const sts = (await lws.statefulSet(k.lws.metadata.name!))!;
      keys[k.lws.metadata.name!] = sts.metadata!.labels![LABEL_TEMPLATE_REVISION_HASH]!;
    }
    // A leader StatefulSet per LWS, a worker StatefulSet per group, and every pod.
    const wanted = KINDS.reduce((n, k) => n + 1 + k.replicas + k.replicas * k.size, 0);
    assert.equal(Object.keys(seen).length, wanted, JSON.stringify(seen));
  });

  it("this controller takes over: it keeps upstream's revision keys and recreates no pod or StatefulSet", async () => {
    await upstream!.stop({ keepLws: true });
    upstream = undefined;
    controller = await startController();
    // Each LWS reconciled: its leader StatefulSet written, or taken as it is, by this controller.
    for (const k of KINDS) {
      const name = k.lws.metadata.name!;
      await waitFor(
        `${name}: its leader StatefulSet taken over`,
        async () =>
          (await lws.statefulSet(name))?.metadata?.annotations?.[ANNOTATION_APPLIED_HASH] ? true : undefined,
        { timeoutMs: 60_000 },
      );
    }
    await settle();
    await allReady();
    assert.deepEqual(await snapshot(), seen, 'the same pods and StatefulSets');
    for (const k of KINDS) {
      const name = k.lws.metadata.name!;
      const [now, sts] = await Promise.all([lws.get(name), lws.statefulSet(name)]);
      assert.equal(sts?.metadata?.labels?.[LABEL_TEMPLATE_REVISION_HASH], keys[name], `${name}: its key`);
      assert.match(now?.metadata.annotations?.[ANNOTATION_ADOPTED_REVISION] ?? '', new RegExp(`:${keys[name]}$`));
      assert.equal(now?.status?.updatedReplicas, k.replicas, `${name}: every group counts as up to date`);
    }
  });

  it('a Parallel rebuild under this controller rebuilds only its own group', async () => {
    await lws.patchSpec('plain', { podTerminationPolicy: 'Parallel' });
    await waitFor(
      'the policy on the leaders',
      async () =>
        (await lws.pod('plain-0'))?.metadata?.annotations?.['leaderworkerset.sigs.k8s.io/pod-termination-policy'] ===
        'Parallel'
          ? true
          : undefined,
      { timeoutMs: 30_000 },
    );
    await lws.core.deleteNamespacedPod({ namespace, name: 'plain-0' });
    await waitFor(
      'group 0 of plain rebuilt',
      async () => {
        const leader = await lws.pod('plain-0');
        return leader && leader.metadata?.uid !== seen['pod/plain-0'] ? true : undefined;
      },
      { timeoutMs: 60_000 },
    );
    await allReady();
    const after = await snapshot();
    const group0 = ['pod/plain-0', 'pod/plain-0-1', 'pod/plain-0-2', 'sts/plain-0'];
    for (const [name, uid] of Object.entries(seen)) {
      if (group0.includes(name)) assert.notEqual(after[name], uid, `${name} rebuilt`);
      else assert.equal(after[name], uid, `${name} untouched`);
    }
    seen = after;
  });

  it('a template change under this controller rolls that LWS onto a revision written here', async () => {
    const changed = structuredClone(KINDS.find((k) => k.lws.metadata.name === 'claims')!.lws.spec);
    changed.leaderWorkerTemplate.workerTemplate.spec!.containers[0]!.image = 'registry.invalid/ai:2';
    changed.leaderWorkerTemplate.leaderTemplate!.spec!.containers[0]!.image = 'registry.invalid/ai:2';
    await lws.patchSpec('claims', { leaderWorkerTemplate: changed.leaderWorkerTemplate });
    const key = await waitFor(
      'claims rolled onto a revision of ours',
      async () => {
        const [now, sts] = await Promise.all([lws.get('claims'), lws.statefulSet('claims')]);
        const current = sts?.metadata?.labels?.[LABEL_TEMPLATE_REVISION_HASH];
        const done = now?.status?.updatedReplicas === 2 && now.status.readyReplicas === 2;
        return done && current !== keys['claims'] ? current : undefined;
      },
      { timeoutMs: 120_000 },
    );
    assert.match(key, /^[0-9a-f]{8}$/, 'our own key');
    keys['claims'] = key;
    const revisions = await lws.apps.listNamespacedControllerRevision({
      namespace,
      labelSelector: `${LABEL_NAME}=claims`,
    });
    assert.ok(
      revisions.items.some((r) => r.metadata?.labels?.[LABEL_TEMPLATE_REVISION_HASH] === key),
      'a revision written here',
    );
    await allReady();
    seen = await snapshot();
  });

  it('upstream takes back over: it accepts the revisions written here and recreates no pod or StatefulSet', async () => {
    await controller!.stop();
    controller = undefined;
    upstream = await startUpstreamLws({ kc, keepLws: true });
    // Upstream reconciles each LWS and each leader pod once it starts.
    await waitFor(
      "upstream's controllers to reconcile every LWS and leader pod",
      async () => {
        const text = await upstream!.metrics();
        const total = (controller: string) =>
          [
            ...text.matchAll(
              new RegExp(
                `^controller_runtime_reconcile_total\\{controller="${controller}",result="success"\\} (\\d+)`,
                'gm',
              ),
            ),
          ]
            .map((m) => Number(m[1]))
            .reduce((a, b) => a + b, 0);
        return total('leaderworkerset') >= KINDS.length && total('pod') >= 9 ? true : undefined;
      },
      { timeoutMs: 60_000 },
    );
    await settle();
    await allReady();
    assert.deepEqual(await snapshot(), seen, 'the same pods and StatefulSets');
    for (const k of KINDS) {
      const name = k.lws.metadata.name!;
      const status = (await lws.get(name))!.status;
      const available = status?.conditions?.find((c) => c.type === 'Available');
      assert.equal(available?.status, 'True', `${name}: Available under upstream`);
      const sts = await lws.statefulSet(name);
      assert.equal(sts?.metadata?.labels?.[LABEL_TEMPLATE_REVISION_HASH], keys[name], `${name}: upstream kept the key`);
    }
  });
});
