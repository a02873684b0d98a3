// Real nodes beside the KWOK ones: per node a containerd (with runc and a bridge CNI) and a kubelet of the cluster's
// release, on this host, so that pods run real processes that take their grace period for real. Started on demand by
// the suites that need them (ensureRealNodes), stopped with the cluster.
//
// Why on the host rather than in containers or network namespaces: the kubelets need no image of their own, and the
// host reaches every pod's address (each node's bridge is a host interface) while the API server stays on loopback.
// Each node has its own containerd, because a kubelet kills the running pods it does not know of; its own bridge and
// subnet; and its own cgroup root, so two kubelets never manage each other's pods.
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { createLogger, formatDuration, type Logger } from '../../src/log.js';
import {
  freePort,
  GiveUp,
  isAlive,
  SERVER_PORTS,
  spawnDaemon,
  stopProcessGroup,
  waitFor,
} from '../../src/dev-server/processes.js';
import { binPath, clusterDir, kubernetesRelease, localClusterInstance } from './paths.js';
import { cniPluginsDir, isProvisioned, provision, realNodeBinaries } from './provision.js';
import { runCommand } from './run.js';
import { buildStackImages } from '../images/stack-images.js';

/** Pods go to a real node only when they ask to: every other suite's pods stay on the KWOK nodes. */
export const REAL_NODE_TAINT = { key: 'lws-temporal.dev/real-node', effect: 'NoSchedule' } as const;
/** The label of a real node (KWOK's nodes have type=kwok). */
export const REAL_NODE_LABEL = { key: 'type', value: 'real' } as const;
export const realNodeCount = 2;

export interface RealNode {
  name: string;
  dir: string;
  /** containerd's socket, for ctr and crictl. */
  socket: string;
  bridge: string;
  subnet: string;
  cgroupRoot: string;
  pids: { containerd?: number; kubelet?: number };
}

export interface RealNodesState {
  nodes: RealNode[];
  /** The one kube-proxy of this host's network namespace, which all real nodes share. */
  kubeProxyPid?: number;
  /** Where pods reach the API server and anything else served on this host: the first node's bridge address. */
  hostAddress: string;
  images: { pause: string; modelServer: string };
}

const nodesDir = () => join(clusterDir, 'real-nodes');
const statePath = () => join(nodesDir(), 'state.json');

/**
 * Which slot of addresses a local cluster's real nodes take, so that two clusters (the lanes of `npm test`) never share
 * a bridge name or a subnet: the checkout's own cluster is slot 0, a named one a slot derived from its name.
 */
function slot(env: NodeJS.ProcessEnv = process.env): number {
  const instance = localClusterInstance(env);
  if (!instance) return 0;
  let hash = 0;
  for (const ch of instance) hash = (hash * 31 + ch.charCodeAt(0)) % 50;
  return hash + 1;
}

export async function readRealNodes(): Promise<RealNodesState | undefined> {
  try {
    return JSON.parse(await readFile(statePath(), 'utf8')) as RealNodesState;
  } catch {
    return undefined;
  }
}

/** A pod spec that runs on a real node: it tolerates their taint and selects their label. */
export function onRealNodes(spec: k8s.V1PodSpec): k8s.V1PodSpec {
  return {
    ...spec,
    nodeSelector: { ...spec.nodeSelector, [REAL_NODE_LABEL.key]: REAL_NODE_LABEL.value },
    tolerations: [...(spec.tolerations ?? []), { key: REAL_NODE_TAINT.key, operator: 'Exists' }],
  };
}

