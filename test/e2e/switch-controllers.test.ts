import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import {
  ANNOTATION_ADOPTED_REVISION,
  ANNOTATION_APPLIED_HASH,
  CRD_NAME,
  LABEL_GROUP_INDEX,
  LABEL_NAME,
  LABEL_WORKER_INDEX,
  LABEL_TEMPLATE_REVISION_HASH,
  type LeaderWorkerSet,
} from '../../src/model/index.js';
import { WEBHOOK_CONFIGURATION_NAME } from '../../tools/stack/admission.js';
import { localKubeConfig } from '../../tools/stack/cluster.js';
import { isAlive, waitFor } from '../../src/dev-server/processes.js';
import {
  cleanUpUpstreamLws,
  startUpstreamLws,
  UPSTREAM_WEBHOOK_CONFIGURATIONS,
  upstreamLwsDir,
  type UpstreamLws,
} from '../../tools/stack/upstream-lws.js';
import { versions } from '../../tools/stack/versions.js';
import { ensureCluster } from '../fixtures/cluster.js';
import { startController, type Controller } from '../fixtures/controller.js';
import { isReady, LwsClient } from '../fixtures/lws.js';
import { createTestNamespace, deleteTestNamespace } from '../fixtures/namespace.js';

/**
 * A switch between upstream's controller and this one, both ways, as docs/coming-from-upstream.md makes it: upstream
 * (out of cluster, with its own CRD and webhooks) runs five LWSes, this project takes them over, rebuilds one group
 * under Parallel, and upstream takes them back. At neither switch may a pod or a StatefulSet be made again: each would
 * restart a model server. Only one controller runs at a time, so every change seen is that controller's doing. A sixth
 * LWS is mid-rollout at each switch, so pods are made while the webhooks change hands.
 */
const G = 2; // terminationGracePeriodSeconds
const TOPOLOGY = 'kubernetes.io/hostname';
const P = 'leaderworkerset.sigs.k8s.io/';

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

/**
 * Rolled at each switch, in a namespace of its own: the StatefulSet controller keeps making its pods while neither
 * controller runs, and the next one must finish the rollout.
 */
const ROLLING = lwsOf('rolling', 3, 2);

/** Every pod and StatefulSet of the LWSes, by name: its uid. */
type Snapshot = Record<string, string>;

const envOf = (pod: k8s.V1Pod) => Object.fromEntries((pod.spec?.containers[0]?.env ?? []).map((e) => [e.name, e]));

