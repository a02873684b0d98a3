// The Helm chart installed as users install it (`helm install`, then `helm uninstall`) on the local cluster, and a
// Parallel rebuild through it. This cluster has no container runtime (KWOK simulates the pods), so the chart's
// Deployments run 0 replicas and the worker and trigger run here as OS processes, with exactly what those Deployments
// would give their containers: the installed ConfigMap as envFrom, their env, each Secret volume as files, and the
// token of the chart's own ServiceAccount, so that they act with the chart's RBAC.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { createLogger } from '../../src/log.js';
import { LABEL_NAME, workflowId, type LeaderWorkerSet } from '../../src/model/index.js';
import { installAdmissionPolicy } from '../../tools/stack/admission-policy.js';
import { localKubeConfig } from '../../tools/stack/cluster.js';
import { startControllerProcess, type ControllerProcess } from '../../tools/stack/controller-processes.js';
import { installCrd } from '../../tools/stack/crd.js';
import { binPath, kubeconfigPath, repoRoot, stateDir } from '../../tools/stack/paths.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { startTemporal, type RunningTemporal } from '../../tools/stack/temporal-target.js';
import { cleanUpUpstreamLws } from '../../tools/stack/upstream-lws.js';
import { WEBHOOK_CONFIGURATION_NAME } from '../../tools/stack/admission.js';
import type { TeardownGroupResult } from '../../src/workflows/teardown-group.js';
import { chartDir, containerEnvironment, helm, NAMESPACE, RELEASE, writeValues } from '../fixtures/chart.js';
import { ensureCluster } from '../fixtures/cluster.js';
import { LwsClient } from '../fixtures/lws.js';
import { createTestNamespace, deleteTestNamespace } from '../fixtures/namespace.js';
import { PodRecorder } from '../fixtures/pod-recorder.js';
import { sampleLeaderWorkerSet } from '../../tools/stack/sample-lws.js';
import { testLogDir } from '../fixtures/controller.js';

const run = promisify(execFile);
const G = 2; // terminationGracePeriodSeconds of the LWS pods
const NAME = 'chart';
const IMAGE = 'registry.invalid/ai:1';
const CLUSTER = 'chart-e2e';
const workDir = join(stateDir, 'chart-install-test', String(process.pid));
const logDir = join(testLogDir, 'chart-install');
/** What the release creates in its namespace and cluster-wide (with admission.webhookConfiguration.create false). */
const NAMESPACED = [
  ['ServiceAccount', ['lws-temporal-admission', 'lws-temporal-trigger', 'lws-temporal-worker']],
  ['ConfigMap', ['lws-temporal-config']],
  ['Service', ['lws-temporal-admission']],
  ['Deployment', ['lws-temporal-admission', 'lws-temporal-trigger', 'lws-temporal-worker']],
  ['Role', ['lws-temporal-admission']],
  ['RoleBinding', ['lws-temporal-admission']],
] as const;
const CLUSTER_WIDE = ['lws-temporal-admission', 'lws-temporal-trigger', 'lws-temporal-worker'];

const helmArgs = (args: string[]) => [...args, '--kubeconfig', kubeconfigPath, '--namespace', NAMESPACE];

function kubectl(args: string[]) {
  return run(binPath('kubectl'), ['--kubeconfig', kubeconfigPath, ...args], { cwd: repoRoot });
}

function lwsOf(): LeaderWorkerSet {
  return sampleLeaderWorkerSet({ name: NAME, policy: 'Parallel', replicas: 2, size: 2, graceSeconds: G, image: IMAGE });
}

