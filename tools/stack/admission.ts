// The admission webhook as a process of the local cluster (started by cluster.ts): the webhook of src/admission with
// a CA of its own and a serving certificate for 127.0.0.1 (files under the cluster's pki/admission), and the
// MutatingWebhookConfiguration that sends the API server's pod CREATEs of LWS pods, and its LWS creates and updates,
// to it by URL. It must serve before kube-controller-manager creates the first pod: with failurePolicy Fail, a pod the
// webhook cannot be asked about is refused.
import { mkdir, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { createServingBundle } from '../../src/admission/certificates.js';
import { HEALTHZ_PATH, MUTATE_LWS_PATH, MUTATE_POD_PATH } from '../../src/admission/server.js';
import { DEFAULT_WEBHOOK_CONFIGURATION } from '../../src/config/admission.js';
import {
  ANNOTATION_SIZE,
  API_GROUP,
  API_VERSION,
  LABEL_GROUP_INDEX,
  LABEL_NAME,
  LABEL_WORKER_INDEX,
  PLURAL,
} from '../../src/model/index.js';
import { repoRoot } from './paths.js';
import { spawnDaemon, waitFor } from '../../src/dev-server/processes.js';

/** The webhook's name in its configuration; the API server names it in a refusal ("admission webhook ... denied"). */
export const POD_WEBHOOK_NAME = 'pods.lws-temporal.leaderworkerset.sigs.k8s.io';
export const LWS_WEBHOOK_NAME = 'leaderworkersets.lws-temporal.leaderworkerset.sigs.k8s.io';
export const WEBHOOK_CONFIGURATION_NAME = DEFAULT_WEBHOOK_CONFIGURATION;

/** What both webhooks share: refused while the webhook cannot be asked (as upstream's are), no side effects. */
const COMMON: Omit<k8s.V1MutatingWebhook, 'name' | 'clientConfig'> = {
  failurePolicy: 'Fail',
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  timeoutSeconds: 10,
  reinvocationPolicy: 'Never',
  matchPolicy: 'Equivalent',
};

/**
 * The pod webhook, as deploy/admission/webhook.yaml has it (test/deploy/manifests.test.ts compares them): pod
 * CREATEs of pods with the LWS name label only, so that no other pod depends on the webhook being up.
 */
export function podWebhook(clientConfig: k8s.AdmissionregistrationV1WebhookClientConfig): k8s.V1MutatingWebhook {
  return {
    name: POD_WEBHOOK_NAME,
    clientConfig,
    rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'], scope: '*' }],
    objectSelector: { matchExpressions: [{ key: LABEL_NAME, operator: 'Exists' }] },
    ...COMMON,
  };
}

/**
 * The LWS webhook, as deploy/admission/webhook.yaml has it: every LWS create and update, so that no LWS is stored with
 * a value upstream would rewrite.
 */
export function lwsWebhook(clientConfig: k8s.AdmissionregistrationV1WebhookClientConfig): k8s.V1MutatingWebhook {
  return {
    name: LWS_WEBHOOK_NAME,
    clientConfig,
    rules: [
      {
        apiGroups: [API_GROUP],
        apiVersions: [API_VERSION],
        operations: ['CREATE', 'UPDATE'],
        resources: [PLURAL],
        scope: '*',
      },
    ],
    ...COMMON,
  };
}

export interface LocalAdmission {
  pid: number;
  /** PEM of the CA that signed the serving certificate (the caBundle). */
  ca: string;
  /** https://127.0.0.1:<port>, without a path. */
  origin: string;
}

/** Writes a fresh CA and certificate for 127.0.0.1 into `dir` and starts the webhook on `port` with them. */
export async function spawnLocalAdmission(opts: {
  dir: string;
  port: number;
  logFile: string;
  /** The identity it reads StatefulSets with (the owner check). */
  kubeconfig: string;
}): Promise<LocalAdmission> {
  const bundle = await createServingBundle({ hosts: ['127.0.0.1'] });
  await mkdir(opts.dir, { recursive: true });
  await writeFile(join(opts.dir, 'ca.crt'), bundle.ca.cert);
  await writeFile(join(opts.dir, 'tls.crt'), bundle.cert);
  await writeFile(join(opts.dir, 'tls.key'), bundle.key, { mode: 0o600 });
  const pid = spawnDaemon(
    process.execPath,
    // `--import tsx` resolves from the working directory: the repo, where tsx is installed.
    ['--import', 'tsx', join(repoRoot, 'src', 'admission', 'main.ts')],
    opts.logFile,
    {
      ...process.env,
      ADMISSION_PORT: String(opts.port),
      ADMISSION_BIND_ADDRESS: '127.0.0.1',
      ADMISSION_CERT_DIR: opts.dir,
      KUBECONFIG: opts.kubeconfig,
      // The stack writes the configuration itself (applyLocalWebhookConfiguration).
      ADMISSION_CERT_SECRET: '',
      ADMISSION_WEBHOOK_CONFIGURATION: '',
      // A free port: the floor's cluster and the newest one may run side by side.
      METRICS_PORT: '0',
    },
    repoRoot,
  );
  return { pid, ca: bundle.ca.cert, origin: `https://127.0.0.1:${opts.port}` };
}

/** GET /healthz over TLS verified against the CA; resolves with the status code. */
function healthz(admission: LocalAdmission): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(HEALTHZ_PATH, admission.origin), { ca: admission.ca, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** Until /healthz answers 200; `alive` throws (GiveUp) when the process has exited. */
export async function waitForLocalAdmission(admission: LocalAdmission, alive: () => void, hint: string): Promise<void> {
  await waitFor(
    'the admission webhook /healthz',
    async () => {
      alive();
      return (await healthz(admission)) === 200 ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100, hint },
  );
}

/** Creates the configuration pointing at the local webhook, or replaces what a former cluster left under its name. */
export async function applyLocalWebhookConfiguration(kc: k8s.KubeConfig, admission: LocalAdmission): Promise<void> {
  const api = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  const caBundle = Buffer.from(admission.ca).toString('base64');
  const local = (path: string) => ({ url: `${admission.origin}${path}`, caBundle });
  const body: k8s.V1MutatingWebhookConfiguration = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: WEBHOOK_CONFIGURATION_NAME, labels: { 'app.kubernetes.io/name': 'lws-temporal' } },
    webhooks: [podWebhook(local(MUTATE_POD_PATH)), lwsWebhook(local(MUTATE_LWS_PATH))],
  };
  try {
    await api.createMutatingWebhookConfiguration({ body });
  } catch (err) {
    if (!(err instanceof k8s.ApiException) || err.code !== 409) throw err;
    const live = await api.readMutatingWebhookConfiguration({ name: WEBHOOK_CONFIGURATION_NAME });
    await api.replaceMutatingWebhookConfiguration({
      name: WEBHOOK_CONFIGURATION_NAME,
      body: { ...body, metadata: { ...body.metadata, resourceVersion: live.metadata?.resourceVersion } },
    });
  }
}

/**
 * The real proof that the API server calls the webhook: a server-side dry run of a leader pod's create comes back
 * mutated (a group-index label). The API server picks a new configuration up within moments. Needs the namespace's
 * default ServiceAccount (the ServiceAccount admission plugin runs first), so it comes after kube-controller-manager.
 */
export async function waitForPodMutation(kc: k8s.KubeConfig, hint: string): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const name = 'lws-temporal-admission-check';
  await waitFor(
    'the API server to call the admission webhook for an LWS pod (a dry-run create)',
    async () => {
      const pod = await core.createNamespacedPod({
        namespace: 'default',
        dryRun: 'All',
        body: {
          metadata: {
            name: `${name}-0`,
            labels: { [LABEL_NAME]: name, [LABEL_WORKER_INDEX]: '0' },
            annotations: { [ANNOTATION_SIZE]: '1' },
          },
          spec: { containers: [{ name: 'main', image: 'registry.invalid/fake:1' }] },
        },
      });
      return pod.metadata?.labels?.[LABEL_GROUP_INDEX] !== undefined ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100, hint },
  );
}
