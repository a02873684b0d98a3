// Upstream LeaderWorkerSet's controller (kubernetes-sigs/lws at versions.lwsUpstream, provisioned into the cache) as a
// process on the local cluster: the benchmark's contender. It runs out of cluster, as its users install it: its own
// CRDs and webhook configurations (from its module, copied beside the binary), its internal certificate management off
// (a self-signed CA and a serving certificate for 127.0.0.1 here instead), webhooks called by URL.
//
// Its CRD has the name of ours, and both controllers would act on every LWS: so it runs alone. Starting it deletes
// every LWS object (unless it is a switch, keepLws), takes our admission policy away, replaces the CRD in place with
// upstream's and its webhook configurations take over from ours; stopping it puts ours back the same way. At no moment
// of a switch is an LWS pod admitted with no LWS webhook configured: the StatefulSet controller keeps making pods
// (a rollout, a leader gone), and one made without its group-index label stops upstream's reconcile of its LWS for
// good. A run that died half-way is undone by cleanUpUpstreamLws, which the next start calls first.
import { constants } from 'node:fs';
import { access, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { get as httpGet } from 'node:http';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import * as k8s from '@kubernetes/client-node';
import { createServingBundle } from '../../src/admission/certificates.js';
import { processStats } from '../bench/process-stats.js';
import type { ProcessStats } from '../bench/results.js';
import { createLogger, formatDuration, type Logger } from '../../src/log.js';
import { API_GROUP, API_VERSION, CRD_NAME, KIND, LABEL_NAME, PLURAL } from '../../src/model/index.js';
import { applyLocalWebhookConfiguration, waitForPodMutation, WEBHOOK_CONFIGURATION_NAME } from './admission.js';
import { admissionPolicyPath } from './admission-policy.js';
import { localKubeConfig, readClusterState } from './cluster.js';
import { createOrReplaceCrd, installCrd } from './crd.js';
import { scrapeMetrics } from './metrics-scrape.js';
import { binPath, clusterDir, kubeconfigPath } from './paths.js';
import {
  freePort,
  GiveUp,
  isAlive,
  SERVER_PORTS,
  spawnDaemon,
  stopProcessGroup,
  waitFor,
} from '../../src/dev-server/processes.js';
import { lwsUpstreamDir } from './provision.js';
import { versions } from './versions.js';

/** The binary's name in the cache (`npm run provision`). */
export const UPSTREAM_LWS_BINARY = 'lws-controller-manager';
/** Its configurations' names once installed: config/default's kustomization prefixes `lws-` to the generated ones. */
export const UPSTREAM_WEBHOOK_CONFIGURATIONS = {
  mutating: 'lws-mutating-webhook-configuration',
  validating: 'lws-validating-webhook-configuration',
} as const;

/** Its controllers (controller-runtime names them after their kinds); each logs "Starting workers" once synced. */
const UPSTREAM_CONTROLLERS = ['leaderworkerset', 'pod', 'disaggregatedset'];

/** Where a run keeps its configuration, certificates, log and pid: in its cluster's folder, as a run is that cluster's. */
export const upstreamLwsDir = join(clusterDir, 'upstream-lws');
const statePath = join(upstreamLwsDir, 'state.json');
const hint = `see ${join(upstreamLwsDir, 'controller.log')}`;
const notProvisioned = 'run `npm run provision` (it builds upstream LeaderWorkerSet into the cache once)';

export interface UpstreamLwsOptions {
  /** The local cluster's (default: localKubeConfig()). */
  kc?: k8s.KubeConfig;
  log?: Logger;
  /**
   * `--zap-log-level`: `info` (default: its start and every reconcile error, nothing per reconcile), `debug`, or a V
   * level (upstream's Deployment runs 2). Not quieter: the start waits for the controllers' info lines.
   */
  zapLogLevel?: 'info' | 'debug' | number;
  /** How long each wait of the start may take (default 60 s). */
  timeoutMs?: number;
  /**
   * A switch, as docs/coming-from-upstream.md makes it: the LWS objects and their groups stay, and upstream's
   * controller takes them over (ours must be stopped). Default: every LWS is deleted first.
   */
  keepLws?: boolean;
}

export interface UpstreamLwsStopped {
  /** CPU seconds and peak RSS of the whole run, read just before SIGTERM. */
  stats: ProcessStats;
  /** From the process's start to its SIGTERM. */
  ranMs: number;
}

export interface UpstreamLws {
  readonly version: string;
  readonly pid: number;
  readonly logFile: string;
  readonly configFile: string;
  /** https://127.0.0.1:<port>, where the API server calls its webhooks. */
  readonly webhookUrl: string;
  /** From the call to the moment it served: CRD swap, process start, webhooks registered and called. */
  readonly startMs: number;
  /** CPU seconds and peak RSS so far (from /proc; the bench takes differences around a scenario). Throws once it exited. */
  stats(): ProcessStats;
  /**
   * Its Prometheus text (controller-runtime's, rest_client_requests_total among it), from its metrics server: HTTPS
   * with a certificate of its own making, and a bearer token it checks with the API server (TokenReview).
   */
  metrics(): Promise<string>;
  /**
   * Deletes every LWS (their pods go while upstream's webhooks still answer), its webhook configurations, then the
   * process (SIGTERM), its DisaggregatedSet CRD; puts our CRD, admission policy and webhooks back. Idempotent.
   * `keepLws`: a switch back to ours, which leaves the LWS objects and their groups as they are; upstream's webhook
   * configurations then go only once ours are in place.
   */
  stop(opts?: { keepLws?: boolean }): Promise<UpstreamLwsStopped>;
}

/** What a run records, so that a later start or cleanUpUpstreamLws can undo a run whose owner died. */
interface RunState {
  pid: number;
  startedAt: string;
}

function code(err: unknown): number | undefined {
  return err instanceof k8s.ApiException ? err.code : undefined;
}

const ignore404 = (err: unknown) => {
  if (code(err) !== 404) throw err;
};

/** The object, or undefined when the API server answers 404. */
async function orAbsent<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (err) {
    ignore404(err);
    return undefined;
  }
}

