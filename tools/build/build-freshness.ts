// Whether a build's outputs are older than its inputs, from file times (as make decides), so that `npm start` builds
// dist/ only when the sources changed.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The file changed last under `path` (itself if a file), or undefined if there is none. */
function newest(path: string): { path: string; mtimeMs: number } | undefined {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return undefined;
  if (!stat.isDirectory()) return { path, mtimeMs: stat.mtimeMs };
  return readdirSync(path)
    .map((name) => newest(join(path, name)))
    .reduce((a, b) => (b && (!a || b.mtimeMs > a.mtimeMs) ? b : a), undefined);
}

/**
 * Why the outputs must be built again, or undefined when they are up to date: an output is missing, or an input (a
 * file, or any file in a directory) changed after the oldest output was written. Paths in the reason are relative to
 * `root`.
 */
export function staleReason(root: string, inputs: string[], outputs: string[]): string | undefined {
  const missing = outputs.find((file) => !existsSync(file));
  if (missing) return `${relative(root, missing)} is missing`;
  const builtAt = Math.min(...outputs.map((file) => statSync(file).mtimeMs));
  const changed = inputs.map(newest).find((file) => file !== undefined && file.mtimeMs > builtAt);
  return changed ? `${relative(root, changed.path)} changed since the last build` : undefined;
}