function containerdConfig(node: RealNode, pauseImage: string): string {
  const cri = 'io.containerd.cri.v1';
  return `version = 3
root = "${join(node.dir, 'containerd', 'root')}"
state = "${join(node.dir, 'containerd', 'state')}"

[grpc]
  address = "${node.socket}"

[plugins."${cri}.images"]
  snapshotter = "overlayfs"
  [plugins."${cri}.images".pinned_images]
    sandbox = "${pauseImage}"

[plugins."${cri}.runtime"]
  # Pods' network namespaces under this node's state, so that stopping it finds and unmounts them.
  netns_mounts_under_state_dir = true
  # Without CAP_SYS_RESOURCE (these machines drop it) no process may lower its OOM score: keep each at ours or above.
  restrict_oom_score_adj = true
  [plugins."${cri}.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."${cri}.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."${cri}.runtime".containerd.runtimes.runc.options]
        BinaryName = "${binPath('runc')}"
        SystemdCgroup = false
  [plugins."${cri}.runtime".cni]
    bin_dirs = ["${cniPluginsDir()}"]
    conf_dir = "${join(node.dir, 'cni')}"
    max_conf_num = 1
`;
}

function cniConfig(node: RealNode): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: node.bridge,
      plugins: [
        {
          type: 'bridge',
          bridge: node.bridge,
          isGateway: true,
          // No masquerade: pods talk only to this host and to each other, and the plugin would need iptables for it.
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: node.subnet }]],
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: join(node.dir, 'ipam'),
          },
        },
      ],
    },
    null,
    2,
  );
}