/** Upstream's files in the cache, checked before the cluster is touched. */
async function readUpstreamFiles(): Promise<{
  binary: string;
  crds: k8s.V1CustomResourceDefinition[];
  webhooks: { manifests: string; mutatingPatch: string; validatingPatch: string };
}> {
  const dir = lwsUpstreamDir();
  const read = (...path: string[]) =>
    readFile(join(dir, ...path), 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new Error(`${join(dir, ...path)} is missing (${err.code}): ${notProvisioned}`, { cause: err });
    });
  await read('PROVENANCE');
  // As linked by provision: LWS_BIN_LWS_CONTROLLER_MANAGER may point it at a binary of one's own.
  const binary = binPath(UPSTREAM_LWS_BINARY);
  await access(binary, constants.X_OK).catch((err: NodeJS.ErrnoException) => {
    throw new Error(`${binary} is not an executable (${err.code}): ${notProvisioned}`, { cause: err });
  });
  // Every CRD of its install (the manager watches them all), the LWS one first. loadYaml, not a plain parse: the typed
  // client drops the JSON names it does not map (x-kubernetes-*), see crd.ts.
  const crds = await Promise.all(
    (await crdFiles()).map(async (file) => k8s.loadYaml<k8s.V1CustomResourceDefinition>(await read('crd', file))),
  );
  crds.sort((a, b) => Number(b.metadata?.name === CRD_NAME) - Number(a.metadata?.name === CRD_NAME));
  if (crds[0]?.metadata?.name !== CRD_NAME) {
    throw new Error(`no ${CRD_NAME} among upstream's CRDs in ${join(dir, 'crd')}: ${notProvisioned} again`);
  }
  return {
    binary,
    crds,
    webhooks: {
      manifests: await read('webhook', 'manifests.yaml'),
      mutatingPatch: await read('webhook', 'mutating-patch.yaml'),
      validatingPatch: await read('webhook', 'validating-patch.yaml'),
    },
  };
}

/** Upstream's CRD files (config/crd/bases, copied by provision); none when it was never provisioned. */
async function crdFiles(): Promise<string[]> {
  const files = await readdir(join(lwsUpstreamDir(), 'crd')).catch(() => []);
  return files.filter((f) => f.endsWith('.yaml')).sort();
}

