import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, open, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { identifyAs, reuseConnections, userAgent } from '../../src/config/kubernetes.js';
import { createLogger, formatDuration, type Logger } from '../../src/log.js';
import { installCrd } from './crd.js';
import {
  applyLocalWebhookConfiguration,
  spawnLocalAdmission,
  waitForLocalAdmission,
  waitForPodMutation,
} from './admission.js';
import { ensureStorageClass } from './volume-provisioner.js';
import { binPath, clusterDir, controlPlaneBinPath, kubeconfigPath, repoRoot } from './paths.js';
import {
  freePort,
  GiveUp,
  isAlive,
  SERVER_PORTS,
  spawnDaemon,
  stopProcessGroup,
  waitFor,
} from '../../src/dev-server/processes.js';
import { fakeNode } from './fake-nodes.js';
import { stopRealNodes } from './real-nodes.js';

/**
 * A local Kubernetes control plane on loopback: etcd, kube-apiserver, kube-controller-manager (every default
 * controller, so the garbage collector and the StatefulSet controller run), kube-scheduler, and KWOK as the kubelet
 * of a few fake Nodes. The processes are started directly rather than through kwokctl so that state lives under
 * .lws-temporal/cluster, terminating pods end exactly when their grace period does (pod-finisher.ts), and no flag table of kwokctl's has to match
 * the Kubernetes release we build.
 */

export const fakeNodeCount = 3;
/**
 * What the stack installs is managed by `lws-temporal` (the API server takes the field manager from the User-Agent up
 * to its first '/'), as the controller's own writes are: not by client-node's `node-fetch`.
 */
const STACK_AGENT = userAgent('local-stack');
const components = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'] as const;
type ComponentName = (typeof components)[number];
const controlPlane = new Set<ComponentName>(['kube-apiserver', 'kube-controller-manager', 'kube-scheduler']);
/** Where a component's binary is: the control plane is the release LWS_KUBERNETES names (paths.ts). */
const componentPath = (name: ComponentName) => (controlPlane.has(name) ? controlPlaneBinPath(name) : binPath(name));
/**
 * Every process of the cluster: the binaries, then ours, run by Node: the pod finisher (pod-finisher.ts), the
 * volume provisioner (volume-provisioner.ts) and the pod admission webhook (admission.ts).
 */
const processNames = [...components, 'pod-finisher', 'volume-provisioner', 'admission'] as const;
type ProcessName = (typeof processNames)[number];

export interface ClusterState {
  kubeconfig: string;
  server: string;
  ports: Record<
    'etcdClient' | 'etcdPeer' | 'apiserver' | 'controllerManager' | 'scheduler' | 'kwok' | 'admission',
    number
  >;
  pids: Partial<Record<ProcessName, number>>;
  startedAt: string;
}

const statePath = join(clusterDir, 'state.json');
const logDir = join(clusterDir, 'logs');
const pkiDir = join(clusterDir, 'pki');

export async function readClusterState(): Promise<ClusterState | undefined> {
  try {
    return JSON.parse(await readFile(statePath, 'utf8')) as ClusterState;
  } catch {
    return undefined;
  }
}

function allAlive(state: ClusterState): boolean {
  return processNames.every((c) => state.pids[c] !== undefined && isAlive(state.pids[c]!));
}

