import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file lives in src/stack). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Per-checkout state: links to binaries, cluster data, kubeconfig, Temporal's SQLite file. Gitignored. */
export const stateDir = join(repoRoot, '.lws-temporal');
export const binDir = join(stateDir, 'bin');
export const clusterDir = join(stateDir, 'cluster');
export const kubeconfigPath = join(stateDir, 'kubeconfig');

/**
 * Where built and downloaded server binaries are kept between checkouts, one folder per component and version.
 * LWS_TEMPORAL_CACHE overrides it; otherwise ${XDG_CACHE_HOME:-$HOME/.cache}/lws-temporal.
 */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.LWS_TEMPORAL_CACHE) return resolve(env.LWS_TEMPORAL_CACHE);
  const base = env.XDG_CACHE_HOME ? resolve(env.XDG_CACHE_HOME) : join(homedir(), '.cache');
  return join(base, 'lws-temporal');
}

/** Path of a provisioned binary, as linked into .lws-temporal/bin by `npm run provision`. */
export function binPath(name: string): string {
  return join(binDir, name);
}