/** The CRDs of upstream's install other than the LWS one, by controller-gen's file names `<group>_<plural>.yaml`. */
async function otherUpstreamCrdNames(): Promise<string[]> {
  return (await crdFiles())
    .map((f) => f.slice(0, -'.yaml'.length).split('_'))
    .map(([group, plural]) => `${plural}.${group}`)
    .filter((name) => name !== CRD_NAME);
}

type WebhookConfiguration = k8s.V1MutatingWebhookConfiguration | k8s.V1ValidatingWebhookConfiguration;
interface PatchOp {
  op: string;
  path: string;
  value?: unknown;
}

/**
 * Upstream's webhook configurations as its kustomization installs them (the generated manifests, the pod webhooks'
 * objectSelector patches, the `lws-` prefix), pointed at a URL instead of the in-cluster Service.
 */
export function upstreamWebhookConfigurations(
  files: { manifests: string; mutatingPatch: string; validatingPatch: string },
  baseUrl: string,
  caPem: string,
): WebhookConfiguration[] {
  const patches: Record<string, PatchOp[]> = {
    MutatingWebhookConfiguration: k8s.loadYaml<PatchOp[]>(files.mutatingPatch),
    ValidatingWebhookConfiguration: k8s.loadYaml<PatchOp[]>(files.validatingPatch),
  };
  const caBundle = Buffer.from(caPem).toString('base64');
  return (k8s.loadAllYaml(files.manifests) as WebhookConfiguration[]).map((doc) => {
    const webhooks = [...(doc.webhooks ?? [])] as (k8s.V1MutatingWebhook | k8s.V1ValidatingWebhook)[];
    for (const op of patches[doc.kind ?? ''] ?? []) {
      const index = /^\/webhooks\/(\d+)$/.exec(op.path)?.[1];
      if (op.op !== 'replace' || index === undefined || Number(index) >= webhooks.length) {
        throw new Error(
          `upstream's webhook patch ${JSON.stringify({ op: op.op, path: op.path })} is not a replace of a webhook; ` +
            `tools/stack/upstream-lws.ts applies only those: extend it for this release of upstream`,
        );
      }
      webhooks[Number(index)] = op.value as k8s.V1MutatingWebhook;
    }
    return {
      ...doc,
      metadata: { name: `lws-${doc.metadata?.name}`, labels: { 'app.kubernetes.io/name': 'lws-upstream' } },
      webhooks: webhooks.map((w) => {
        const path = w.clientConfig.service?.path;
        if (!path) throw new Error(`upstream's webhook ${w.name} has no service path to turn into a URL`);
        return { ...w, clientConfig: { url: `${baseUrl}${path}`, caBundle } };
      }),
    };
  });
}

/** Upstream's CRD is installed under the name of ours (ours carries our label). */
async function upstreamCrdInstalled(ext: k8s.ApiextensionsV1Api): Promise<boolean> {
  const live = await orAbsent(ext.readCustomResourceDefinition({ name: CRD_NAME }));
  return live !== undefined && live.metadata?.labels?.['app.kubernetes.io/name'] !== 'lws-temporal';
}

/**
 * Deletes every LeaderWorkerSet in the cluster and waits until none is left (neither controller adds a finalizer),
 * then, with `pods`, until no pod labelled for an LWS is left either.
 */
async function deleteAllLws(kc: k8s.KubeConfig, log: Logger, opts: { pods: boolean }): Promise<void> {
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  // No CRD (a cluster that never had one): no LWS either.
  const list = async () =>
    (
      (await orAbsent(custom.listClusterCustomObject({ group: API_GROUP, version: API_VERSION, plural: PLURAL }))) as
        { items: { metadata: { name: string; namespace: string } }[] } | undefined
    )?.items ?? [];
  const items = await list();
  for (const { metadata } of items) {
    await custom
      .deleteNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        plural: PLURAL,
        namespace: metadata.namespace,
        name: metadata.name,
        propagationPolicy: 'Background',
      })
      .catch(ignore404);
  }
  if (items.length) log.info('deleted every LeaderWorkerSet', { count: items.length });
  await waitFor('every LeaderWorkerSet gone', async () => ((await list()).length === 0 ? true : undefined), {
    timeoutMs: 60_000,
    hint: 'look for a finalizer on the LWS objects left (`kubectl get lws -A -o yaml`)',
  });
  if (!opts.pods) return;
  await waitFor(
    'every LWS pod gone',
    async () => ((await core.listPodForAllNamespaces({ labelSelector: LABEL_NAME })).items.length ? undefined : true),
    { timeoutMs: 120_000, hint: 'the pod finisher ends terminating pods; see .lws-temporal/cluster/logs' },
  );
}