/** GET on the apiserver with the cluster's CA and token; resolves with the status code. */
function apiGet(state: { server: string }, path: string, ca: Buffer, token: string): Promise<number> {
  return new Promise((resolveStatus, reject) => {
    const req = request(
      new URL(path, state.server),
      { ca, headers: { Authorization: `Bearer ${token}` }, timeout: 2000 },
      (res) => {
        res.resume();
        resolveStatus(res.statusCode ?? 0);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

async function tokenAndCa(): Promise<{ token: string; ca: Buffer }> {
  return {
    token: (await readFile(join(pkiDir, 'token'), 'utf8')).trim(),
    ca: await readFile(join(pkiDir, 'apiserver.crt')),
  };
}

/** True when the recorded cluster's processes are all alive and the apiserver answers /readyz. */
export async function isClusterRunning(): Promise<ClusterState | undefined> {
  const state = await readClusterState();
  if (!state || !allAlive(state)) return undefined;
  try {
    const { token, ca } = await tokenAndCa();
    return (await apiGet(state, '/readyz', ca, token)) === 200 ? state : undefined;
  } catch {
    return undefined;
  }
}

function kubeconfigYaml(server: string, caPem: Buffer, token: string, user: string): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: lws-temporal
  cluster:
    server: ${server}
    certificate-authority-data: ${caPem.toString('base64')}
users:
- name: ${user}
  user:
    token: ${token}
contexts:
- name: lws-temporal
  context:
    cluster: lws-temporal
    user: ${user}
current-context: lws-temporal
`;
}

async function withLock<T>(fn: () => Promise<T>): Promise<T> {
  await mkdir(clusterDir, { recursive: true });
  const lockPath = join(clusterDir, '.lock');
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      const handle = await open(lockPath, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(await readFile(lockPath, 'utf8').catch(() => '0'));
      if (!holder || !isAlive(holder)) await rm(lockPath, { force: true });
      else if (Date.now() > deadline)
        throw new Error(`another cluster:up (pid ${holder}) holds ${lockPath}`, { cause: err });
      else await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lockPath, { force: true });
  }
}

function requireBinaries(): void {
  const missing = components.map(componentPath).filter((path) => !existsSync(path));
  if (missing.length) {
    throw new Error(`missing ${missing.join(', ')}: run \`npm run provision\` first`);
  }
}

export interface StartOptions {
  log?: Logger;
}

/**
 * Starts the cluster, or returns the running one (a second start never disturbs the first).
 * Resolves once it is usable: apiserver ready, fake Nodes Ready, the `default` ServiceAccount present.
 */
export async function startCluster(opts: StartOptions = {}): Promise<ClusterState & { reused: boolean }> {
  const log = opts.log ?? createLogger('cluster');
  requireBinaries();
  return withLock(async () => {
    const running = await isClusterRunning();
    if (running) {
      log.info('cluster already running', { server: running.server });
      return { ...running, reused: true };
    }
    const leftover = await readClusterState();
    if (leftover) await stopPids(leftover);
    // Before the folder goes: a real node's mounts and containers live under it.
    await stopRealNodes({ log });
    const started = Date.now();
    await rm(clusterDir, { recursive: true, force: true, maxRetries: 3 });
    await mkdir(logDir, { recursive: true });
    await mkdir(pkiDir, { recursive: true });

    const ports = {
      etcdClient: await freePort(SERVER_PORTS),
      etcdPeer: await freePort(SERVER_PORTS),
      apiserver: await freePort(SERVER_PORTS),
      controllerManager: await freePort(SERVER_PORTS),
      scheduler: await freePort(SERVER_PORTS),
      kwok: await freePort(SERVER_PORTS),
      admission: await freePort(SERVER_PORTS),
    };
    const server = `https://127.0.0.1:${ports.apiserver}`;
    const state: ClusterState = {
      kubeconfig: kubeconfigPath,
      server,
      ports,
      pids: {},
      startedAt: new Date().toISOString(),
    };
    const save = () => writeFile(statePath, JSON.stringify(state, null, 2));

    // Service-account token signing keys and one admin token for every component and for users.
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    await writeFile(join(pkiDir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
    await writeFile(join(pkiDir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const token = randomBytes(24).toString('hex');
    await writeFile(join(pkiDir, 'token'), token, { mode: 0o600 });
    await writeFile(join(pkiDir, 'tokens.csv'), `${token},lws-admin,lws-admin,"system:masters"\n`, { mode: 0o600 });

    const step = (name: string) => log.info(`starting ${name}`, { elapsed: formatDuration(Date.now() - started) });
    const daemon = async (name: ComponentName, args: string[]) => {
      step(name);
      state.pids[name] = spawnDaemon(componentPath(name), args, join(logDir, `${name}.log`));
      await save();
    };
    const assertAllAlive = () => {
      for (const [name, pid] of Object.entries(state.pids)) {
        if (!isAlive(pid)) throw new GiveUp(`${name} exited; see ${join(logDir, name + '.log')}`);
      }
    };
    const failHint = (name: string) => `see ${join(logDir, name + '.log')}; \`npm run cluster:down\` cleans up`;

    try {
      await daemon('etcd', [
        `--data-dir=${join(clusterDir, 'etcd')}`,
        `--listen-client-urls=http://127.0.0.1:${ports.etcdClient}`,
        `--advertise-client-urls=http://127.0.0.1:${ports.etcdClient}`,
        `--listen-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
        `--initial-cluster=default=http://127.0.0.1:${ports.etcdPeer}`,
        // A throwaway test cluster: durability on power loss is not worth the fsync latency.
        '--unsafe-no-fsync',
        '--log-level=warn',
      ]);
      await daemon('kube-apiserver', [
        `--etcd-servers=http://127.0.0.1:${ports.etcdClient}`,
        // Every address: pods on real nodes (real-nodes.ts) reach it through their bridge's gateway.
        '--bind-address=0.0.0.0',
        // Needed where the machine has no default route to derive an address from.
        '--advertise-address=127.0.0.1',
        // The endpoint reconciler refuses loopback addresses: real-nodes.ts writes the `kubernetes` Service's endpoint.
        '--endpoint-reconciler-type=none',
        `--secure-port=${ports.apiserver}`,
        `--cert-dir=${pkiDir}`,
        `--token-auth-file=${join(pkiDir, 'tokens.csv')}`,
        '--authorization-mode=RBAC',
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${join(pkiDir, 'sa.pub')}`,
        `--service-account-signing-key-file=${join(pkiDir, 'sa.key')}`,
        '--service-cluster-ip-range=10.96.0.0/16',
        '--allow-privileged=true',
        // A real node's name resolves nowhere: its kubelet is reached at its InternalIP (real-nodes.ts).
        '--kubelet-preferred-address-types=InternalIP,Hostname',
      ]);
      // The apiserver writes a self-signed serving certificate together with its CA into --cert-dir.
      const crt = join(pkiDir, 'apiserver.crt');
      await waitFor(
        'kube-apiserver to write its serving certificate',
        async () => (existsSync(crt) ? true : undefined),
        {
          timeoutMs: 30_000,
          hint: failHint('kube-apiserver'),
        },
      );
      const ca = await readFile(crt);
      await waitFor(
        'kube-apiserver /readyz',
        async () => {
          assertAllAlive();
          return (await apiGet(state, '/readyz', ca, token)) === 200 ? true : undefined;
        },
        { timeoutMs: 60_000, hint: failHint('kube-apiserver') },
      );
      const componentKubeconfig = join(clusterDir, 'components.kubeconfig');
      await writeFile(componentKubeconfig, kubeconfigYaml(server, ca, token, 'lws-admin'), { mode: 0o600 });
      const common = [
        `--kubeconfig=${componentKubeconfig}`,
        `--authentication-kubeconfig=${componentKubeconfig}`,
        `--authorization-kubeconfig=${componentKubeconfig}`,
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        '--kube-api-qps=200',
        '--kube-api-burst=400',
      ];
      // The pod webhook (src/admission) serves before the first pod: with failurePolicy Fail, the API server refuses
      // an LWS pod it cannot ask the webhook about. Its certificate and its start overlap the CRD's install.
      step('admission');
      let admissionStarted = Date.now();
      const admission = await spawnLocalAdmission({
        dir: join(pkiDir, 'admission'),
        port: ports.admission,
        logFile: join(logDir, 'admission.log'),
        kubeconfig: componentKubeconfig,
      });
      state.pids.admission = admission.pid;
      await save();
      let admissionMs = Date.now() - admissionStarted;
      // The garbage collector finds new resources only every 30 s: with the CRD installed before it starts, it
      // watches LeaderWorkerSets from its first moment. An LWS deleted before then would keep its StatefulSets and
      // pods until the controller manager restarted (it never sees the deletion).
      log.info('installing the LeaderWorkerSet CRD', { elapsed: formatDuration(Date.now() - started) });
      const admin = new k8s.KubeConfig();
      admin.loadFromFile(componentKubeconfig);
      identifyAs(admin, STACK_AGENT);
      await installCrd(admin);
      admissionStarted = Date.now();
      await waitForLocalAdmission(admission, assertAllAlive, failHint('admission'));
      await applyLocalWebhookConfiguration(admin, admission);
      admissionMs += Date.now() - admissionStarted;
      await daemon('kube-controller-manager', [
        ...common,
        `--secure-port=${ports.controllerManager}`,
        '--use-service-account-credentials=false',
        `--service-account-private-key-file=${join(pkiDir, 'sa.key')}`,
        `--root-ca-file=${crt}`,
        '--concurrent-statefulset-syncs=20',
        '--concurrent-gc-syncs=40',
      ]);
      await daemon('kube-scheduler', [
        `--kubeconfig=${componentKubeconfig}`,
        `--authentication-kubeconfig=${componentKubeconfig}`,
        `--authorization-kubeconfig=${componentKubeconfig}`,
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        `--secure-port=${ports.scheduler}`,
      ]);
      const kwokConfig = join(clusterDir, 'kwok.yaml');
      await copyFile(join(repoRoot, 'tools', 'stack', 'kwok-stages.yaml'), kwokConfig);
      await daemon('kwok', [
        `--kubeconfig=${componentKubeconfig}`,
        `--config=${kwokConfig}`,
        '--manage-all-nodes=false',
        '--manage-nodes-with-label-selector=type=kwok',
        `--server-address=127.0.0.1:${ports.kwok}`,
        '--cidr=10.244.0.0/16',
        // Renew node leases so the node lifecycle controller never marks the fake nodes NotReady.
        '--node-lease-duration-seconds=40',
      ]);
      step('pod-finisher');
      state.pids['pod-finisher'] = spawnDaemon(
        process.execPath,
        // `--import tsx` resolves from the working directory: the repo, where tsx is installed.
        ['--import', 'tsx', join(repoRoot, 'tools', 'stack', 'pod-finisher-main.ts'), componentKubeconfig],
        join(logDir, 'pod-finisher.log'),
        process.env,
        repoRoot,
      );
      await save();
      // The default class before the first claim can be made, so that the DefaultStorageClass admission plugin gives
      // it to every claim without a class; the provisioner binds them (the cluster has no storage of its own).
      await ensureStorageClass(admin, log);
      step('volume-provisioner');
      state.pids['volume-provisioner'] = spawnDaemon(
        process.execPath,
        [
          '--import',
          'tsx',
          join(repoRoot, 'tools', 'stack', 'volume-provisioner-main.ts'),
          componentKubeconfig,
          join(clusterDir, 'volumes'),
        ],
        join(logDir, 'volume-provisioner.log'),
        process.env,
        repoRoot,
      );
      await save();
      await writeFile(kubeconfigPath, kubeconfigYaml(server, ca, token, 'lws-admin'), { mode: 0o600 });

      const kc = localKubeConfig();
      const core = kc.makeApiClient(k8s.CoreV1Api);
      step(`${fakeNodeCount} fake nodes`);
      for (let i = 0; i < fakeNodeCount; i++) await createFakeNode(core, `kwok-node-${i}`);
      await waitFor(
        `${fakeNodeCount} Ready nodes`,
        async () => {
          assertAllAlive();
          const nodes = await core.listNode({ labelSelector: 'type=kwok' });
          const ready = nodes.items.filter((n) =>
            n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
          );
          return ready.length >= fakeNodeCount ? true : undefined;
        },
        { timeoutMs: 60_000, hint: failHint('kwok') },
      );
      await waitFor(
        'the default ServiceAccount (created by kube-controller-manager)',
        async () =>
          (await core.readNamespacedServiceAccount({ name: 'default', namespace: 'default' })) ? true : undefined,
        { timeoutMs: 60_000, hint: failHint('kube-controller-manager') },
      );
      const mutationCheck = Date.now();
      await waitForPodMutation(kc, failHint('admission'));
      log.info('admission webhook mutates LWS pods', {
        url: admission.origin,
        took: formatDuration(admissionMs + Date.now() - mutationCheck),
      });
      log.info('cluster is up', { server, kubeconfig: kubeconfigPath, took: formatDuration(Date.now() - started) });
      return { ...state, reused: false };
    } catch (err) {
      log.error('cluster start failed; stopping what was started', { error: (err as Error).message });
      await stopPids(state);
      throw err;
    }
  });
}

async function createFakeNode(core: k8s.CoreV1Api, name: string): Promise<void> {
  try {
    await core.createNode({ body: fakeNode(name) });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
}

async function stopPids(state: ClusterState): Promise<void> {
  // Clients first, etcd last, so nothing logs errors about a vanished backend while stopping.
  // The admission webhook just before the API server that calls it: its clients may still create pods until then.
  const order: ProcessName[] = [...processNames].reverse().filter((name) => name !== 'admission');
  order.splice(order.indexOf('kube-apiserver'), 0, 'admission');
  for (const name of order) {
    const pid = state.pids[name];
    if (pid !== undefined) await stopProcessGroup(pid);
  }
}

/** Stops every process of the recorded cluster and removes its state; safe to call when nothing runs. */
export async function stopCluster(opts: { log?: Logger; keepData?: boolean } = {}): Promise<boolean> {
  const log = opts.log ?? createLogger('cluster');
  return withLock(async () => {
    const state = await readClusterState();
    if (!state) return false;
    // Kubelets first: with the API server gone they would only log errors until stopped.
    await stopRealNodes({ log });
    await stopPids(state);
    if (!opts.keepData) {
      await rm(join(clusterDir, 'etcd'), { recursive: true, force: true });
      await rm(statePath, { force: true });
      await rm(kubeconfigPath, { force: true });
    }
    log.info('cluster stopped');
    return true;
  });
}

/** The servers a fault campaign restarts (tools/chaos/api-campaign.ts). */
export type RestartableComponent = 'etcd' | 'kube-apiserver';

/** How one of the cluster's processes was started: its command line and working directory, read from /proc. */
export interface ProcessCommand {
  command: string;
  args: string[];
  cwd: string;
}

async function commandOf(pid: number): Promise<ProcessCommand> {
  const [command, ...args] = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter(Boolean);
  return { command: command!, args, cwd: await readlink(`/proc/${pid}/cwd`) };
}

/** The command of every process of the running cluster, to start one the same way again once it died. */
export async function clusterCommands(): Promise<Partial<Record<ProcessName, ProcessCommand>>> {
  const state = await readClusterState();
  const out: Partial<Record<ProcessName, ProcessCommand>> = {};
  for (const [name, pid] of Object.entries(state?.pids ?? {}) as [ProcessName, number][]) {
    if (isAlive(pid)) out[name] = await commandOf(pid).catch(() => undefined);
  }
  return out;
}

/**
 * Starts again, with the commands taken earlier, every process of the cluster that exited, as a kubelet restarts a
 * control plane's static pods (kube-scheduler exits on purpose when it finds its cache corrupted, after an API server
 * restart, and counts on that). Under the cluster's lock; resolves with the names of those it started.
 */
export async function reviveExited(commands: Partial<Record<ProcessName, ProcessCommand>>): Promise<string[]> {
  return withLock(async () => {
    const state = await readClusterState();
    if (!state) return [];
    const revived: ProcessName[] = [];
    for (const [name, cmd] of Object.entries(commands) as [ProcessName, ProcessCommand][]) {
      const pid = state.pids[name];
      if (pid !== undefined && isAlive(pid)) continue;
      state.pids[name] = spawnDaemon(cmd.command, cmd.args, join(logDir, `${name}.log`), process.env, cmd.cwd);
      revived.push(name);
    }
    if (revived.length) await writeFile(statePath, JSON.stringify(state, null, 2));
    return revived;
  });
}

/**
 * kill -9 of one of the running cluster's servers and, after `downMs`, a start of the same command line (read back from
 * /proc, so exactly what startCluster ran: same ports, same data); resolves once the API server is ready again. Holds
 * the cluster's lock meanwhile, so a concurrent startCluster waits instead of taking the cluster for dead.
 */
export async function restartComponent(
  name: RestartableComponent,
  opts: { downMs: number; onKilled?: () => void },
): Promise<{ killedAt: number; readyAt: number }> {
  return withLock(async () => {
    const state = await readClusterState();
    const pid = state?.pids[name];
    if (!state || pid === undefined || !isAlive(pid)) throw new Error(`${name} is not running: nothing to restart`);
    const { command, args, cwd } = await commandOf(pid);
    process.kill(pid, 'SIGKILL');
    const killedAt = Date.now();
    opts.onKilled?.();
    while (isAlive(pid)) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, opts.downMs));
    state.pids[name] = spawnDaemon(command, args, join(logDir, `${name}.log`), process.env, cwd);
    await writeFile(statePath, JSON.stringify(state, null, 2));
    const { token, ca } = await tokenAndCa();
    await waitFor(
      `the API server's /readyz after the restart of ${name}`,
      async () => ((await apiGet(state, '/readyz', ca, token).catch(() => 0)) === 200 ? true : undefined),
      { timeoutMs: 90_000, hint: `see ${join(logDir, name + '.log')}` },
    );
    return { killedAt, readyAt: Date.now() };
  });
}

/** A KubeConfig for the running local cluster. */
export function localKubeConfig(): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  return identifyAs(reuseConnections(kc), STACK_AGENT);
}
