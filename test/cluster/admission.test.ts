// The pod admission webhook (src/admission) on the real local cluster: the API server calls it for every pod CREATE of
// an LWS pod, so that the pod is stored with its per-pod labels. Here the StatefulSet controller creates the pods, as
// it does for the controller's leader and worker StatefulSets, and a watch opened beforehand shows each pod's very
// first version. What the mutation does in detail is test/unit/admission-pod-mutation.test.ts's.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { request } from 'node:https';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { bundleFromSecret } from '../../src/admission/certificates.js';
import {
  ANNOTATION_LEADER_NAME,
  ANNOTATION_SIZE,
  LABEL_GROUP_INDEX,
  LABEL_GROUP_KEY,
  LABEL_NAME,
  LABEL_WORKER_INDEX,
} from '../../src/model/index.js';
import { localKubeConfig } from '../../tools/stack/cluster.js';
import { podWebhook, POD_WEBHOOK_NAME } from '../../tools/stack/admission.js';
import { kubeconfigPath, repoRoot } from '../../tools/stack/paths.js';
import { freePort, SERVER_PORTS, waitFor } from '../../src/dev-server/processes.js';
import { ensureCluster } from '../fixtures/cluster.js';
import { createTestNamespace, deleteTestNamespace } from '../fixtures/namespace.js';

const container = { name: 'main', image: 'registry.invalid/fake:1' };
const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

interface FirstSeen {
  type: string;
  labels: Record<string, string>;
}

/** Every pod's first watch event in a namespace, from a watch that starts before anything is created. */
class FirstEvents {
  readonly first = new Map<string, FirstSeen>();
  private controller?: AbortController;

  constructor(
    private readonly kc: k8s.KubeConfig,
    private readonly namespace: string,
  ) {}

  async start(): Promise<void> {
    const core = this.kc.makeApiClient(k8s.CoreV1Api);
    const list = await core.listNamespacedPod({ namespace: this.namespace });
    this.controller = await new k8s.Watch(this.kc).watch(
      `/api/v1/namespaces/${this.namespace}/pods`,
      { resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: false },
      (type, pod: k8s.V1Pod) => {
        const name = pod.metadata?.name ?? '';
        if (!this.first.has(name)) this.first.set(name, { type, labels: { ...pod.metadata?.labels } });
      },
      () => undefined,
    );
  }

  stop(): void {
    this.controller?.abort();
  }

  async waitFor(names: string[]): Promise<FirstSeen[]> {
    return waitFor(
      `the first watch events of ${names.join(', ')}`,
      async () => (names.every((n) => this.first.has(n)) ? names.map((n) => this.first.get(n)!) : undefined),
      { timeoutMs: 30_000, intervalMs: 100 },
    );
  }
}

/** A StatefulSet whose pods carry `labels` and `annotations`, as the controller's leader and worker StatefulSets do. */
function statefulSet(
  name: string,
  opts: { replicas: number; start?: number; labels: Record<string, string>; annotations: Record<string, string> },
): k8s.V1StatefulSet {
  const selector = { 'lws-temporal/test': name };
  return {
    metadata: { name },
    spec: {
      replicas: opts.replicas,
      ordinals: opts.start === undefined ? undefined : { start: opts.start },
      podManagementPolicy: 'Parallel',
      serviceName: name,
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: { ...selector, ...opts.labels }, annotations: opts.annotations },
        spec: { terminationGracePeriodSeconds: 0, containers: [container] },
      },
    },
  };
}