async function deleteUpstreamWebhookConfigurations(kc: k8s.KubeConfig): Promise<void> {
  const api = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  await api.deleteMutatingWebhookConfiguration({ name: UPSTREAM_WEBHOOK_CONFIGURATIONS.mutating }).catch(ignore404);
  await api.deleteValidatingWebhookConfiguration({ name: UPSTREAM_WEBHOOK_CONFIGURATIONS.validating }).catch(ignore404);
}

/** Our admission policy and binding (deploy/crd): it would validate upstream's LWS objects too. */
async function deleteOurAdmissionPolicies(kc: k8s.KubeConfig): Promise<void> {
  const api = k8s.KubernetesObjectApi.makeApiClient(kc);
  for (const doc of k8s.loadAllYaml(await readFile(admissionPolicyPath, 'utf8')) as k8s.KubernetesObject[]) {
    await api
      .delete({ apiVersion: doc.apiVersion, kind: doc.kind, metadata: { name: doc.metadata?.name } })
      .catch(ignore404);
  }
}

/**
 * Our webhooks' configuration (pods and LWS objects), for the running local cluster's admission process (cluster.ts);
 * `waitForPodMutation` then tells when the API server calls it.
 */
async function applyOurWebhooks(kc: k8s.KubeConfig): Promise<void> {
  const state = await readClusterState();
  if (!state?.pids.admission || !isAlive(state.pids.admission)) {
    throw new Error(
      `the local cluster's admission process is not running, so ${WEBHOOK_CONFIGURATION_NAME} cannot be restored: ` +
        'run `npm run cluster:down && npm run cluster:up`',
    );
  }
  const ca = await readFile(join(clusterDir, 'pki', 'admission', 'ca.crt'), 'utf8');
  await applyLocalWebhookConfiguration(kc, {
    pid: state.pids.admission,
    ca,
    origin: `https://127.0.0.1:${state.ports.admission}`,
  });
}

/**
 * Puts the cluster back as this project runs on it after an upstream run, whether it ended cleanly or not: stops a
 * recorded upstream process, deletes its webhook configurations (with failurePolicy Fail they would refuse every LWS
 * and LWS pod once it is gone), and, if upstream's CRD is installed, deletes every LWS and installs ours again; then
 * our webhooks and admission policy. In a switch (`keepLws`) upstream's webhook configurations go only once ours are
 * in place: in between the API server refuses LWS pods, which the StatefulSet controller makes again later, rather
 * than admit one without its labels. Resolves with whether anything was left to undo.
 */
