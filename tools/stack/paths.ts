import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { binPath, stateDir } from '../../src/dev-server/paths.js';

// Where the checkout keeps its state is the product's (`npm start` runs the dev server from there); the cluster's
// places are the stack's.
export { binDir, binPath, repoRoot, stateDir } from '../../src/dev-server/paths.js';

/**
 * Which release the local cluster runs: the newest pinned one, or with LWS_KUBERNETES=floor the oldest this project
 * supports. Each has a cluster folder and kubeconfig of its own, so the two can run side by side.
 */
export type KubernetesRelease = 'newest' | 'floor';
export function kubernetesRelease(env: NodeJS.ProcessEnv = process.env): KubernetesRelease {
  const value = env.LWS_KUBERNETES;
  if (value === undefined || value === '' || value === 'newest') return 'newest';
  if (value === 'floor') return 'floor';
  throw new Error(`LWS_KUBERNETES=${value} is not a release the local cluster runs: use newest (the default) or floor`);
}
const onFloor = kubernetesRelease() === 'floor';
export const clusterDir = join(stateDir, onFloor ? 'cluster-floor' : 'cluster');
export const kubeconfigPath = join(stateDir, onFloor ? 'kubeconfig-floor' : 'kubeconfig');

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
