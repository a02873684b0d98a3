import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { LeaderWorkerSet } from '../../src/model/index.js';
import { CRD_NAME } from '../../src/model/index.js';
import { WEBHOOK_CONFIGURATION_NAME } from '../../src/stack/admission.js';
import { localKubeConfig } from '../../src/stack/cluster.js';
import { installCrd } from '../../src/stack/crd.js';
import { isAlive, waitFor } from '../../src/stack/processes.js';
import {
  cleanUpUpstreamLws,
  startUpstreamLws,
  UPSTREAM_WEBHOOK_CONFIGURATIONS,
  upstreamLwsDir,
  type UpstreamLws,
  type UpstreamLwsStopped,
} from '../../src/stack/upstream-lws.js';
import { versions } from '../../src/stack/versions.js';
import { ensureCluster } from '../fixtures/cluster.js';
import { startController, type Controller } from '../fixtures/controller.js';
import { LwsClient } from '../fixtures/lws.js';
import { createTestNamespace, deleteTestNamespace } from '../fixtures/namespace.js';

/**
 * Upstream LeaderWorkerSet's controller (the release the bench compares with) on the local cluster, out of cluster
 * with its own CRD and webhooks, and this project's controller on the same cluster after it: the swap both ways.
 * Our controller does not run while upstream does, so every group that comes up here is upstream's doing.
 */
const G = 2; // terminationGracePeriodSeconds
const P = 'leaderworkerset.sigs.k8s.io/';

function upstreamLws(name: string): LeaderWorkerSet {
  const template = (role: string) => ({
    spec: { terminationGracePeriodSeconds: G, containers: [{ name: role, image: 'registry.invalid/ai:1' }] },
  });
  // No podTerminationPolicy: upstream's CRD has no such field.
  return {
    apiVersion: 'leaderworkerset.x-k8s.io/v1',
    kind: 'LeaderWorkerSet',
    metadata: { name },
    spec: {
      replicas: 2,
      leaderWorkerTemplate: { size: 3, leaderTemplate: template('leader'), workerTemplate: template('worker') },
    },
  } as LeaderWorkerSet;
}

const envOf = (pod: k8s.V1Pod) => Object.fromEntries((pod.spec?.containers[0]?.env ?? []).map((e) => [e.name, e]));
const uidOf = (pods: k8s.V1Pod[], name: string) => pods.find((p) => p.metadata?.name === name)?.metadata?.uid;

