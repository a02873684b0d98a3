// The chart as users install it: `helm install` with its defaults (two replicas of the worker, the trigger and the
// webhook) of the image built here (npm run build:image), in pods on real nodes, in a namespace that enforces the
// restricted Pod Security profile. No process of the product runs on this host: the LWS below is provisioned, torn
// down and rebuilt by the pods alone. Then `helm upgrade` to a new tag and build in the middle of a Parallel teardown
// and a provisioning, and `helm uninstall`.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { createLogger } from '../../src/log.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { pinnedRunsQuery } from '../../src/worker/drain.js';
import { LABEL_WORKER_INDEX } from '../../src/model/index.js';
import { buildProductImage } from '../../tools/images/product-image.js';
import { installAdmissionPolicy } from '../../tools/stack/admission-policy.js';
import { localKubeConfig } from '../../tools/stack/cluster.js';
import { installCrd } from '../../tools/stack/crd.js';
import { binPath, kubeconfigPath, repoRoot, stateDir } from '../../tools/stack/paths.js';
import {
  ensureRealNodes,
  loadImage,
  REAL_NODE_LABEL,
  REAL_NODE_TAINT,
  tagImage,
  type RealNodesState,
} from '../../tools/stack/real-nodes.js';
import { startTemporal, type RunningTemporal } from '../../tools/stack/temporal-target.js';
import { cleanUpUpstreamLws } from '../../tools/stack/upstream-lws.js';
import { WEBHOOK_CONFIGURATION_NAME } from '../../tools/stack/admission.js';
import { chartDir, helm, NAMESPACE, RELEASE, writeValues } from '../fixtures/chart.js';
import { ContainerEvents, modelServerLws } from '../fixtures/model-server.js';
import { LwsClient, isReady } from '../fixtures/lws.js';
import { createTestNamespace, deleteTestNamespace } from '../fixtures/namespace.js';
import { PodRecorder } from '../fixtures/pod-recorder.js';

const run = promisify(execFile);
const G = 20; // the LWS pods' grace period
const DRAIN = 15; // their drain after SIGTERM: long enough for the upgrade to land in the middle of a teardown
const TASK_QUEUE = 'lws-temporal-real-nodes';
const BUILDS = ['build-a', 'build-b'] as const;
const workDir = join(stateDir, 'chart-on-real-nodes', String(process.pid));
const helmArgs = (args: string[]) => [...args, '--kubeconfig', kubeconfigPath, '--namespace', NAMESPACE];
const kubectl = (args: string[]) =>
  run(binPath('kubectl'), ['--kubeconfig', kubeconfigPath, ...args], { cwd: repoRoot });
const DEPLOYMENTS = ['lws-temporal-worker', 'lws-temporal-trigger', 'lws-temporal-admission'];