function kubeletConfig(node: RealNode, port: number, healthzPort: number): string {
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# The node's address is its bridge's gateway on this host (a kubelet refuses a loopback one): the API server reaches
# the kubelet there for logs and exec. It trusts every caller, as this stack trusts its own pods.
address: ${gatewayOf(node.subnet)}
port: ${port}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: ${healthzPort}
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
containerRuntimeEndpoint: unix://${node.socket}
cgroupDriver: cgroupfs
cgroupRoot: ${node.cgroupRoot}
# These machines run cgroup v1; a kubelet from 1.35 on starts there only when told to (KEP-5573).
failCgroupV1: false
failSwapOn: false
# Its own OOM score too, for the same reason (the default is -999).
oomScoreAdj: 0
# No chains of its own in this host's iptables (its canary and localnet firewall): they would outlive the node.
makeIPTablesUtilChains: false
podLogsDirectory: ${join(node.dir, 'pod-logs')}
registerWithTaints:
  - key: ${REAL_NODE_TAINT.key}
    effect: ${REAL_NODE_TAINT.effect}
serializeImagePulls: false
# A test host's disk is shared with everything else: evict only when it is really full.
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  imagefs.available: 1%
  nodefs.inodesFree: 1%
nodeStatusUpdateFrequency: 10s
`;
}

/** Starts the cluster's real nodes, or returns the running ones. The cluster must be up (startCluster). */
export async function ensureRealNodes(opts: { log?: Logger; kc: k8s.KubeConfig }): Promise<RealNodesState> {
  const log = opts.log ?? createLogger('real-nodes');
  if (kubernetesRelease() !== 'newest') {
    throw new Error(
      'real nodes run only on the newest Kubernetes: a kubelet must not be newer than its API server, and only the newest release has a kubelet here',
    );
  }
  const running = await readRealNodes();
  if (running && running.nodes.every((n) => isAlive(n.pids.containerd ?? 0) && isAlive(n.pids.kubelet ?? 0))) {
    // The images of this checkout, which may be newer than the nodes.
    const images = await buildStackImages({ log });
    if (images.modelServer.ref !== running.images.modelServer) {
      for (const node of running.nodes) await importImage(node, images.modelServer);
      running.images.modelServer = images.modelServer.ref;
      await writeFile(statePath(), JSON.stringify(running, null, 2));
    }
    return running;
  }
  if (running) await stopRealNodes({ log });
  const started = Date.now();
  if (!(await isProvisioned(realNodeBinaries))) await provision({ log, only: realNodeBinaries });
  const images = await buildStackImages({ log });
  const componentKubeconfig = join(clusterDir, 'components.kubeconfig');
  const s = slot();
  const state: RealNodesState = {
    nodes: [],
    hostAddress: gatewayOf(`10.245.${s * 4}.0/24`),
    images: { pause: images.pause.ref, modelServer: images.modelServer.ref },
  };
  // Pods on one node's bridge reach another node's pods through this host.
  await writeFile('/proc/sys/net/ipv4/ip_forward', '1');
  await mkdir(nodesDir(), { recursive: true });
  // A Node object of an earlier run would look Ready until its status went stale.
  const core = opts.kc.makeApiClient(k8s.CoreV1Api);
  const earlier = await core.listNode({ labelSelector: `${REAL_NODE_LABEL.key}=${REAL_NODE_LABEL.value}` });
  for (const node of earlier.items) await core.deleteNode({ name: node.metadata!.name! }).catch(() => undefined);
  const save = () => writeFile(statePath(), JSON.stringify(state, null, 2));
  for (let i = 0; i < realNodeCount; i++) {
    const name = `real-node-${s ? `${s}-` : ''}${i}`;
    const dir = join(nodesDir(), name);
    const node: RealNode = {
      name,
      dir,
      socket: join(dir, 'containerd.sock'),
      bridge: `lwsbr${s}n${i}`,
      subnet: `10.245.${s * 4 + i}.0/24`,
      cgroupRoot: `/lws-temporal/${name}`,
      pids: {},
    };
    state.nodes.push(node);
    await mkdir(join(dir, 'cni'), { recursive: true });
    await mkdir(join(dir, 'logs'), { recursive: true });
    await writeFile(join(dir, 'containerd.toml'), containerdConfig(node, images.pause.ref));
    await writeFile(join(dir, 'cni', '10-bridge.conflist'), cniConfig(node));
    await createBridge(node);
    log.info('starting containerd', { node: name, elapsed: formatDuration(Date.now() - started) });
    node.pids.containerd = spawnDaemon(
      binPath('containerd'),
      ['--config', join(dir, 'containerd.toml'), '--log-level', 'warn'],
      join(dir, 'logs', 'containerd.log'),
      // The shims are found next to containerd; runc by the configuration's BinaryName.
      { ...process.env, PATH: `${join(binPath('containerd'), '..')}:${process.env.PATH ?? ''}` },
    );
    await save();
  }
  for (const node of state.nodes) {
    await waitFor(
      `containerd of ${node.name} to serve`,
      async () => {
        if (!isAlive(node.pids.containerd!)) throw new GiveUp(`containerd exited; see ${join(node.dir, 'logs')}`);
        return existsSync(node.socket) ? true : undefined;
      },
      { timeoutMs: 30_000, hint: `see ${join(node.dir, 'logs', 'containerd.log')}` },
    );
    for (const image of [images.pause, images.modelServer]) await importImage(node, image);
    await createCgroupRoot(node.cgroupRoot);
    const port = await freePort(SERVER_PORTS);
    const healthzPort = await freePort(SERVER_PORTS);
    await writeFile(join(node.dir, 'kubelet.yaml'), kubeletConfig(node, port, healthzPort));
    log.info('starting the kubelet', { node: node.name, elapsed: formatDuration(Date.now() - started) });
    node.pids.kubelet = spawnDaemon(
      binPath('kubelet'),
      [
        `--config=${join(node.dir, 'kubelet.yaml')}`,
        `--kubeconfig=${componentKubeconfig}`,
        `--root-dir=${join(node.dir, 'kubelet')}`,
        `--hostname-override=${node.name}`,
        `--node-ip=${gatewayOf(node.subnet)}`,
        `--node-labels=${REAL_NODE_LABEL.key}=${REAL_NODE_LABEL.value}`,
        '--v=1',
      ],
      join(node.dir, 'logs', 'kubelet.log'),
    );
    await save();
  }
  await waitFor(
    `${realNodeCount} real nodes Ready`,
    async () => {
      for (const node of state.nodes) {
        for (const [what, pid] of Object.entries(node.pids)) {
          if (!isAlive(pid)) throw new GiveUp(`${what} of ${node.name} exited; see ${join(node.dir, 'logs')}`);
        }
      }
      const nodes = await core.listNode({ labelSelector: `${REAL_NODE_LABEL.key}=${REAL_NODE_LABEL.value}` });
      const ready = nodes.items.filter((n) =>
        n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
      return ready.length >= realNodeCount ? true : undefined;
    },
    { timeoutMs: 120_000, hint: `see the logs under ${nodesDir()}/<node>/logs` },
  );
  await pointKubernetesServiceAt(opts.kc, state.hostAddress, log);
  state.kubeProxyPid = await startKubeProxy(state, componentKubeconfig);
  await save();
  log.info('real nodes are Ready', {
    nodes: state.nodes.map((n) => n.name).join(','),
    took: formatDuration(Date.now() - started),
  });
  return state;
}

/** The bridge plugin's gateway: the subnet's first address. */
function gatewayOf(subnet: string): string {
  const [a, b, c] = subnet.split('.');
  return `${a}.${b}.${c}.1`;
}

/**
 * The node's bridge with its gateway address, before any pod: the bridge plugin would make it at the first pod, but
 * the API server's Service needs the address from the start.
 */
async function createBridge(node: RealNode): Promise<void> {
  const ip = (args: string[]) =>
    runCommand('ip', args, {
      step: `bridge ${node.bridge}: ip ${args.join(' ')}`,
      hint: 'run as root; the kernel needs bridge support',
    });
  await ip(['link', 'delete', node.bridge]).catch(() => undefined);
  await ip(['link', 'add', node.bridge, 'type', 'bridge']);
  await ip(['addr', 'add', `${gatewayOf(node.subnet)}/24`, 'dev', node.bridge]);
  await ip(['link', 'set', node.bridge, 'up']);
}

/**
 * The `kubernetes` Service's endpoint, which pods reach the API server through (in-cluster clients, the chart's
 * processes): the API server listens on every address, and its endpoint reconciler refuses a loopback one, so the
 * stack runs it with none and writes the endpoint itself.
 */
async function pointKubernetesServiceAt(kc: k8s.KubeConfig, address: string, log: Logger): Promise<void> {
  const port = Number(new URL(kc.getCurrentCluster()!.server).port);
  const discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
  const body: k8s.V1EndpointSlice = {
    metadata: {
      name: 'kubernetes',
      namespace: 'default',
      labels: {
        'kubernetes.io/service-name': 'kubernetes',
        'endpointslice.kubernetes.io/managed-by': 'lws-temporal-stack',
      },
    },
    addressType: 'IPv4',
    endpoints: [{ addresses: [address], conditions: { ready: true } }],
    ports: [{ name: 'https', port, protocol: 'TCP' }],
  };
  await discovery.deleteNamespacedEndpointSlice({ name: 'kubernetes', namespace: 'default' }).catch(() => undefined);
  await discovery.createNamespacedEndpointSlice({ namespace: 'default', body });
  log.info('the kubernetes Service points at the API server', { endpoint: `${address}:${port}` });
}

/** kube-proxy in iptables mode, for Services: pods reach the API server and the admission webhook through them. */
async function startKubeProxy(state: RealNodesState, kubeconfig: string): Promise<number> {
  const dir = join(nodesDir(), 'kube-proxy');
  await mkdir(dir, { recursive: true });
  await runCommand('iptables', ['--version'], {
    step: 'kube-proxy needs iptables',
    hint: 'install it: apt-get install iptables (Debian)',
  });
  const config = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: ${kubeconfig}
mode: iptables
hostnameOverride: ${state.nodes[0]!.name}
clusterCIDR: 10.245.0.0/16
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:${await freePort(SERVER_PORTS)}
metricsBindAddress: 127.0.0.1:${await freePort(SERVER_PORTS)}
# Leave the host's conntrack limits alone.
conntrack:
  maxPerCore: 0
`;
  await writeFile(join(dir, 'config.yaml'), config);
  return spawnDaemon(
    binPath('kube-proxy'),
    [`--config=${join(dir, 'config.yaml')}`, '--v=1'],
    join(dir, 'kube-proxy.log'),
  );
}