/** A kubeconfig for the local API server that authenticates as a ServiceAccount of the release. */
async function serviceAccountKubeconfig(kc: k8s.KubeConfig, serviceAccount: string): Promise<string> {
  const { stdout } = await kubectl(['create', 'token', serviceAccount, '-n', NAMESPACE, '--duration=1h']);
  const cluster = kc.getCurrentCluster()!;
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'local', cluster: { server: cluster.server, 'certificate-authority-data': cluster.caData } }],
    users: [{ name: serviceAccount, user: { token: stdout.trim() } }],
    contexts: [{ name: 'local', context: { cluster: 'local', user: serviceAccount } }],
    'current-context': 'local',
  };
  const file = join(workDir, `${serviceAccount}.kubeconfig`);
  await writeFile(file, JSON.stringify(config), { mode: 0o600 });
  return file;
}

describe('the Helm chart, installed with helm on the local cluster: a Parallel rebuild through it', function () {
  this.timeout(120_000);
  let kc: k8s.KubeConfig;
  let core: k8s.CoreV1Api;
  let temporal: RunningTemporal;
  let connection: Connection;
  let client: Client;
  let namespace: string;
  let lws: LwsClient;
  let recorder: PodRecorder;
  let stackWebhookVersion: string | undefined;
  const processes: ControllerProcess[] = [];

  before(async function () {
    this.timeout(300_000);
    await ensureCluster();
    kc = localKubeConfig();
    core = kc.makeApiClient(k8s.CoreV1Api);
    await cleanUpUpstreamLws({ kc });
    await installCrd(kc);
    await mkdir(workDir, { recursive: true });
    // A release an interrupted run left behind, and its namespace, go first.
    await helm(helmArgs(['uninstall', RELEASE, '--ignore-not-found', '--wait']));
    await waitFor(
      `namespace ${NAMESPACE} not terminating`,
      async () => {
        const ns = await core.readNamespace({ name: NAMESPACE }).catch(() => null);
        return ns?.metadata?.deletionTimestamp ? undefined : true;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    temporal = await startTemporal('dev-server', createLogger('temporal'));
    connection = await Connection.connect({ address: temporal.address });
    client = new Client({ connection, namespace: temporal.namespace });
    const admissionRegistration = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
    stackWebhookVersion = (
      await admissionRegistration.readMutatingWebhookConfiguration({ name: WEBHOOK_CONFIGURATION_NAME })
    ).metadata?.resourceVersion;
  });

  after(async function () {
    this.timeout(120_000);
    recorder?.stop();
    await Promise.all(processes.map((p) => p.stop()));
    await helm(helmArgs(['uninstall', RELEASE, '--ignore-not-found'])).catch(() => undefined);
    await deleteTestNamespace(kc, namespace);
    await core?.deleteNamespace({ name: NAMESPACE }).catch(() => undefined);
    // The release took over the stack's admission policy and kept it: give it back as the stack installs it.
    if (kc) await installAdmissionPolicy(kc);
    await connection?.close();
    await temporal?.stop();
    await rm(workDir, { recursive: true, force: true });
  });

  it('installs with `helm install`, its values in the ConfigMap the processes read', async () => {
    const values = await writeValues(workDir, {
      temporal: { address: temporal.address, namespace: temporal.namespace },
      clusterName: CLUSTER,
      // Pods here run no containers: the processes run below instead.
      worker: { replicas: 0 },
      trigger: { replicas: 0 },
      admission: {
        replicas: 0,
        // The local cluster runs its own webhook process under this configuration's name, called by URL
        // (tools/stack/admission.ts): the chart's, calling a Service with no pods behind it and failurePolicy Fail,
        // would refuse every LWS pod. test/deploy/chart.test.ts dry-runs the chart's webhook objects instead.
        webhookConfiguration: { create: false },
      },
    });
    // --take-ownership: the stack installed the CRD's admission policy, which the chart has too; a user moving from
    // `kubectl apply -k deploy` to Helm meets the same.
    await helm(
      helmArgs(['install', RELEASE, chartDir, '--create-namespace', '-f', values, '--take-ownership', '--wait']),
    );
    const { stdout } = await helm(helmArgs(['status', RELEASE, '-o', 'json']));
    assert.equal((JSON.parse(stdout) as { info: { status: string } }).info.status, 'deployed');
    const config = await core.readNamespacedConfigMap({ name: 'lws-temporal-config', namespace: NAMESPACE });
    assert.equal(config.data?.TEMPORAL_ADDRESS, temporal.address);
    assert.equal(config.data?.LWS_CLUSTER_NAME, CLUSTER);
  });

  it('runs the worker and the trigger with the environment and the ServiceAccounts of its Deployments', async () => {
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const started = await Promise.all(
      (['worker', 'trigger'] as const).map(async (role) => {
        const name = `lws-temporal-${role}`;
        const deployment = await apps.readNamespacedDeployment({ name, namespace: NAMESPACE });
        assert.equal(deployment.spec?.replicas, 0);
        const env = await containerEnvironment({
          deployment,
          namespace: NAMESPACE,
          configMap: async (configMap) =>
            (await core.readNamespacedConfigMap({ name: configMap, namespace: NAMESPACE })).data,
          secret: async (secret) => {
            const found = await core.readNamespacedSecret({ name: secret, namespace: NAMESPACE }).catch(() => null);
            return found
              ? Object.fromEntries(Object.entries(found.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]))
              : undefined;
          },
          dir: join(workDir, role),
        });
        return startControllerProcess(
          role,
          {
            ...env,
            // What the image and the kubelet add: a PATH and a HOME; the pod's service account token, as a kubeconfig.
            PATH: process.env.PATH,
            HOME: process.env.HOME,
            KUBECONFIG: await serviceAccountKubeconfig(kc, deployment.spec!.template.spec!.serviceAccountName!),
            // Each pod has a network namespace of its own; two processes on one host cannot both take 9464.
            METRICS_PORT: '0',
          },
          logDir,
        );
      }),
    );
    processes.push(...started);
    // The chart's values, as the worker read them (LOG_FORMAT json: one object per line).
    const running = started[0]!.lines
      .map((l) => {
        try {
          return JSON.parse(l) as Record<string, unknown>;
        } catch {
          return {};
        }
      })
      .find((l) => l.msg === 'running');
    assert.deepEqual(
      [running?.temporal, running?.cluster, running?.taskQueue],
      [temporal.address, CLUSTER, `lws-temporal-${CLUSTER}`],
    );
  });

  it('rebuilds a group of a Parallel LWS: its workers terminate with its leader, nothing else is touched', async () => {
    namespace = await createTestNamespace(kc, 'e2e-chart');
    lws = new LwsClient(kc, namespace);
    recorder = new PodRecorder(kc, namespace);
    await recorder.start();
    await lws.create(lwsOf());
    const pods = await lws.waitForGroups(NAME, 2, 2);
    const before = await snapshot();
    const oldLeader = pods.find((p) => p.metadata!.name === `${NAME}-0`)!;
    const oldGroup = pods.filter((p) => p.metadata!.name!.startsWith(`${NAME}-0`));
    await core.deleteNamespacedPod({ namespace, name: `${NAME}-0` });
    await waitFor(
      'the old group 0 gone',
      async () => (oldGroup.every((p) => recorder.byUid(p.metadata!.uid!)?.goneAt) ? true : undefined),
      { timeoutMs: 6 * G * 1000, intervalMs: 100 },
    );
    const leader = recorder.byUid(oldLeader.metadata!.uid!)!;
    for (const p of oldGroup.filter((p) => p !== oldLeader)) {
      const worker = recorder.byUid(p.metadata!.uid!)!;
      assert.ok(
        worker.terminatingAt! - leader.terminatingAt! < 1000,
        `${worker.name} started terminating ${worker.terminatingAt! - leader.terminatingAt!} ms after its leader`,
      );
    }
    await lws.waitForGroups(NAME, 2, 2);
    const id = workflowId(
      CLUSTER,
      { namespace, name: NAME },
      { kind: 'teardown', groupIndex: 0, oldLeaderUid: oldLeader.metadata!.uid! },
    );
    const handle = client.workflow.getHandle(id);
    await waitFor(
      `teardown ${id} completed`,
      async () => ((await handle.describe()).status.name === 'COMPLETED' ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    const result = (await handle.result()) as TeardownGroupResult;
    assert.deepEqual([result.policy, result.lifecycle], ['Parallel', 'rebuild']);
    const after = await snapshot();
    const group0 = [`pod/${NAME}-0`, `pod/${NAME}-0-1`, `sts/${NAME}-0`];
    for (const [object, uid] of Object.entries(before)) {
      if (group0.includes(object)) assert.notEqual(after[object], uid, `${object} rebuilt`);
      else assert.equal(after[object], uid, `${object} untouched`);
    }
    assert.deepEqual(Object.keys(after).sort(), Object.keys(before).sort());
  });

  it('`helm uninstall` leaves nothing behind once the LWS is deleted; the stack keeps its own webhook', async () => {
    await lws.delete(NAME);
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    await waitFor(
      'the LWS, its pods and its StatefulSets gone',
      async () => {
        const [gone, pods, sets] = await Promise.all([
          lws.get(NAME).then((o) => o === undefined),
          lws.pods(NAME),
          apps.listNamespacedStatefulSet({ namespace }),
        ]);
        return gone && pods.length === 0 && sets.items.length === 0 ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    await Promise.all(processes.splice(0).map((p) => p.stop()));
    await helm(helmArgs(['uninstall', RELEASE, '--wait']));
    const leftovers: string[] = [];
    const { stdout } = await kubectl([
      'get',
      NAMESPACED.map(([kind]) => kind.toLowerCase()).join(',') + ',poddisruptionbudget,secret',
      '-n',
      NAMESPACE,
      '-o',
      'name',
    ]);
    for (const line of stdout.split('\n').filter(Boolean)) {
      // What the API server puts into every namespace.
      if (!['serviceaccount/default', 'configmap/kube-root-ca.crt'].includes(line)) leftovers.push(line);
    }
    const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    for (const name of CLUSTER_WIDE) {
      if (await rbac.readClusterRole({ name }).catch(() => null)) leftovers.push(`clusterrole/${name}`);
      if (await rbac.readClusterRoleBinding({ name }).catch(() => null)) leftovers.push(`clusterrolebinding/${name}`);
    }
    assert.deepEqual(leftovers, []);
    // Kept on purpose: the CRD and its admission policy (helm.sh/resource-policy: keep) outlive the controller.
    const admissionRegistration = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
    await admissionRegistration.readValidatingAdmissionPolicy({ name: 'leaderworkersets.leaderworkerset.x-k8s.io' });
    const webhook = await admissionRegistration.readMutatingWebhookConfiguration({ name: WEBHOOK_CONFIGURATION_NAME });
    assert.equal(webhook.metadata?.resourceVersion, stackWebhookVersion, "the stack's webhook configuration");
    await core.deleteNamespace({ name: NAMESPACE });
    await waitFor(
      `namespace ${NAMESPACE} gone`,
      async () => ((await core.readNamespace({ name: NAMESPACE }).catch(() => null)) ? undefined : true),
      { timeoutMs: 30_000, intervalMs: 250 },
    );
  });

  /** Every live pod and StatefulSet of the LWS, by name: its uid. */
  async function snapshot(): Promise<Record<string, string>> {
    const [pods, sets] = await Promise.all([
      core.listNamespacedPod({ namespace, labelSelector: `${LABEL_NAME}=${NAME}` }),
      kc.makeApiClient(k8s.AppsV1Api).listNamespacedStatefulSet({ namespace }),
    ]);
    return Object.fromEntries([
      ...pods.items
        .filter((p) => !p.metadata?.deletionTimestamp)
        .map((p) => [`pod/${p.metadata!.name}`, p.metadata!.uid!]),
      ...sets.items.map((s) => [`sts/${s.metadata!.name}`, s.metadata!.uid!]),
    ]);
  }
});