export async function cleanUpUpstreamLws(
  opts: { kc?: k8s.KubeConfig; log?: Logger; keepLws?: boolean } = {},
): Promise<boolean> {
  const kc = opts.kc ?? localKubeConfig();
  const log = opts.log ?? createLogger('upstream-lws');
  const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
  const admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  const run = await readFile(statePath, 'utf8').then(
    (text) => JSON.parse(text) as RunState,
    () => undefined,
  );
  let undone = run !== undefined;
  const alive = run !== undefined && run.pid > 0 && isAlive(run.pid);
  const webhooks = [
    await orAbsent(admission.readMutatingWebhookConfiguration({ name: UPSTREAM_WEBHOOK_CONFIGURATIONS.mutating })),
    await orAbsent(admission.readValidatingWebhookConfiguration({ name: UPSTREAM_WEBHOOK_CONFIGURATIONS.validating })),
  ];
  if (webhooks.some((w) => w !== undefined)) undone = true;
  const switching = opts.keepLws === true;
  // Nobody answers them: at once, or they refuse the updates of the pods that go.
  if (!alive && !switching) await deleteUpstreamWebhookConfigurations(kc);
  const upstreamCrd = await upstreamCrdInstalled(ext);
  // While its process still runs, so that its webhooks answer for the pods that go.
  if (upstreamCrd && !switching) await deleteAllLws(kc, log, { pods: alive });
  if (alive) {
    if (!switching) await deleteUpstreamWebhookConfigurations(kc);
    log.info('stopping upstream LeaderWorkerSet', { pid: run.pid });
    await stopProcessGroup(run.pid, 10_000);
    undone = true;
  }
  // Ours before upstream's go; the CRD after, as its served check is a dry-run LWS that upstream's would refuse.
  const restoring = !(await orAbsent(admission.readMutatingWebhookConfiguration({ name: WEBHOOK_CONFIGURATION_NAME })));
  if (restoring) await applyOurWebhooks(kc);
  if (switching) await deleteUpstreamWebhookConfigurations(kc);
  if (upstreamCrd) {
    log.info('installing our CRD in place of upstream LeaderWorkerSet', { crd: CRD_NAME });
    await installCrd(kc);
    undone = true;
  }
  // Its other CRDs (DisaggregatedSet): deleting one deletes its objects, which only upstream made.
  for (const name of await otherUpstreamCrdNames()) {
    if (!(await orAbsent(ext.deleteCustomResourceDefinition({ name })))) continue;
    undone = true;
    await waitFor(
      `CRD ${name} gone`,
      async () => ((await orAbsent(ext.readCustomResourceDefinition({ name }))) ? undefined : true),
      { timeoutMs: 30_000 },
    );
  }
  if (restoring) {
    await waitForPodMutation(kc, `see ${join(clusterDir, 'logs', 'admission.log')}`);
    undone = true;
  }
  // installCrd puts the policies back with the CRD; a run that died before the CRD swap had already taken them away.
  if (undone && !upstreamCrd) await installCrd(kc);
  await rm(statePath, { force: true });
  return undone;
}

/** GET http://127.0.0.1:<port><path>; resolves with the status code. */
function httpStatus(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpGet({ host: '127.0.0.1', port, path, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** A TLS handshake to the webhook server, verified against our CA for the IP 127.0.0.1. */
function tlsHandshake(port: number, ca: string): Promise<true> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, ca, timeout: 2000 }, () => {
      socket.end();
      resolve(true);
    });
    socket.on('timeout', () => socket.destroy(new Error('timeout')));
    socket.on('error', reject);
  });
}

/** Upstream's configuration file (config.lws.x-k8s.io/v1alpha1, decoded strictly: every field must be its). */
function configuration(ports: { webhook: number; health: number; metrics: number }, certDir: string): string {
  return [
    'apiVersion: config.lws.x-k8s.io/v1alpha1',
    'kind: Configuration',
    // Off: a Lease in lws-system (absent here) would keep it from ever leading, and renewals would add API writes.
    'leaderElection:',
    '  leaderElect: false',
    // Off: its rotator would write a Secret and the caBundles for an in-cluster Service; the stack made the certificate.
    'internalCertManagement:',
    '  enable: false',
    'webhook:',
    '  host: 127.0.0.1',
    `  port: ${ports.webhook}`,
    `  certDir: ${JSON.stringify(certDir)}`,
    'health:',
    `  healthProbeBindAddress: 127.0.0.1:${ports.health}`,
    'metrics:',
    `  bindAddress: 127.0.0.1:${ports.metrics}`,
    '',
  ].join('\n');
}

/**
 * Swaps the cluster over to upstream LeaderWorkerSet and starts its controller; resolves once it serves: its webhooks
 * answer the API server (a dry-run LWS comes back defaulted, a dry-run leader pod with upstream's env) and each of
 * its controllers runs workers. Our controller (worker and trigger) must not be running: both would act on every LWS.
 */