/** The v1 hierarchies a kubelet checks its cgroup root in; this host mounts each under /sys/fs/cgroup/<name>. */
const CGROUP_HIERARCHIES = ['cpu', 'cpuacct', 'cpuset', 'memory', 'pids', 'devices', 'freezer', 'blkio', 'systemd'];

/** The kubelet wants its cgroup root to exist in every hierarchy; a new cpuset needs its parent's CPUs and memory nodes. */
async function createCgroupRoot(cgroupRoot: string): Promise<void> {
  for (const hierarchy of CGROUP_HIERARCHIES) {
    const base = join('/sys/fs/cgroup', hierarchy);
    if (!existsSync(base)) continue;
    let dir = base;
    for (const part of cgroupRoot.split('/').filter(Boolean)) {
      const parent = dir;
      dir = join(dir, part);
      if (!existsSync(dir)) await mkdir(dir);
      if (hierarchy === 'cpuset') {
        for (const file of ['cpuset.cpus', 'cpuset.mems']) {
          const current = (await readFile(join(dir, file), 'utf8')).trim();
          if (!current) await writeFile(join(dir, file), await readFile(join(parent, file), 'utf8'));
        }
      }
    }
  }
}

/** Removes what createCgroupRoot and the kubelet made under the cgroup root, deepest first, once no process is in it. */
async function removeCgroupRoot(cgroupRoot: string): Promise<void> {
  const removeTree = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      if (entry.isDirectory()) await removeTree(join(dir, entry.name));
    }
    await rmdir(dir).catch(() => undefined);
  };
  for (const hierarchy of CGROUP_HIERARCHIES) await removeTree(join('/sys/fs/cgroup', hierarchy, cgroupRoot));
}

