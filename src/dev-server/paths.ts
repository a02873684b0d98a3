import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root of a checkout (this file lives in src/dev-server). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Per-checkout state: links to binaries, cluster data, kubeconfig, Temporal's SQLite file. Gitignored. */
export const stateDir = join(repoRoot, '.lws-temporal');
export const binDir = join(stateDir, 'bin');

/** Path of a provisioned binary, as linked into .lws-temporal/bin by `npm run provision`. */
export function binPath(name: string): string {
  return join(binDir, name);
}