describe('the chart on real nodes: its image in pods, a restricted namespace, helm install, upgrade and uninstall', function () {
  this.timeout(300_000);
  let kc: k8s.KubeConfig;
  let core: k8s.CoreV1Api;
  let apps: k8s.AppsV1Api;
  let nodes: RealNodesState;
  let temporal: RunningTemporal;
  let connection: Connection;
  let client: Client;
  let image: { ref: string; repository: string; tag: string };
  let namespace: string;
  let lws: LwsClient;
  let recorder: PodRecorder;
  let controllerPods: PodRecorder;
  /** The local stack's own webhook configuration, which the release takes over and uninstall removes: put back after. */
  let stackWebhook: k8s.V1MutatingWebhookConfiguration | undefined;
  const events = new ContainerEvents(join(workDir, 'events'));

  before(async function () {
    this.timeout(900_000);
    kc = localKubeConfig();
    core = kc.makeApiClient(k8s.CoreV1Api);
    apps = kc.makeApiClient(k8s.AppsV1Api);
    await cleanUpUpstreamLws({ kc });
    await installCrd(kc);
    nodes = await ensureRealNodes({ kc });
    const built = await buildProductImage({ log: createLogger('image') });
    await loadImage(nodes, built);
    const [repository, tag] = [
      built.ref.slice(0, built.ref.lastIndexOf(':')),
      built.ref.slice(built.ref.lastIndexOf(':') + 1),
    ];
    image = { ref: built.ref, repository, tag };
    await tagImage(nodes, built.ref, `${repository}:${tag}-next`);
    // Pods reach the dev server at the host's address on their bridge.
    temporal = await startTemporal('dev-server', createLogger('temporal'), { listenAddress: '0.0.0.0' });
    connection = await Connection.connect({ address: temporal.address });
    client = new Client({ connection, namespace: temporal.namespace });
    await helm(helmArgs(['uninstall', RELEASE, '--ignore-not-found', '--wait']));
    // The namespace of an earlier run may still be going (the namespace controller backs off while pods drain).
    await waitFor(
      `namespace ${NAMESPACE} not terminating`,
      async () =>
        (await core.readNamespace({ name: NAMESPACE }).catch(() => null))?.metadata?.deletionTimestamp
          ? undefined
          : true,
      { timeoutMs: 300_000, intervalMs: 1000 },
    );
    const restricted = {
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/enforce-version': 'latest',
    };
    await core
      .createNamespace({ body: { metadata: { name: NAMESPACE, labels: restricted } } })
      .catch(async (err: { code?: number }) => {
        if (err.code !== 409) throw err;
        await core.patchNamespace(
          { name: NAMESPACE, body: { metadata: { labels: restricted } } },
          k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
        );
      });
    const admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
    stackWebhook = await admission
      .readMutatingWebhookConfiguration({ name: WEBHOOK_CONFIGURATION_NAME })
      .catch(() => undefined);
    // Helm applies server-side: it cannot take over a configuration whose webhooks another manager gave a URL.
    if (stackWebhook) await admission.deleteMutatingWebhookConfiguration({ name: WEBHOOK_CONFIGURATION_NAME });
    namespace = await createTestNamespace(kc, 'e2e-chart-real');
    lws = new LwsClient(kc, namespace);
    recorder = new PodRecorder(kc, namespace);
    await recorder.start();
    controllerPods = new PodRecorder(kc, NAMESPACE, 'app.kubernetes.io/name=lws-temporal');
    await controllerPods.start();
    await events.create();
  });

  after(async function () {
    this.timeout(300_000);
    recorder?.stop();
    controllerPods?.stop();
    await helm(helmArgs(['uninstall', RELEASE, '--ignore-not-found', '--wait'])).catch(() => undefined);
    await deleteTestNamespace(kc, namespace);
    if (stackWebhook) {
      const admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
      const { name, labels, annotations } = stackWebhook.metadata!;
      await admission.deleteMutatingWebhookConfiguration({ name: name! }).catch(() => undefined);
      await admission.createMutatingWebhookConfiguration({
        body: { ...stackWebhook, metadata: { name, labels, annotations } },
      });
    }
    // The release took over the stack's admission policy and kept it: give it back as the stack installs it.
    if (kc) await installAdmissionPolicy(kc);
    await connection?.close();
    await temporal?.stop();
    await events.remove();
  });

  function values(tag: string, buildId: string) {
    return {
      image: { repository: image.repository, tag, pullPolicy: 'Never' },
      temporal: {
        address: `${nodes.hostAddress}:${temporal.address.split(':')[1]}`,
        namespace: temporal.namespace,
        taskQueue: TASK_QUEUE,
      },
      clusterName: 'real-nodes',
      worker: { buildId },
      nodeSelector: { [REAL_NODE_LABEL.key]: REAL_NODE_LABEL.value },
      tolerations: [{ key: REAL_NODE_TAINT.key, operator: 'Exists' }],
    };
  }

  async function deploymentsRolledOut(tag: string) {
    await waitFor(
      `the release's Deployments rolled out on ${tag}`,
      async () => {
        for (const name of DEPLOYMENTS) {
          const d = await apps.readNamespacedDeployment({ name, namespace: NAMESPACE });
          const want = d.spec!.replicas!;
          const s = d.status;
          if (d.spec!.template.spec!.containers[0]!.image !== `${image.repository}:${tag}`) return undefined;
          if (s?.observedGeneration !== d.metadata!.generation) return undefined;
          if (s?.updatedReplicas !== want || s?.readyReplicas !== want || s?.replicas !== want) return undefined;
        }
        return true;
      },
      { timeoutMs: 240_000, intervalMs: 1000 },
    );
  }

  /** A Parallel LWS of groups of 3 whose pods turn Ready after 10 s, so that a provisioning is open a while. */
  const servedLws = (name: string, replicas: number) =>
    modelServerLws(name, {
      image: nodes.images.modelServer,
      policy: 'Parallel',
      replicas,
      size: 3,
      graceSeconds: G,
      drainSeconds: DRAIN,
      readyAfterSeconds: 10,
      events,
    });

  it('installs with helm into a restricted namespace: every pod on a real node, Ready by its probes', async () => {
    const file = await writeValues(workDir, values(image.tag, BUILDS[0]));
    // --take-ownership: the stack installed the CRD's admission policy, which the chart has too.
    await helm(helmArgs(['install', RELEASE, chartDir, '-f', file, '--take-ownership', '--wait', '--timeout', '5m']));
    await deploymentsRolledOut(image.tag);
    const pods = await core.listNamespacedPod({ namespace: NAMESPACE });
    assert.equal(pods.items.length, 6, 'two pods of each Deployment');
    for (const pod of pods.items) {
      const name = pod.metadata!.name!;
      assert.match(pod.spec!.nodeName!, /^real-node-/, `${name} runs on a real node`);
      assert.ok(isReady(pod), `${name} is Ready`);
      for (const c of pod.spec!.containers) {
        assert.equal(c.securityContext?.readOnlyRootFilesystem, true, `${name}: read-only root filesystem`);
      }
      for (const status of pod.status!.containerStatuses ?? []) {
        assert.equal(status.restartCount, 0, `${name}/${status.name} never restarted`);
      }
    }
  });

  it('the webhook made its own certificate in its pod, and the API server calls it through its Service', async () => {
    const admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
    const config = await admission.readMutatingWebhookConfiguration({ name: WEBHOOK_CONFIGURATION_NAME });
    for (const webhook of config.webhooks ?? []) {
      assert.equal(webhook.clientConfig.service?.namespace, NAMESPACE, `${webhook.name} calls the release's Service`);
      assert.ok(webhook.clientConfig.caBundle, `${webhook.name} has the CA the webhook made`);
    }
    const secret = await core.readNamespacedSecret({ name: 'lws-temporal-admission-certs', namespace: NAMESPACE });
    const ca = Object.entries(secret.data ?? {}).find(([key]) => key.startsWith('ca'))?.[1];
    assert.ok(ca, 'the Secret holds the CA');
    assert.equal(config.webhooks![0]!.clientConfig.caBundle, ca, 'the configuration trusts the CA of the Secret');
  });

  it('the PodDisruptionBudgets let one pod of each Deployment go at a time', async () => {
    const policy = kc.makeApiClient(k8s.PolicyV1Api);
    const pdbs = await policy.listNamespacedPodDisruptionBudget({ namespace: NAMESPACE });
    assert.deepEqual(pdbs.items.map((p) => p.metadata!.name).sort(), [...DEPLOYMENTS].sort());
    await waitFor(
      'every PodDisruptionBudget to allow one disruption',
      async () => {
        const now = await policy.listNamespacedPodDisruptionBudget({ namespace: NAMESPACE });
        return now.items.every((p) => p.status?.disruptionsAllowed === 1 && p.status.currentHealthy === 2)
          ? true
          : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
  });

  it('the pods alone provision a Parallel LWS and rebuild a group: workers get SIGTERM while the leader drains', async () => {
    await lws.create(servedLws('served', 2));
    const pods = await lws.waitForGroups('served', 2, 3, 180_000);
    const group = pods.filter((p) => p.metadata!.name === 'served-0' || p.metadata!.name!.startsWith('served-0-'));
    for (const pod of group) {
      assert.ok(
        pod.metadata!.labels?.[LABEL_WORKER_INDEX],
        `${pod.metadata!.name} was labelled by the webhook in its pod`,
      );
    }
    await core.deleteNamespacedPod({ name: 'served-0', namespace });
    const leader = group.find((p) => p.metadata!.name === 'served-0')!;
    const leaderTerm = await events.when(leader, 'sigterm', 60_000);
    const leaderExit = await events.when(leader, 'exit', 60_000);
    for (const worker of group.filter((p) => p !== leader)) {
      const term = await events.when(worker, 'sigterm', 60_000);
      assert.ok(
        term < leaderExit,
        `${worker.metadata!.name} got SIGTERM ${term - leaderTerm} ms after its leader, before it exited`,
      );
    }
    await lws.waitForGroups('served', 2, 3, 180_000);
  });

  it('helm upgrade to a new tag and build mid-teardown and mid-provisioning: both finish, old workers exit drained', async () => {
    const before = (await lws.pods('served')).filter((p) => !p.metadata!.deletionTimestamp);
    const oldWorkers = (
      await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: 'app.kubernetes.io/component=worker' })
    ).items;
    assert.equal(oldWorkers.length, 2);
    // A Parallel teardown (group 1's leader deleted; its processes drain DRAIN s) and a provisioning (group 2, whose
    // pods turn Ready only after 10 s), both started by the old build.
    await core.deleteNamespacedPod({ name: 'served-1', namespace });
    await lws.patchSpec('served', { replicas: 3 });
    const leader1 = before.find((p) => p.metadata!.name === 'served-1')!;
    await events.when(leader1, 'sigterm', 30_000);
    const file = await writeValues(join(workDir, 'upgrade'), values(`${image.tag}-next`, BUILDS[1]));
    await helm(helmArgs(['upgrade', RELEASE, chartDir, '-f', file, '--wait', '--timeout', '5m']));
    await deploymentsRolledOut(`${image.tag}-next`);
    // Both lifecycles finished: three groups Ready, group 1 rebuilt from new pods.
    const after = await lws.waitForGroups('served', 3, 3, 240_000);
    const old = new Set(before.map((p) => p.metadata!.uid));
    assert.ok(
      after
        .filter((p) => p.metadata!.name === 'served-1' || p.metadata!.name!.startsWith('served-1-'))
        .every((p) => !old.has(p.metadata!.uid)),
      'group 1 was rebuilt',
    );
    // Every run pinned to the old build closed before the last old worker pod went.
    const version = { deploymentName: TASK_QUEUE, buildId: BUILDS[0] };
    // A teardown ends a little after its replacement is Ready: wait for the old build's runs to close.
    await waitFor(
      `the runs pinned to ${BUILDS[0]} to close`,
      async () => ((await client.workflow.count(pinnedRunsQuery(version))).count === 0 ? true : undefined),
      { timeoutMs: 180_000, intervalMs: 1000 },
    );
    const pinned: { id: string; closedAt: number }[] = [];
    for await (const run of client.workflow.list({
      query: pinnedRunsQuery(version).replace("ExecutionStatus = 'Running' AND ", ''),
    })) {
      assert.equal(run.status.name, 'COMPLETED', `${run.workflowId} (pinned to ${BUILDS[0]}) completed`);
      pinned.push({ id: run.workflowId, closedAt: run.closeTime!.getTime() });
    }
    assert.ok(pinned.length > 0, 'the old build had runs pinned to it');
    await waitFor(
      'the old worker pods gone',
      async () => (oldWorkers.every((p) => controllerPods.byUid(p.metadata!.uid!)?.goneAt) ? true : undefined),
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const lastGone = Math.max(...oldWorkers.map((p) => controllerPods.byUid(p.metadata!.uid!)!.goneAt!));
    for (const run of pinned) {
      assert.ok(
        run.closedAt <= lastGone,
        `${run.id} closed ${run.closedAt - lastGone} ms after the last old worker went`,
      );
    }
  });

  it("the controller's pods force-deleted mid-teardown: the group is rebuilt exactly once", async () => {
    const leaders = () =>
      new Set(
        recorder
          .all()
          .filter((r) => r.name === 'served-0')
          .map((r) => r.uid),
      ).size;
    const earlier = leaders();
    const before = (await lws.pods('served')).filter((p) => !p.metadata!.deletionTimestamp);
    const leader = before.find((p) => p.metadata!.name === 'served-0')!;
    await core.deleteNamespacedPod({ name: 'served-0', namespace });
    await events.when(leader, 'sigterm', 30_000);
    // Every worker and trigger at once, as `kubectl delete --force` does: no drain, no goodbye.
    await kubectl([
      'delete',
      'pods',
      '-n',
      NAMESPACE,
      '-l',
      'app.kubernetes.io/component in (worker,trigger)',
      '--force',
      '--grace-period=0',
    ]);
    const old = new Set(before.map((p) => p.metadata!.uid));
    await waitFor(
      'group 0 rebuilt from new pods, every group Ready',
      async () => {
        const pods = await lws.waitForGroups('served', 3, 3, 240_000);
        const group = pods.filter((p) => p.metadata!.name === 'served-0' || p.metadata!.name!.startsWith('served-0-'));
        return group.every((p) => !old.has(p.metadata!.uid)) ? true : undefined;
      },
      { timeoutMs: 240_000, intervalMs: 1000 },
    );
    // Settled: no second rebuild comes from the runs the new pods took over.
    await new Promise((r) => setTimeout(r, G * 1000));
    assert.equal(leaders(), earlier + 1, 'served-0 got one new leader');
  });

  it('helm uninstall leaves nothing of the release behind', async () => {
    await lws.delete('served');
    await waitFor('the LWS gone', async () => ((await lws.pods('served')).length === 0 ? true : undefined), {
      timeoutMs: 120_000,
    });
    await helm(helmArgs(['uninstall', RELEASE, '--wait', '--timeout', '5m']));
    // The pods go after their ReplicaSets, through the garbage collector, each within its grace period.
    const leftovers = async () => {
      const left: string[] = [];
      const { stdout } = await kubectl([
        'get',
        'all,configmaps,secrets,serviceaccounts,roles,rolebindings,poddisruptionbudgets',
        '-n',
        NAMESPACE,
        '-o',
        'name',
      ]);
      left.push(...stdout.split('\n').filter((l) => l && !l.endsWith('/kube-root-ca.crt') && !l.endsWith('/default')));
      const cluster = await kubectl([
        'get',
        'clusterroles,clusterrolebindings,mutatingwebhookconfigurations',
        '-o',
        'name',
      ]);
      left.push(...cluster.stdout.split('\n').filter((l) => l.includes('lws-temporal')));
      return left;
    };
    const left = await waitFor('the release gone', async () => ((await leftovers()).length === 0 ? [] : undefined), {
      timeoutMs: 120_000,
      intervalMs: 1000,
    }).catch(() => leftovers());
    assert.deepEqual(left, [], 'nothing of the release is left');
  });
});