describe('the pod admission webhook on the cluster', function () {
  this.timeout(60_000);
  let kc: k8s.KubeConfig;
  let core: k8s.CoreV1Api;
  let apps: k8s.AppsV1Api;
  let namespace: string;
  let events: FirstEvents;

  before(async function () {
    this.timeout(240_000);
    await ensureCluster();
    kc = localKubeConfig();
    core = kc.makeApiClient(k8s.CoreV1Api);
    apps = kc.makeApiClient(k8s.AppsV1Api);
    namespace = await createTestNamespace(kc, 'admission');
    events = new FirstEvents(kc, namespace);
    await events.start();
  });

  after(async () => {
    events?.stop();
    await deleteTestNamespace(kc, namespace);
  });

  it('leader pods have group-index and group-key in their first event (ADDED)', async () => {
    await apps.createNamespacedStatefulSet({
      namespace,
      body: statefulSet('lead', {
        replicas: 2,
        labels: { [LABEL_NAME]: 'lead', [LABEL_WORKER_INDEX]: '0' },
        annotations: { [ANNOTATION_SIZE]: '3' },
      }),
    });
    const names = ['lead-0', 'lead-1'];
    const seen = await events.waitFor(names);
    seen.forEach((first, i) => {
      assert.equal(first.type, 'ADDED');
      assert.equal(first.labels[LABEL_GROUP_INDEX], String(i), `${names[i]}: group-index`);
      assert.equal(first.labels[LABEL_GROUP_KEY], sha1(`${namespace}/${names[i]}`), `${names[i]}: group-key`);
      assert.equal(first.labels[LABEL_WORKER_INDEX], '0');
    });
  });

  it('worker pods have worker-index in their first event (ADDED)', async () => {
    await apps.createNamespacedStatefulSet({
      namespace,
      body: statefulSet('lead-0', {
        replicas: 2,
        start: 1,
        labels: { [LABEL_NAME]: 'lead' },
        annotations: { [ANNOTATION_SIZE]: '3', [ANNOTATION_LEADER_NAME]: 'lead-0' },
      }),
    });
    const names = ['lead-0-1', 'lead-0-2'];
    const seen = await events.waitFor(names);
    seen.forEach((first, i) => {
      assert.equal(first.type, 'ADDED');
      assert.equal(first.labels[LABEL_WORKER_INDEX], String(i + 1), `${names[i]}: worker-index`);
    });
  });

  it('leaves a pod without the LWS name label as it was', async () => {
    const body: k8s.V1Pod = {
      metadata: { name: 'plain-0', labels: { app: 'plain', [LABEL_WORKER_INDEX]: '0' } },
      spec: { containers: [container] },
    };
    const created = await core.createNamespacedPod({ namespace, body });
    assert.deepEqual(created.metadata?.labels, body.metadata?.labels);
    assert.equal(created.metadata?.annotations, undefined);
    assert.equal(created.spec?.affinity, undefined);
    assert.equal(created.spec?.containers[0]?.env, undefined);
    const [first] = await events.waitFor(['plain-0']);
    assert.deepEqual(first?.labels, body.metadata?.labels);
  });

  it('refuses an LWS pod without the size annotation, with the reason (dry run)', async () => {
    const err = await core
      .createNamespacedPod({
        namespace,
        dryRun: 'All',
        body: {
          metadata: { name: 'nosize-0', labels: { [LABEL_NAME]: 'nosize', [LABEL_WORKER_INDEX]: '0' } },
          spec: { containers: [container] },
        },
      })
      .then(
        () => assert.fail('the API server admitted a pod without the size annotation'),
        (e: unknown) => e,
      );
    assert.ok(err instanceof k8s.ApiException, String(err));
    const status = JSON.parse(String(err.body)) as { message: string };
    assert.match(status.message, new RegExp(`admission webhook "${POD_WEBHOOK_NAME.replaceAll('.', '\\.')}" denied`));
    assert.match(status.message, /size/);
    assert.ok(!events.first.has('nosize-0'), 'a dry run stores nothing');
  });

  it('refuses a pod of a StatefulSet that is gone, or being deleted, naming it (dry run)', async () => {
    const hold = 'lws-temporal.test/hold';
    const make = async (name: string, finalizers?: string[]) => {
      const body = statefulSet(name, { replicas: 0, labels: { [LABEL_NAME]: 'owned' }, annotations: {} });
      body.metadata = { ...body.metadata, ...(finalizers && { finalizers }) };
      return (await apps.createNamespacedStatefulSet({ namespace, body })).metadata!.uid!;
    };
    const podOf = (sts: string, uid: string): k8s.V1Pod => ({
      metadata: {
        name: `${sts}-1`,
        labels: { [LABEL_NAME]: 'owned' },
        annotations: { [ANNOTATION_SIZE]: '2', [ANNOTATION_LEADER_NAME]: sts },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: sts, uid, controller: true }],
      },
      spec: { containers: [container] },
    });
    const refusal = (body: k8s.V1Pod) =>
      core.createNamespacedPod({ namespace, dryRun: 'All', body }).then(
        () => '',
        (e: unknown) =>
          e instanceof k8s.ApiException ? (JSON.parse(String(e.body)) as { message: string }).message : String(e),
      );

    const live = await make('owned-0');
    assert.equal(await refusal(podOf('owned-0', live)), '', 'a pod of a live StatefulSet is admitted');

    const gone = await make('owned-1');
    await apps.deleteNamespacedStatefulSet({ namespace, name: 'owned-1' });
    await waitFor(
      'the StatefulSet gone',
      async () =>
        (await apps.listNamespacedStatefulSet({ namespace })).items.some((s) => s.metadata?.name === 'owned-1')
          ? undefined
          : true,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    assert.match(await refusal(podOf('owned-1', gone)), new RegExp(`owned-1 \\(uid ${gone}\\) no longer exists`));

    const deleting = await make('owned-2', [hold]);
    await apps.deleteNamespacedStatefulSet({ namespace, name: 'owned-2' });
    try {
      assert.match(await refusal(podOf('owned-2', deleting)), /owned-2 \(uid [-0-9a-f]+\) is being deleted/);
    } finally {
      await apps.patchNamespacedStatefulSet(
        { namespace, name: 'owned-2', body: [{ op: 'remove', path: '/metadata/finalizers' }] },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
      );
    }
  });
});