describe(`upstream LeaderWorkerSet v${versions.lwsUpstream} on the local cluster, then ours again`, function () {
  this.timeout(300_000);
  let kc: k8s.KubeConfig;
  let namespace: string;
  let lws: LwsClient;
  let upstream: UpstreamLws | undefined;
  let stopped: UpstreamLwsStopped | undefined;
  let controller: Controller | undefined;
  const name = 'up';

  before(async function () {
    this.timeout(300_000);
    await ensureCluster();
    kc = localKubeConfig();
    // Ours first, as every other suite leaves the cluster: the swap starts from there.
    await installCrd(kc);
    namespace = await createTestNamespace(kc, 'e2e-upstream');
    lws = new LwsClient(kc, namespace);
  });

  after(async function () {
    this.timeout(300_000);
    await controller?.stop();
    // Whatever a failed test left: upstream's process, CRD and webhooks go, ours come back.
    await upstream?.stop().catch(() => undefined);
    await cleanUpUpstreamLws({ kc });
    await deleteTestNamespace(kc, namespace);
  });

  it('starts with its own CRD and webhooks in place of ours', async () => {
    upstream = await startUpstreamLws({ kc });
    assert.ok(isAlive(upstream.pid));
    const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
    const crd = await ext.readCustomResourceDefinition({ name: CRD_NAME });
    assert.notEqual(crd.metadata?.labels?.['app.kubernetes.io/name'], 'lws-temporal', 'the CRD is not ours');
    const spec = crd.spec.versions[0]?.schema?.openAPIV3Schema?.properties?.spec?.properties ?? {};
    assert.ok(spec.leaderWorkerTemplate, "upstream's CRD has the LWS schema");
    assert.equal(spec.podTerminationPolicy, undefined, "upstream's CRD has no podTerminationPolicy");
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

  it('provisions 2 groups of 3 to Ready, with its labels, env and status', async () => {
    await lws.create(upstreamLws(name));
    const pods = await lws.waitForGroups(name, 2, 3, 120_000);
    for (const i of [0, 1]) {
      for (const w of [0, 1, 2]) {
        const pod = pods.find((p) => p.metadata?.name === (w === 0 ? `${name}-${i}` : `${name}-${i}-${w}`))!;
        assert.equal(pod.metadata?.labels?.[`${P}group-index`], String(i), pod.metadata?.name);
        assert.equal(pod.metadata?.labels?.[`${P}worker-index`], String(w), pod.metadata?.name);
        const env = envOf(pod);
        // Upstream's pod webhook writes the values themselves; ours reads them through the downward API.
        assert.equal(env.LWS_LEADER_ADDRESS?.value, `${name}-${i}.${name}.${namespace}`, pod.metadata?.name);
        assert.equal(env.LWS_GROUP_SIZE?.value, '3');
        assert.equal(env.LWS_WORKER_INDEX?.value, String(w));
        assert.equal(env.LWS_GROUP_INDEX, undefined, 'LWS_GROUP_INDEX is ours only');
      }
    }
    const leaders = (await lws.statefulSet(name))!;
    assert.ok(
      leaders.metadata?.managedFields?.some((f) => f.manager === 'lws'),
      `upstream ("lws") made the leader StatefulSet: ${JSON.stringify(leaders.metadata?.managedFields?.map((f) => f.manager))}`,
    );
    assert.equal(leaders.metadata?.annotations?.[`${P}pod-termination-policy`], undefined);
    const status = await waitFor(
      'upstream to report 2 ready replicas',
      async () => {
        const s = (await lws.get(name))?.status;
        return s?.readyReplicas === 2 ? s : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(status.conditions?.find((c) => c.type === 'Available')?.status, 'True');
  });

  it('rebuilds the group whose leader is deleted: a new leader and new workers', async () => {
    const before = await lws.pods(name);
    const old = { leader: uidOf(before, `${name}-0`)!, worker: uidOf(before, `${name}-0-1`)! };
    const group1 = [`${name}-1`, `${name}-1-1`, `${name}-1-2`].map((n) => uidOf(before, n));
    await lws.core.deleteNamespacedPod({ name: `${name}-0`, namespace });
    const pods = await waitFor(
      'group 0 rebuilt and Ready',
      async () => {
        const now = await lws.pods(name);
        const leader = uidOf(now, `${name}-0`);
        if (!leader || leader === old.leader) return undefined;
        const worker = uidOf(now, `${name}-0-1`);
        if (!worker || worker === old.worker) return undefined;
        return lws.waitForGroups(name, 2, 3, 1000).catch(() => undefined);
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const workers = (await lws.statefulSet(`${name}-0`))!;
    assert.equal(workers.metadata?.ownerReferences?.[0]?.uid, uidOf(pods, `${name}-0`), 'owned by the new leader');
    assert.deepEqual(
      [`${name}-1`, `${name}-1-1`, `${name}-1-2`].map((n) => uidOf(pods, n)),
      group1,
      'group 1 untouched',
    );
  });

  it('stops and leaves our CRD, our pod webhook and no upstream process behind', async () => {
    const pid = upstream!.pid;
    stopped = await upstream!.stop();
    assert.ok(stopped.stats.cpuSeconds > 0, JSON.stringify(stopped));
    assert.ok(stopped.stats.peakRssMb > 10, JSON.stringify(stopped));
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
      {
        code: 404,
      },
    );
    await assert.rejects(
      admission.readValidatingWebhookConfiguration({ name: UPSTREAM_WEBHOOK_CONFIGURATIONS.validating }),
      { code: 404 },
    );
    assert.equal(await lws.get(name), undefined, 'every LWS was deleted');
    assert.equal(existsSync(join(upstreamLwsDir, 'state.json')), false);
    assert.equal(await cleanUpUpstreamLws({ kc }), false, 'nothing left to undo');
  });

  it('our controller provisions again on the same cluster', async () => {
    controller = await startController();
    await lws.create({
      apiVersion: 'leaderworkerset.x-k8s.io/v1',
      kind: 'LeaderWorkerSet',
      metadata: { name: 'ours' },
      spec: { ...upstreamLws('ours').spec, podTerminationPolicy: 'Parallel' },
    });
    const pods = await lws.waitForGroups('ours', 2, 3);
    const leader = pods.find((p) => p.metadata?.name === 'ours-0')!;
    assert.equal(leader.metadata?.annotations?.[`${P}pod-termination-policy`], 'Parallel');
    assert.ok(envOf(leader).LWS_GROUP_INDEX, 'our env');
  });
});