describe(`switching between upstream LeaderWorkerSet v${versions.lwsUpstream} and this controller, both ways`, function () {
  this.timeout(300_000);
  let kc: k8s.KubeConfig;
  let namespace: string;
  let lws: LwsClient;
  let rollingNamespace: string;
  let rolling: LwsClient;
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
    rollingNamespace = await createTestNamespace(kc, 'e2e-switch-rolling');
    rolling = new LwsClient(kc, rollingNamespace);
  });

  after(async function () {
    this.timeout(300_000);
    await controller?.stop();
    // Upstream's stop deletes the LWSes and puts our CRD and webhooks back; undone too if a test failed half-way.
    await upstream?.stop().catch(() => undefined);
    await cleanUpUpstreamLws({ kc });
    await deleteTestNamespace(kc, namespace);
    await deleteTestNamespace(kc, rollingNamespace);
  });

  /** A new image for ROLLING's templates; resolves once the first pod of it exists, the rollout under way. */
  async function startRollout(image: string): Promise<void> {
    const spec = structuredClone(ROLLING.lws.spec);
    spec.leaderWorkerTemplate.leaderTemplate!.spec!.containers[0]!.image = image;
    spec.leaderWorkerTemplate.workerTemplate.spec!.containers[0]!.image = image;
    await rolling.patchSpec('rolling', { leaderWorkerTemplate: spec.leaderWorkerTemplate });
    await waitFor(
      `the first pod of rolling on ${image}`,
      async () =>
        (await rolling.pods('rolling')).some((p) => p.spec?.containers[0]?.image === image) ? true : undefined,
      { timeoutMs: 60_000, intervalMs: 100 },
    );
  }

  /**
   * ROLLING's rollout onto `image` finished: every group on it and Ready, each pod with its group and worker index
   * (upstream's reconcile stops at a pod without them), counted as updated in the status.
   */
  async function rolloutFinished(image: string): Promise<void> {
    const { replicas, size } = ROLLING;
    await waitFor(
      `rolling on ${image}, every group Ready`,
      async () => {
        const pods = (await rolling.pods('rolling')).filter((p) => !p.metadata?.deletionTimestamp);
        const status = (await rolling.get('rolling'))?.status;
        const done =
          pods.length === replicas * size &&
          pods.every((p) => p.spec?.containers[0]?.image === image && isReady(p)) &&
          status?.updatedReplicas === replicas &&
          status.readyReplicas === replicas;
        return done ? true : undefined;
      },
      { timeoutMs: 120_000 },
    );
    for (const pod of await rolling.pods('rolling')) {
      const [, group, worker] = /^rolling-(\d+)(?:-(\d+))?$/.exec(pod.metadata!.name!)!;
      assert.equal(pod.metadata?.labels?.[LABEL_GROUP_INDEX], group, `${pod.metadata?.name}: its group index`);
      assert.equal(
        pod.metadata?.labels?.[LABEL_WORKER_INDEX],
        worker ?? '0',
        `${pod.metadata?.name}: its worker index`,
      );
    }
  }

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

  /**
   * After a switch: every group Ready and no pod or StatefulSet made again. It waits first for what a change to a
   * template would have done by now: the StatefulSet controller replaces pods within a second.
   */
  async function nothingRecreated(): Promise<void> {
    await new Promise((r) => setTimeout(r, 5_000));
    await allReady();
    assert.deepEqual(await snapshot(), seen, 'the same pods and StatefulSets');
  }

  /** Rebuilds group `index` of `name` by deleting its leader; every other pod and StatefulSet stays. */
  async function rebuild(name: string, index: number): Promise<void> {
    await lws.core.deleteNamespacedPod({ namespace, name: `${name}-${index}` });
    await waitFor(
      `group ${index} of ${name} rebuilt`,
      async () => {
        const leader = await lws.pod(`${name}-${index}`);
        return leader && leader.metadata?.uid !== seen[`pod/${name}-${index}`] ? true : undefined;
      },
      { timeoutMs: 60_000 },
    );
    await allReady();
    const after = await snapshot();
    const size = KINDS.find((k) => k.lws.metadata.name === name)!.size;
    const group = [`sts/${name}-${index}`, `pod/${name}-${index}`];
    for (let w = 1; w < size; w++) group.push(`pod/${name}-${index}-${w}`);
    for (const [object, uid] of Object.entries(seen)) {
      if (group.includes(object)) assert.notEqual(after[object], uid, `${object} rebuilt`);
      else assert.equal(after[object], uid, `${object} untouched`);
    }
    const workers = (await lws.statefulSet(`${name}-${index}`))!;
    assert.equal(
      workers.metadata?.ownerReferences?.[0]?.uid,
      after[`pod/${name}-${index}`],
      'the new worker StatefulSet is owned by the new leader',
    );
    seen = after;
  }

  it('upstream starts with its own CRD and webhooks in place of ours', async () => {
    upstream = await startUpstreamLws({ kc });
    assert.ok(isAlive(upstream.pid));
    const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
    const crd = await ext.readCustomResourceDefinition({ name: CRD_NAME });
    assert.notEqual(crd.metadata?.labels?.['app.kubernetes.io/name'], 'lws-temporal', 'the CRD is not ours');
    const spec = crd.spec.versions[0]?.schema?.openAPIV3Schema?.properties?.spec?.properties ?? {};
    assert.ok(spec.leaderWorkerTemplate, "upstream's CRD has the LWS schema");
    assert.equal(spec.podTerminationPolicy, undefined, "upstream's v0.9.0 CRD has no podTerminationPolicy");
    await ext.readCustomResourceDefinition({ name: 'disaggregatedsets.disaggregatedset.x-k8s.io' });

    const admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
    await assert.rejects(admission.readMutatingWebhookConfiguration({ name: WEBHOOK_CONFIGURATION_NAME }), {
      code: 404,
    });
    const mutating = await admission.readMutatingWebhookConfiguration({
      name: UPSTREAM_WEBHOOK_CONFIGURATIONS.mutating,
    });
    const validating = await admission.readValidatingWebhookConfiguration({
      name: UPSTREAM_WEBHOOK_CONFIGURATIONS.validating,
    });
    assert.deepEqual(
      [...mutating.webhooks!, ...validating.webhooks!].map((w) => [
        w.name,
        w.clientConfig.url?.replace(/:\d+\//, ':<port>/'),
      ]),
      [
        ['mleaderworkerset.kb.io', 'https://127.0.0.1:<port>/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset'],
        ['mpod.kb.io', 'https://127.0.0.1:<port>/mutate--v1-pod'],
        ['vleaderworkerset.kb.io', 'https://127.0.0.1:<port>/validate-leaderworkerset-x-k8s-io-v1-leaderworkerset'],
        ['vpod.kb.io', 'https://127.0.0.1:<port>/validate--v1-pod'],
        ['vdisaggregatedset.kb.io', 'https://127.0.0.1:<port>/validate-disaggregatedset-x-k8s-io-v1-disaggregatedset'],
      ],
    );
    // The pod webhooks only for LWS pods, as upstream's kustomization patches them.
    assert.deepEqual(
      mutating.webhooks![1]!.objectSelector?.matchExpressions?.map(({ key, operator }) => ({ key, operator })),
      [{ key: `${P}name`, operator: 'Exists' }],
    );
    const stats = upstream.stats();
    assert.ok(stats.peakRssMb > 0 && stats.cpuSeconds >= 0, JSON.stringify(stats));
  });

  it('upstream runs five LWSes: plain, subgroups, exclusive placement, volume claims, UniquePerReplica', async () => {
    const [first, ...rest] = KINDS;
    await lws.create(first!.lws);
    await lws.waitForGroups(first!.lws.metadata.name!, first!.replicas, first!.size, 120_000);
    for (const k of rest) await lws.create(k.lws);
    await rolling.create(ROLLING.lws);
    await allReady();
    await rolling.waitForGroups('rolling', ROLLING.replicas, ROLLING.size, 120_000);
    seen = await snapshot();
    keys = {};
    for (const k of KINDS) {
      const sts = (await lws.statefulSet(k.lws.metadata.name!))!;
      keys[k.lws.metadata.name!] = sts.metadata!.labels![LABEL_TEMPLATE_REVISION_HASH]!;
    }
    // A leader StatefulSet per LWS, a worker StatefulSet per group, and every pod.
    const wanted = KINDS.reduce((n, k) => n + 1 + k.replicas + k.replicas * k.size, 0);
    assert.equal(Object.keys(seen).length, wanted, JSON.stringify(seen));

    // Upstream's own doing: its labels, the env its pod webhook writes as values, its field manager, its status.
    const pods = await lws.pods('plain');
    for (const i of [0, 1]) {
      for (const w of [0, 1, 2]) {
        const name = w === 0 ? `plain-${i}` : `plain-${i}-${w}`;
        const pod = pods.find((p) => p.metadata?.name === name)!;
        assert.equal(pod.metadata?.labels?.[`${P}group-index`], String(i), name);
        assert.equal(pod.metadata?.labels?.[`${P}worker-index`], String(w), name);
        const env = envOf(pod);
        assert.equal(env.LWS_LEADER_ADDRESS?.value, `plain-${i}.plain.${namespace}`, name);
        assert.equal(env.LWS_GROUP_SIZE?.value, '3', name);
        assert.equal(env.LWS_WORKER_INDEX?.value, String(w), name);
        assert.equal(env.LWS_GROUP_INDEX, undefined, 'LWS_GROUP_INDEX is ours only');
      }
    }
    const leaders = (await lws.statefulSet('plain'))!;
    assert.ok(
      leaders.metadata?.managedFields?.some((f) => f.manager === 'lws'),
      `upstream ("lws") made the leader StatefulSet: ${JSON.stringify(leaders.metadata?.managedFields?.map((f) => f.manager))}`,
    );
    assert.equal(leaders.metadata?.annotations?.[`${P}pod-termination-policy`], undefined);
    for (const k of KINDS) {
      const name = k.lws.metadata.name!;
      const status = await waitFor(
        `upstream to report ${name}'s ready replicas`,
        async () => {
          const s = (await lws.get(name))?.status;
          return s?.readyReplicas === k.replicas ? s : undefined;
        },
        { timeoutMs: 30_000 },
      );
      assert.equal(status.conditions?.find((c) => c.type === 'Available')?.status, 'True', name);
    }
  });

  it('upstream rebuilds the group whose leader is deleted, and only that group', async () => {
    await rebuild('plain', 1);
  });

  it("this controller takes over: it keeps upstream's revision keys, recreates no pod or StatefulSet and finishes upstream's rollout", async () => {
    await startRollout('registry.invalid/ai:2');
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
    await nothingRecreated();
    for (const k of KINDS) {
      const name = k.lws.metadata.name!;
      const [now, sts] = await Promise.all([lws.get(name), lws.statefulSet(name)]);
      assert.equal(sts?.metadata?.labels?.[LABEL_TEMPLATE_REVISION_HASH], keys[name], `${name}: its key`);
      assert.match(now?.metadata.annotations?.[ANNOTATION_ADOPTED_REVISION] ?? '', new RegExp(`:${keys[name]}$`));
      assert.equal(now?.status?.updatedReplicas, k.replicas, `${name}: every group counts as up to date`);
    }
    await rolloutFinished('registry.invalid/ai:2');
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
    await rebuild('plain', 0);
  });

  it('a template change under this controller rolls that LWS onto a revision written here', async () => {
    const changed = structuredClone(KINDS.find((k) => k.lws.metadata.name === 'claims')!.lws.spec);
    changed.leaderWorkerTemplate.workerTemplate.spec!.containers[0]!.image = 'registry.invalid/ai:2';
    changed.leaderWorkerTemplate.leaderTemplate!.spec!.containers[0]!.image = 'registry.invalid/ai:2';
    await lws.patchSpec('claims', { leaderWorkerTemplate: changed.leaderWorkerTemplate });
    // The status alone can still be the one from before the change, so every pod must carry the new key too.
    const key = await waitFor(
      'claims rolled onto a revision of ours',
      async () => {
        const [now, sts, pods] = await Promise.all([lws.get('claims'), lws.statefulSet('claims'), lws.pods('claims')]);
        const current = sts?.metadata?.labels?.[LABEL_TEMPLATE_REVISION_HASH];
        if (!current || current === keys['claims']) return undefined;
        const live = pods.filter((p) => !p.metadata?.deletionTimestamp);
        const rolled =
          live.length === 4 &&
          live.every((p) => p.metadata?.labels?.[LABEL_TEMPLATE_REVISION_HASH] === current && isReady(p));
        const done = now?.status?.updatedReplicas === 2 && now.status.readyReplicas === 2;
        return rolled && done ? current : undefined;
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

  it('upstream takes back over: it accepts the revisions written here, recreates no pod or StatefulSet and finishes our rollout', async () => {
    await startRollout('registry.invalid/ai:3');
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
        const leaderPods = KINDS.reduce((n, k) => n + k.replicas, 0);
        return total('leaderworkerset') >= KINDS.length && total('pod') >= leaderPods ? true : undefined;
      },
      { timeoutMs: 60_000 },
    );
    await nothingRecreated();
    for (const k of KINDS) {
      const name = k.lws.metadata.name!;
      const status = (await lws.get(name))!.status;
      const available = status?.conditions?.find((c) => c.type === 'Available');
      assert.equal(available?.status, 'True', `${name}: Available under upstream`);
      const sts = await lws.statefulSet(name);
      assert.equal(sts?.metadata?.labels?.[LABEL_TEMPLATE_REVISION_HASH], keys[name], `${name}: upstream kept the key`);
    }
    await rolloutFinished('registry.invalid/ai:3');
  });

  it('upstream stops and leaves our CRD, our webhooks and no upstream process behind', async () => {
    const pid = upstream!.pid;
    const stopped = await upstream!.stop();
    upstream = undefined;
    assert.ok(stopped.stats.cpuSeconds > 0 && stopped.stats.peakRssMb > 10, JSON.stringify(stopped));
    assert.equal(isAlive(pid), false);
    const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
    const crd = await ext.readCustomResourceDefinition({ name: CRD_NAME });
    assert.equal(crd.metadata?.labels?.['app.kubernetes.io/name'], 'lws-temporal');
    assert.ok(crd.spec.versions[0]?.schema?.openAPIV3Schema?.properties?.spec?.properties?.podTerminationPolicy);
    await assert.rejects(ext.readCustomResourceDefinition({ name: 'disaggregatedsets.disaggregatedset.x-k8s.io' }), {
      code: 404,
    });
    const admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
    await admission.readMutatingWebhookConfiguration({ name: WEBHOOK_CONFIGURATION_NAME });
    await assert.rejects(
      admission.readMutatingWebhookConfiguration({ name: UPSTREAM_WEBHOOK_CONFIGURATIONS.mutating }),
      { code: 404 },
    );
    await assert.rejects(
      admission.readValidatingWebhookConfiguration({ name: UPSTREAM_WEBHOOK_CONFIGURATIONS.validating }),
      { code: 404 },
    );
    for (const k of KINDS) assert.equal(await lws.get(k.lws.metadata.name!), undefined, 'every LWS was deleted');
    assert.equal(existsSync(join(upstreamLwsDir, 'state.json')), false);
    assert.equal(await cleanUpUpstreamLws({ kc }), false, 'nothing left to undo');
  });

  it('this controller then provisions a new LWS on the same cluster, with its policy and env', async () => {
    controller = await startController();
    const ours = lwsOf('ours', 2, 3).lws;
    ours.spec.podTerminationPolicy = 'Parallel';
    await lws.create(ours);
    const pods = await lws.waitForGroups('ours', 2, 3);
    const leader = pods.find((p) => p.metadata?.name === 'ours-0')!;
    assert.equal(leader.metadata?.annotations?.[`${P}pod-termination-policy`], 'Parallel');
    assert.ok(envOf(leader).LWS_GROUP_INDEX, 'our env');
  });
});