/**
 * A node that dies as a powered-off machine does: its kubelet killed (so the node goes NotReady), and every container
 * of it with it. Resolves with a function that boots it again (the same kubelet command line; containerd kept).
 */
export async function killNode(name: string): Promise<() => Promise<void>> {
  const state = await readRealNodes();
  const node = state?.nodes.find((n) => n.name === name);
  if (!state || !node?.pids.kubelet || !isAlive(node.pids.kubelet))
    throw new Error(`${name} is not a running real node`);
  const [command, ...args] = (await readFile(`/proc/${node.pids.kubelet}/cmdline`, 'utf8')).split('\0').filter(Boolean);
  killQuietly(node.pids.kubelet);
  for (const pid of await processesInCgroup(node.cgroupRoot)) killQuietly(pid);
  return async () => {
    node.pids.kubelet = spawnDaemon(command!, args, join(node.dir, 'logs', 'kubelet.log'));
    await writeFile(statePath(), JSON.stringify(state, null, 2));
  };
}

/** Loads an image into every real node's containerd (the product's, for the chart's pods). */
export async function loadImage(state: RealNodesState, image: { ref: string; archive: string }): Promise<void> {
  await Promise.all(state.nodes.map((node) => importImage(node, image)));
}

/** Gives a loaded image a second name on every real node: an upgrade to a new tag without a second build. */
export async function tagImage(state: RealNodesState, ref: string, newRef: string): Promise<void> {
  for (const node of state.nodes) {
    await runCommand(
      binPath('ctr'),
      ['--address', node.socket, '--namespace', 'k8s.io', 'images', 'tag', '--force', ref, newRef],
      {
        step: `tagging ${ref} as ${newRef} on ${node.name}`,
        hint: `see ${join(node.dir, 'logs', 'containerd.log')}`,
      },
    );
  }
}

async function importImage(node: RealNode, image: { ref: string; archive: string }): Promise<void> {
  await runCommand(
    binPath('ctr'),
    ['--address', node.socket, '--namespace', 'k8s.io', 'images', 'import', '--no-unpack', image.archive],
    {
      step: `loading ${image.ref} into ${node.name}`,
      hint: `see ${join(node.dir, 'logs', 'containerd.log')}; the archive is ${image.archive}`,
    },
  );
}

