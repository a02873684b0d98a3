// What `npm run build` and the image's build stage produce in dist/:
//   1. tsc (docker/tsconfig.build.json): every module the processes run, one file each, plus dist/workflows/index.js
//      (the worker bundles its workflows from it when no bundle is given) and dist/cli/main.js;
//   2. the workflow bundle (dist/workflow-bundle.js), so the worker never runs webpack at start;
//   3. each process entry (dist/worker/main.js, dist/trigger/main.js, dist/main.js) replaced by a single-file bundle
//      of it and its dependencies (esbuild). Node keeps a record, the source and compiled code of every ES module it
//      loads: @kubernetes/client-node alone is about 830 of them and 70 MB of RSS. Bundled, the trigger starts at
//      about 90 MB instead of 150.
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { bundleWorkflowCode } from '@temporalio/worker';
import * as esbuild from 'esbuild';
import { workflowBundleFile, workflowBundleOptions } from '../../src/worker/run.js';
import { staleReason } from './build-freshness.js';
import { repoRoot } from '../../src/dev-server/paths.js';

/**
 * The entries bundled into one file each. The worker keeps the Temporal SDK outside its bundle: the SDK loads its
 * native core and webpack from node_modules, and an activity's ApplicationFailure must be the very class the SDK
 * checks. The trigger has neither, so it bundles the Temporal client too.
 */
export const processEntries = [
  { entry: 'worker/main', external: ['@temporalio/*'] },
  { entry: 'trigger/main', external: [] },
  { entry: 'main', external: ['@temporalio/*'] },
  { entry: 'admission/main', external: [] },
] as const;

const srcDir = join(repoRoot, 'src');

/**
 * A bundle has one import.meta.url, the bundle's own. Modules that find files next to themselves (src/worker/run.ts
 * finds dist/workflows, src/dev-server/paths.ts the repository) get the URL tsc's output of them would have, so the
 * bundle looks in the same places as the unbundled build.
 */
function moduleUrlsAsCompiled(outFile: string): esbuild.Plugin {
  return {
    name: 'module-urls-as-compiled',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, async (args) => {
        if (!args.path.startsWith(srcDir + sep)) return undefined;
        const source = await readFile(args.path, 'utf8');
        if (!source.includes('import.meta.url')) return undefined;
        const compiled = relative(srcDir, args.path).replace(/\.ts$/, '.js');
        const fromBundle = relative(dirname(outFile), compiled).split(sep).join('/');
        const url = `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`;
        return { contents: source.replaceAll('import.meta.url', url), loader: 'ts' };
      });
    },
  };
}

/** Step 3 for one entry: `outDir`/<entry>.js (or `outName`.js), with a source map next to it. */
export async function bundleEntry(
  outDir: string,
  entry: string,
  external: readonly string[],
  outName: string = entry,
): Promise<string> {
  const outfile = join(outDir, `${outName}.js`);
  await esbuild.build({
    entryPoints: [join(srcDir, `${entry}.ts`)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: [...external],
    // Names stay, so that stack traces and logs read without the source map.
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'linked',
    // CommonJS dependencies (client-node's) call require(); an ES module has none of its own.
    banner: {
      js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
    },
    plugins: [moduleUrlsAsCompiled(relative(outDir, outfile))],
    logLevel: 'warning',
  });
  return outfile;
}

/** Step 2 (also `npm run bundle:workflows`): the workflow bundle a worker loads instead of running webpack. */
export async function writeWorkflowBundle(file: string): Promise<number> {
  const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error };
  const { code } = await bundleWorkflowCode({ ...workflowBundleOptions, logger: quiet });
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, code);
  return code.length;
}

export async function buildDist(outDir: string, progress: (step: string) => void): Promise<void> {
  const out = resolve(outDir);
  progress('compiling src/ with tsc (docker/tsconfig.build.json)');
  await promisify(execFile)(
    join(repoRoot, 'node_modules', '.bin', 'tsc'),
    ['-p', 'docker/tsconfig.build.json', '--outDir', out],
    { cwd: repoRoot },
  );
  progress('bundling the workflows');
  await writeWorkflowBundle(join(out, workflowBundleFile));
  for (const { entry, external } of processEntries) {
    progress(`bundling ${entry}.js`);
    await bundleEntry(out, entry, external);
  }
}

/** What a build reads: a change to any of them makes dist/ stale. */
const buildInputs = [
  'src',
  'package-lock.json',
  'tsconfig.json',
  'docker/tsconfig.build.json',
  'scripts/build.ts',
  'tools/build',
];

/** Why `outDir` must be built again before a process runs from it (see staleReason), or undefined. */
export function distStaleReason(outDir: string): string | undefined {
  const outputs = [...processEntries.map(({ entry }) => join(outDir, `${entry}.js`)), join(outDir, workflowBundleFile)];
  return staleReason(
    repoRoot,
    buildInputs.map((input) => join(repoRoot, input)),
    outputs,
  );
}