/** GET /healthz of a webhook on 127.0.0.1, verified against `ca` for the name `servername`. */
function healthz(port: number, ca: string, servername: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', ca, servername, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the admission process in Secret mode (the deploy/ configuration), on the cluster', function () {
  this.timeout(90_000);
  let kc: k8s.KubeConfig;
  let core: k8s.CoreV1Api;
  let admissionApi: k8s.AdmissionregistrationV1Api;
  let namespace: string;
  const configuration = `lws-temporal-pods-test-${randomBytes(3).toString('hex')}`;
  const children: ChildProcess[] = [];
  const output: string[] = [];

  before(async function () {
    this.timeout(240_000);
    await ensureCluster();
    kc = localKubeConfig();
    core = kc.makeApiClient(k8s.CoreV1Api);
    admissionApi = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
    namespace = await createTestNamespace(kc, 'admission-secret');
    // As deploy/admission/webhook.yaml, without a caBundle; it selects no pod (a label nothing has), and a failure
    // to call it is ignored, so that it cannot disturb other suites on the cluster.
    const webhook = podWebhook({ service: { name: 'lws-temporal-admission', namespace, path: '/mutate-pod' } });
    await admissionApi.createMutatingWebhookConfiguration({
      body: {
        metadata: { name: configuration },
        webhooks: [
          {
            ...webhook,
            failurePolicy: 'Ignore',
            objectSelector: { matchExpressions: [{ key: 'lws-temporal/never', operator: 'Exists' }] },
          },
        ],
      },
    });
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(output.join(''));
  });

  after(async () => {
    for (const child of children) child.kill('SIGTERM');
    await admissionApi?.deleteMutatingWebhookConfiguration({ name: configuration }).catch(() => undefined);
    await deleteTestNamespace(kc, namespace);
  });

  it('two replicas started together share one Secret, set the caBundle, and serve for the Service name', async () => {
    const ports = [await freePort(SERVER_PORTS), await freePort(SERVER_PORTS)];
    for (const port of ports) {
      const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'src', 'admission', 'main.ts')], {
        cwd: repoRoot,
        env: {
          ...process.env,
          KUBECONFIG: kubeconfigPath,
          ADMISSION_PORT: String(port),
          ADMISSION_BIND_ADDRESS: '127.0.0.1',
          ADMISSION_CERT_DIR: '',
          ADMISSION_CERT_SECRET: 'lws-temporal-admission-certs',
          ADMISSION_NAMESPACE: namespace,
          ADMISSION_WEBHOOK_CONFIGURATION: configuration,
          // Two replicas on one host (each pod has its own network in a cluster).
          METRICS_PORT: '0',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stderr?.on('data', (c: Buffer) => output.push(`[${port}] ${c.toString()}`));
      children.push(child);
    }
    const secret = await waitFor(
      'the certificate Secret',
      () => core.readNamespacedSecret({ namespace, name: 'lws-temporal-admission-certs' }),
      { timeoutMs: 30_000 },
    );
    const bundle = bundleFromSecret(secret);
    const servername = `lws-temporal-admission.${namespace}.svc`;
    for (const port of ports) {
      await waitFor(
        `the replica on ${port} to serve with the Secret's certificate`,
        async () => ((await healthz(port, bundle.ca.cert, servername).catch(() => 0)) === 200 ? true : undefined),
        { timeoutMs: 30_000, intervalMs: 200 },
      );
    }
    const live = await admissionApi.readMutatingWebhookConfiguration({ name: configuration });
    assert.equal(live.webhooks?.[0]?.clientConfig.caBundle, Buffer.from(bundle.ca.cert).toString('base64'));
    assert.ok(new X509Certificate(bundle.cert).checkHost(servername, { subject: 'never' }));
    const created = output.join('').match(/created the webhook certificate Secret/g) ?? [];
    assert.equal(created.length, 1, `one replica created the Secret:\n${output.join('')}`);
    assert.ok(!output.join('').includes('renewed'), 'nothing was renewed');
  });
});