/** Every mount point at or below `dir`, deepest first. */
async function mountsUnder(dir: string): Promise<string[]> {
  const mountinfo = await readFile('/proc/self/mountinfo', 'utf8');
  return mountinfo
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point): point is string => point !== undefined && (point === dir || point.startsWith(`${dir}/`)))
    .sort((a, b) => b.length - a.length);
}

/** The processes in a cgroup and below it, in every v1 hierarchy that has it. */
async function processesInCgroup(cgroupRoot: string): Promise<number[]> {
  const pids = new Set<number>();
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    const procs = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
    for (const pid of procs.split('\n').filter(Boolean)) pids.add(Number(pid));
    for (const entry of entries) if (entry.isDirectory()) await walk(join(dir, entry.name));
  };
  for (const hierarchy of ['pids', 'memory', 'cpu']) await walk(join('/sys/fs/cgroup', hierarchy, cgroupRoot));
  return [...pids];
}

/**
 * Stops the real nodes and leaves nothing of them on the host: kubelets, every container and shim, containerd, the
 * mounts under their folders, their bridges.
 */
export async function stopRealNodes(opts: { log?: Logger } = {}): Promise<boolean> {
  const log = opts.log ?? createLogger('real-nodes');
  const state = await readRealNodes();
  if (!state) return false;
  for (const node of state.nodes) if (node.pids.kubelet) await stopProcessGroup(node.pids.kubelet);
  if (state.kubeProxyPid) await stopProcessGroup(state.kubeProxyPid);
  // kube-proxy's rules stay in the host's tables after it: its own cleanup mode removes them.
  if (existsSync(binPath('kube-proxy'))) {
    await runCommand(binPath('kube-proxy'), ['--cleanup'], { step: 'kube-proxy --cleanup', hint: '' }).catch(
      (err: Error) => log.warn('kube-proxy --cleanup failed', { error: err.message }),
    );
  }
  for (const node of state.nodes) {
    // The containers and their shims outlive containerd by design: kill them by their cgroups and sockets.
    for (const pid of await processesInCgroup(node.cgroupRoot)) killQuietly(pid);
    for (const pid of await shimsOf(node)) killQuietly(pid);
    if (node.pids.containerd) await stopProcessGroup(node.pids.containerd);
    for (const point of await mountsUnder(node.dir)) {
      await runCommand('umount', ['-l', point], { step: `unmounting ${point}`, hint: 'unmount it by hand' }).catch(
        (err: Error) => log.warn('could not unmount', { point, error: err.message }),
      );
    }
    await runCommand('ip', ['link', 'delete', node.bridge], { step: 'bridge', hint: '' }).catch(() => undefined);
    await removeCgroupRoot(node.cgroupRoot);
  }
  await removeKubeletChains();
  await rm(nodesDir(), { recursive: true, force: true, maxRetries: 3 });
  log.info('real nodes stopped', { nodes: state.nodes.map((n) => n.name).join(',') });
  return true;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

/** The chains a kubelet adds to iptables unless told not to (an earlier run's): the host as it was before. */
async function removeKubeletChains(): Promise<void> {
  for (const command of ['iptables', 'ip6tables']) {
    const run = (args: string[]) =>
      runCommand(command, args, { step: `${command} ${args.join(' ')}`, hint: '' }).catch(() => undefined);
    for (const chain of ['INPUT', 'OUTPUT']) await run(['-D', chain, '-j', 'KUBE-FIREWALL']);
    await run(['-F', 'KUBE-FIREWALL']);
    await run(['-X', 'KUBE-FIREWALL']);
    for (const table of ['mangle', 'filter', 'nat']) await run(['-t', table, '-X', 'KUBE-KUBELET-CANARY']);
    await run(['-t', 'mangle', '-X', 'KUBE-IPTABLES-HINT']);
  }
}

/** The containerd shims a node's containerd started: they name its socket on their command line. */
async function shimsOf(node: RealNode): Promise<number[]> {
  const out: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('containerd-shim') && cmdline.includes(node.socket)) out.push(Number(entry));
  }
  return out;
}