export async function startUpstreamLws(opts: UpstreamLwsOptions = {}): Promise<UpstreamLws> {
  const started = Date.now();
  const kc = opts.kc ?? localKubeConfig();
  const log = opts.log ?? createLogger('upstream-lws');
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const files = await readUpstreamFiles();
  if (await cleanUpUpstreamLws({ kc, log })) log.warn('undid what an earlier upstream run left behind');

  const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
  const admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const core = kc.makeApiClient(k8s.CoreV1Api);

  // Recorded before the cluster changes, so that a crash from here on is undone by the next start.
  await mkdir(upstreamLwsDir, { recursive: true });
  await writeFile(statePath, JSON.stringify({ pid: 0, startedAt: new Date().toISOString() } satisfies RunState));
  if (!opts.keepLws) await deleteAllLws(kc, log, { pods: false });
  // Our webhook configuration stays until upstream's are called, so that every LWS pod made meanwhile gets its labels.
  await deleteOurAdmissionPolicies(kc);
  for (const crd of files.crds) await createOrReplaceCrd(ext, crd);
  const probe = {
    apiVersion: `${API_GROUP}/${API_VERSION}`,
    kind: KIND,
    metadata: { name: 'upstream-lws-probe' },
    spec: { leaderWorkerTemplate: { workerTemplate: { spec: { containers: [{ name: 'probe', image: 'probe' }] } } } },
  };
  const dryRunLws = () =>
    custom.createNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      plural: PLURAL,
      namespace: 'default',
      body: probe,
      dryRun: 'All',
    }) as Promise<{ spec?: { networkConfig?: { subdomainPolicy?: string } } }>;
  // Established comes a moment before the new schema serves (503 meanwhile), as in crd.ts.
  await waitFor(
    `upstream's ${PLURAL}.${API_GROUP} served`,
    async () =>
      dryRunLws().then(
        () => true,
        (err) => {
          if (code(err) === 503 || code(err) === 404) return undefined;
          throw err;
        },
      ),
    { timeoutMs: 30_000 },
  );
  log.info('upstream CRDs installed', {
    crds: files.crds.map((c) => c.metadata?.name),
    took: formatDuration(Date.now() - started),
  });

  const certDir = join(upstreamLwsDir, 'certs');
  const bundle = await createServingBundle({ hosts: ['127.0.0.1'] });
  await mkdir(certDir, { recursive: true });
  await writeFile(join(certDir, 'ca.crt'), bundle.ca.cert);
  await writeFile(join(certDir, 'tls.crt'), bundle.cert);
  await writeFile(join(certDir, 'tls.key'), bundle.key, { mode: 0o600 });
  const ports = {
    webhook: await freePort(SERVER_PORTS),
    health: await freePort(SERVER_PORTS),
    metrics: await freePort(SERVER_PORTS),
  };
  const configFile = join(upstreamLwsDir, 'config.yaml');
  await writeFile(configFile, configuration(ports, certDir));
  const logFile = join(upstreamLwsDir, 'controller.log');
  await writeFile(logFile, '');
  const args = [
    `--kubeconfig=${kubeconfigPath}`,
    `--config=${configFile}`,
    `--zap-log-level=${opts.zapLogLevel ?? 'info'}`,
  ];
  const processStarted = Date.now();
  const pid = spawnDaemon(files.binary, args, logFile, process.env, upstreamLwsDir);
  await writeFile(statePath, JSON.stringify({ pid, startedAt: new Date().toISOString() } satisfies RunState));
  // Never outlive the process that started it; its webhooks are then undone by the next start (cleanUpUpstreamLws).
  const killOnExit = () => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  };
  process.once('exit', killOnExit);
  log.info('starting upstream LeaderWorkerSet', { version: versions.lwsUpstream, pid, ports, log: logFile });

  const alive = () => {
    if (!isAlive(pid)) throw new GiveUp(`upstream LeaderWorkerSet (pid ${pid}) exited`);
  };
  const wait = <T>(what: string, check: () => Promise<T | undefined>) =>
    waitFor(
      what,
      async () => {
        alive();
        return check();
      },
      { timeoutMs, intervalMs: 100, hint },
    );
  const webhookUrl = `https://127.0.0.1:${ports.webhook}`;
  try {
    await wait("upstream's /readyz", async () =>
      (await httpStatus(ports.health, '/readyz')) === 200 ? true : undefined,
    );
    await wait("upstream's webhook server (TLS, verified against its CA)", () =>
      tlsHandshake(ports.webhook, bundle.ca.cert),
    );
    for (const body of upstreamWebhookConfigurations(files.webhooks, webhookUrl, bundle.ca.cert)) {
      if (body.kind === 'MutatingWebhookConfiguration') {
        await admission.createMutatingWebhookConfiguration({ body: body as k8s.V1MutatingWebhookConfiguration });
      } else {
        await admission.createValidatingWebhookConfiguration({ body: body as k8s.V1ValidatingWebhookConfiguration });
      }
    }
    // The API server picks new configurations up within moments: wait until it calls them.
    await wait("the API server to call upstream's LWS webhook (a dry-run LWS comes back defaulted)", async () =>
      (await dryRunLws()).spec?.networkConfig?.subdomainPolicy ? true : undefined,
    );
    // Both pod webhooks gave a pod the same labels and env until now; from here on upstream's alone.
    await admission.deleteMutatingWebhookConfiguration({ name: WEBHOOK_CONFIGURATION_NAME }).catch(ignore404);
    await wait(
      "the API server to call upstream's pod webhook (a dry-run leader pod gets LWS_LEADER_ADDRESS)",
      async () => {
        const pod = await core.createNamespacedPod({
          namespace: 'default',
          dryRun: 'All',
          body: {
            metadata: {
              name: 'upstream-lws-probe-0',
              labels: { [LABEL_NAME]: 'upstream-lws-probe', 'leaderworkerset.sigs.k8s.io/worker-index': '0' },
              annotations: { 'leaderworkerset.sigs.k8s.io/size': '1' },
            },
            spec: { containers: [{ name: 'main', image: 'registry.invalid/fake:1' }] },
          },
        });
        return pod.spec?.containers[0]?.env?.some((e) => e.name === 'LWS_LEADER_ADDRESS') ? true : undefined;
      },
    );
    // Once their informers synced (its metrics exist from before that, and /readyz is only a ping): before then an
    // LWS would wait, and the wait would count against it in the bench.
    await wait("upstream's controllers running workers (their log lines)", async () => {
      const lines = await readFile(logFile, 'utf8');
      return UPSTREAM_CONTROLLERS.every((c) => new RegExp(`Starting workers.*"controller": "${c}"`).test(lines))
        ? true
        : undefined;
    });
  } catch (err) {
    process.off('exit', killOnExit);
    await cleanUpUpstreamLws({ kc, log }).catch((cleanup: unknown) =>
      log.error('could not undo the failed start; run it again or `npm run cluster:down`', { error: cleanup }),
    );
    throw err;
  }
  const startMs = Date.now() - started;
  log.info('upstream LeaderWorkerSet serving', {
    webhook: webhookUrl,
    took: formatDuration(startMs),
    process: formatDuration(Date.now() - processStarted),
  });

  let stopped: UpstreamLwsStopped | undefined;
  return {
    version: versions.lwsUpstream,
    pid,
    logFile,
    configFile,
    webhookUrl,
    startMs,
    stats() {
      if (!isAlive(pid)) throw new Error(`upstream LeaderWorkerSet (pid ${pid}) is not running: ${hint}`);
      return processStats(pid);
    },
    metrics: () => scrapeMetrics(kc, `https://127.0.0.1:${ports.metrics}/metrics`, { what: 'upstream', verify: false }),
    async stop({ keepLws = false } = {}) {
      if (stopped) return stopped;
      const stopping = Date.now();
      if (!keepLws) await deleteAllLws(kc, log, { pods: true });
      const stats = isAlive(pid) ? processStats(pid) : { peakRssMb: 0, cpuSeconds: 0 };
      const ranMs = Date.now() - processStarted;
      // Before the process: with failurePolicy Fail, configurations nobody answers refuse every LWS and LWS pod. In a
      // switch that is what they are kept for, until ours are in place (cleanUpUpstreamLws).
      if (!keepLws) await deleteUpstreamWebhookConfigurations(kc);
      await stopProcessGroup(pid, 10_000);
      process.off('exit', killOnExit);
      await cleanUpUpstreamLws({ kc, log, keepLws });
      stopped = { stats, ranMs };
      log.info('upstream LeaderWorkerSet stopped; our CRD and webhooks are back', {
        cpuSeconds: stats.cpuSeconds,
        peakRssMb: stats.peakRssMb,
        took: formatDuration(Date.now() - stopping),
      });
      return stopped;
    },
  };
}
