import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { binPath, stateDir } from '../../src/dev-server/paths.js';

// Where the checkout keeps its state is the product's (`npm start` runs the dev server from there); the cluster's
// places are the stack's.
export { binDir, binPath, repoRoot, stateDir } from '../../src/dev-server/paths.js';

/**
 * Which release the local cluster runs: the newest pinned one, or with LWS_KUBERNETES=floor the oldest this project
 * supports. Each has a cluster folder and kubeconfig of its own (localClusterPaths), so the two can run side by side.
 */
export type KubernetesRelease = 'newest' | 'floor';
export function kubernetesRelease(env: NodeJS.ProcessEnv = process.env): KubernetesRelease {
  const value = env.LWS_KUBERNETES;
  if (value === undefined || value === '' || value === 'newest') return 'newest';
  if (value === 'floor') return 'floor';
  throw new Error(`LWS_KUBERNETES=${value} is not a release the local cluster runs: use newest (the default) or floor`);
}
/**
 * Which local cluster of that release: the checkout's own, or with LWS_LOCAL_CLUSTER=<name> one more beside it
 * (`npm test` runs its end-to-end lanes on two at once).
 */
export function localClusterInstance(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env.LWS_LOCAL_CLUSTER;
  if (value === undefined || value === '') return undefined;
  if (/^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$/.test(value)) return value;
  throw new Error(
    `LWS_LOCAL_CLUSTER=${value} is not a cluster name: use lowercase letters, digits and '-' (32 at most)`,
  );
}

/** A local cluster's folder (its processes' state, logs, an upstream controller's run) and its kubeconfig. */
export function localClusterPaths(env: NodeJS.ProcessEnv = process.env): {
  clusterDir: string;
  kubeconfigPath: string;
} {
  const instance = localClusterInstance(env);
  const suffix = `${kubernetesRelease(env) === 'floor' ? '-floor' : ''}${instance ? `-${instance}` : ''}`;
  return { clusterDir: join(stateDir, `cluster${suffix}`), kubeconfigPath: join(stateDir, `kubeconfig${suffix}`) };
}
const onFloor = kubernetesRelease() === 'floor';
export const { clusterDir, kubeconfigPath } = localClusterPaths();

/**
 * Where built and downloaded server binaries are kept between checkouts, one folder per component and version.
 * LWS_TEMPORAL_CACHE overrides it; otherwise ${XDG_CACHE_HOME:-$HOME/.cache}/lws-temporal.
 */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.LWS_TEMPORAL_CACHE) return resolve(env.LWS_TEMPORAL_CACHE);
  const base = env.XDG_CACHE_HOME ? resolve(env.XDG_CACHE_HOME) : join(homedir(), '.cache');
  return join(base, 'lws-temporal');
}

/** The floor's control-plane binaries are linked under this suffix (kube-apiserver-floor, ...). */
export const FLOOR_SUFFIX = '-floor';

/** A control-plane binary (kube-apiserver, kube-controller-manager, kube-scheduler) of the release the cluster runs. */
export function controlPlaneBinPath(name: string): string {
  return binPath(onFloor ? `${name}${FLOOR_SUFFIX}` : name);
}
