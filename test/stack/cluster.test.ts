import assert from 'node:assert/strict';
import { silentLogger } from '../../src/log.js';
import { setTimeout as sleep } from 'node:timers/promises';
import * as k8s from '@kubernetes/client-node';
import { localKubeConfig, startCluster } from '../../tools/stack/cluster.js';
import { kubernetesRelease } from '../../tools/stack/paths.js';
import { PodFinisher } from '../../tools/stack/pod-finisher.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { versions } from '../../tools/stack/versions.js';
import { ensureCluster } from '../fixtures/cluster.js';

/** The local cluster behaves like a real one in the ways the controller depends on. */
describe('local cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, KWOK)', function () {
  this.timeout(120_000);
  let core: k8s.CoreV1Api;
  let apps: k8s.AppsV1Api;
  const namespace = `stack-test-${Date.now().toString(36)}`;

  before(async function () {
    this.timeout(180_000);
    await ensureCluster();
    const kc = localKubeConfig();
    core = kc.makeApiClient(k8s.CoreV1Api);
    apps = kc.makeApiClient(k8s.AppsV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    // Pod creation is refused until the namespace's default ServiceAccount exists.
    await waitFor(
      'default ServiceAccount',
      async () => (await core.readNamespacedServiceAccount({ name: 'default', namespace })) && true,
      {
        timeoutMs: 30_000,
      },
    );
  });

  after(async () => {
    await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it('a second start reports the running cluster and leaves it alone', async () => {
    const first = await ensureCluster();
    const again = await startCluster({ log: silentLogger });
    assert.equal(again.reused, true);
    assert.equal(again.server, first.server);
    assert.deepEqual(again.pids, first.pids);
    assert.ok((await core.listNode()).items.length >= 3);
  });

  it('runs the Kubernetes release LWS_KUBERNETES names (the newest by default, or the floor)', async () => {
    const expected = kubernetesRelease() === 'floor' ? versions.kubernetesFloor : versions.kubernetes;
    const version = await localKubeConfig().makeApiClient(k8s.VersionApi).getCode();
    assert.equal(version.gitVersion, `v${expected}`);
  });

  const container = { name: 'main', image: 'registry.invalid/fake:1' };
  const podExists = async (name: string) =>
    core.readNamespacedPod({ name, namespace }).then(
      () => true,
      (err: { code?: number }) => (err.code === 404 ? false : Promise.reject(err)),
    );

  it('a StatefulSet of 3 replicas gets 3 Running and Ready pods', async () => {
    const labels = { app: 'three' };
    await apps.createNamespacedStatefulSet({
      namespace,
      body: {
        metadata: { name: 'three' },
        spec: {
          replicas: 3,
          serviceName: 'three',
          podManagementPolicy: 'Parallel',
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [container] } },
        },
      },
    });
    const pods = await waitFor(
      '3 Running and Ready pods',
      async () => {
        const list = await core.listNamespacedPod({ namespace, labelSelector: 'app=three' });
        const ready = list.items.filter(
          (p) =>
            p.status?.phase === 'Running' &&
            p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
        );
        return ready.length === 3 ? ready : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.deepEqual(pods.map((p) => p.metadata?.name).sort(), ['three-0', 'three-1', 'three-2']);
    assert.ok(
      pods.every((p) => p.spec?.nodeName?.startsWith('kwok-node-')),
      'every pod is bound to a fake node',
    );
    const sts = await waitFor(
      'StatefulSet status to count 3 ready replicas',
      async () => {
        const s = await apps.readNamespacedStatefulSet({ name: 'three', namespace });
        return s.status?.readyReplicas === 3 ? s : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(sts.status?.readyReplicas, 3);
  });

  it('a pod with terminationGracePeriodSeconds: 4 is still there 3 s after deletion and gone within 7 s', async () => {
    await core.createNamespacedPod({
      namespace,
      body: { metadata: { name: 'graceful' }, spec: { terminationGracePeriodSeconds: 4, containers: [container] } },
    });
    await waitFor(
      'pod Running',
      async () =>
        (await core.readNamespacedPod({ name: 'graceful', namespace })).status?.phase === 'Running' ? true : undefined,
      { timeoutMs: 30_000 },
    );
    const deleted = Date.now();
    await core.deleteNamespacedPod({ name: 'graceful', namespace });
    await sleep(3000 - (Date.now() - deleted));
    assert.equal(await podExists('graceful'), true, 'the pod must still exist 3 s after deletion');
    await waitFor('pod gone', async () => ((await podExists('graceful')) ? undefined : true), {
      timeoutMs: 7000 - (Date.now() - deleted),
    });
    const gone = Date.now() - deleted;
    assert.ok(gone >= 3500 && gone <= 7000, `gone after ${gone} ms`);
  });

  /** An owner ConfigMap and a dependent pod with a 3 s grace period, so the cascade order is observable. */
  async function ownerWithDependent(name: string): Promise<void> {
    const owner = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name } } });
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: {
          name: `${name}-dependent`,
          ownerReferences: [
            {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              name,
              uid: owner.metadata!.uid!,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        spec: { terminationGracePeriodSeconds: 3, containers: [container] },
      },
    });
    await waitFor(
      'dependent Running',
      async () =>
        (await core.readNamespacedPod({ name: `${name}-dependent`, namespace })).status?.phase === 'Running'
          ? true
          : undefined,
      { timeoutMs: 30_000 },
    );
  }

  /** Samples owner and dependent every 100 ms until both are gone; returns when each was first seen gone or terminating. */
  async function observeCascade(name: string) {
    const t0 = Date.now();
    const seen: { ownerGone?: number; dependentTerminating?: number; dependentGone?: number } = {};
    while (seen.ownerGone === undefined || seen.dependentGone === undefined) {
      if (Date.now() - t0 > 60_000) assert.fail(`cascade did not finish: ${JSON.stringify(seen)}`);
      const ownerExists = await core.readNamespacedConfigMap({ name, namespace }).then(
        () => true,
        () => false,
      );
      const dep = await core.readNamespacedPod({ name: `${name}-dependent`, namespace }).catch(() => undefined);
      const now = Date.now() - t0;
      if (!ownerExists) seen.ownerGone ??= now;
      if (dep?.metadata?.deletionTimestamp) seen.dependentTerminating ??= now;
      if (!dep) seen.dependentGone ??= now;
      await sleep(100);
    }
    return seen;
  }

  it('the final delete of a terminating pod never removes a replacement under the same name', async () => {
    const create = async () =>
      (
        await core.createNamespacedPod({
          namespace,
          body: {
            metadata: { name: 'same-name' },
            spec: { terminationGracePeriodSeconds: 1, containers: [container] },
          },
        })
      ).metadata!.uid!;
    const oldUid = await create();
    await core.deleteNamespacedPod({ name: 'same-name', namespace });
    await waitFor('the old pod gone', async () => ((await podExists('same-name')) ? undefined : true), {
      timeoutMs: 10_000,
    });
    const newUid = await create();
    // What KWOK's own delete stage did: a late, repeated delete for the old pod, after its replacement was created.
    const finisher = new PodFinisher(localKubeConfig(), silentLogger);
    await finisher.removeNow({ namespace, name: 'same-name', uid: oldUid });
    await sleep(500);
    const live = await core.readNamespacedPod({ name: 'same-name', namespace });
    assert.equal(live.metadata?.uid, newUid);
    assert.equal(live.metadata?.deletionTimestamp, undefined, 'the replacement is not terminating');
  });

  it('background propagation: the garbage collector deletes the dependent only after the owner is gone', async () => {
    await ownerWithDependent('bg-owner');
    await core.deleteNamespacedConfigMap({ name: 'bg-owner', namespace, propagationPolicy: 'Background' });
    const seen = await observeCascade('bg-owner');
    assert.ok(
      seen.dependentTerminating !== undefined && seen.dependentTerminating >= seen.ownerGone!,
      JSON.stringify(seen),
    );
    // The dependent then takes its own grace period.
    assert.ok(seen.dependentGone! - seen.ownerGone! >= 2500, JSON.stringify(seen));
  });

  it('foreground propagation: the owner stays until its dependents are gone', async () => {
    await ownerWithDependent('fg-owner');
    await core.deleteNamespacedConfigMap({ name: 'fg-owner', namespace, propagationPolicy: 'Foreground' });
    const owner = await core.readNamespacedConfigMap({ name: 'fg-owner', namespace });
    assert.ok(owner.metadata?.deletionTimestamp, 'the owner is marked for deletion');
    assert.ok(owner.metadata?.finalizers?.includes('foregroundDeletion'));
    const seen = await observeCascade('fg-owner');
    assert.ok(seen.ownerGone! >= seen.dependentGone!, JSON.stringify(seen));
    assert.ok(
      seen.ownerGone! >= 2500,
      `owner removed after ${seen.ownerGone} ms, before its dependent's grace period ended`,
    );
  });
});
