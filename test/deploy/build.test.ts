// What `npm run build` and the Dockerfile's build stage do (tools/build/build.ts), without Docker: compile, bundle the
// workflows, bundle each process entry into one file. Then check that the output runs on plain Node.js (no tsx):
// the bundled entries start and hold their dependencies, the compiled modules load, and both find the workflows
// where tsc put them. The bundled entries run against a real stack in test/e2e/bench.test.ts.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { bundleWorkflowCode } from '@temporalio/worker';
import * as esbuild from 'esbuild';
import { buildDist, bundleEntry, processEntries } from '../../tools/build/build.js';
import { workflowBundleFile } from '../../src/worker/run.js';
import { repoRoot, stateDir } from '../../tools/stack/paths.js';

const run = promisify(execFile);
const { dependencies } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};

/** What a built file still imports at run time, as esbuild reads it: every import and require of a package. */
async function importedPackages(file: string): Promise<string[]> {
  const { metafile } = await esbuild.build({
    entryPoints: [file],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    metafile: true,
    logLevel: 'silent',
  });
  const specs = Object.values(metafile.inputs).flatMap((input) => input.imports.map((i) => i.path));
  const names = specs.map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!));
  return [...new Set(names)].sort();
}

describe('the build (npm run build, the Dockerfile build stage)', function () {
  this.timeout(180_000);
  // Inside the repository, so that the output resolves node_modules as it does in the image's /app.
  const outDir = join(stateDir, 'deploy-test', `dist-${process.pid}`);
  /** Plain Node.js: a child without the tsx loader that mocha runs under, as in the image. */
  const plainNode = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    run(process.execPath, args, { cwd: repoRoot, env: { ...process.env, NODE_OPTIONS: '', ...env } });

  before(async () => {
    await mkdir(outDir, { recursive: true });
    await buildDist(outDir, () => undefined);
  });

  after(async () => {
    await rm(outDir, { recursive: true, force: true });
  });

  it('emits the entry points the image runs, the workflow bundle and the CLI', () => {
    for (const file of ['worker/main.js', 'trigger/main.js', 'main.js', 'workflows/index.js', 'cli/main.js']) {
      assert.ok(existsSync(join(outDir, file)), `dist/${file}`);
    }
    assert.ok(existsSync(join(outDir, workflowBundleFile)));
  });

  for (const { entry, external } of processEntries) {
    it(`dist/${entry}.js is one file: it imports only Node.js's modules${external.length ? ' and the Temporal SDK' : ''}`, async () => {
      const file = join(outDir, `${entry}.js`);
      const node = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
      const packages = (await importedPackages(file)).filter((p) => !node.has(p));
      // Only the SDK's packages, and only those the image installs (`npm ci --omit=dev`).
      const allowed = packages.filter((p) => external.length > 0 && p.startsWith('@temporalio/') && p in dependencies);
      assert.deepEqual(packages, allowed, `dist/${entry}.js imports packages (or files) it should hold`);
      if (external.length > 0) assert.ok(allowed.includes('@temporalio/worker'), 'the SDK stays in node_modules');
    });

    it(`dist/${entry}.js starts on plain Node.js and stops at a missing KUBECONFIG with what to do`, async () => {
      const failed = await plainNode([join(outDir, `${entry}.js`)], {
        KUBECONFIG: join(outDir, 'no-such-kubeconfig'),
        TEMPORAL_ADDRESS: '127.0.0.1:1',
        // As deployed: the admission process keeps its certificate in a Secret, so it needs the cluster too.
        ADMISSION_CERT_SECRET: 'lws-temporal-admission-certs',
        ADMISSION_NAMESPACE: 'lws-temporal-system',
      }).then(
        () => assert.fail('it started without a cluster'),
        (err: { code: number; stdout: string; stderr: string }) => err,
      );
      assert.equal(failed.code, 1);
      const output = failed.stdout + failed.stderr;
      assert.match(output, /no-such-kubeconfig does not exist\. Start a local cluster with `npm run cluster:up`/);
      assert.doesNotMatch(output, /^\s+at /m, 'a one-line error, no stack trace');
    });
  }

  it('a bundled module finds the workflows where tsc put them, at any depth of dist/', async () => {
    const compiled = (await import(pathToFileURL(join(outDir, 'worker/run.js')).href)) as { workflowsPath: string };
    assert.equal(compiled.workflowsPath, join(outDir, 'workflows/index.js'));
    assert.ok(existsSync(compiled.workflowsPath), 'src/worker/run.ts picks ../workflows/index.js when compiled');
    // src/worker/run.ts bundled at the top of dist/, as in dist/main.js, and one level down, as in dist/worker/main.js.
    for (const outName of ['run-bundled-at-top', 'worker/run-bundled']) {
      const file = await bundleEntry(outDir, 'worker/run', ['@temporalio/*'], outName);
      const bundled = (await import(pathToFileURL(file).href)) as { workflowsPath: string };
      assert.equal(bundled.workflowsPath, compiled.workflowsPath, outName);
    }
  });

  it('the compiled modules load on plain Node.js', async () => {
    const script =
      'Promise.all(process.argv.slice(1).map((f) => import(f))).then(() => console.log("loaded"), (e) => { console.error(e); process.exit(1); })';
    const modules = ['worker/run.js', 'trigger/run.js', 'activities/index.js'].map(
      (f) => pathToFileURL(join(outDir, f)).href,
    );
    const { stdout } = await plainNode(['-e', script, ...modules]);
    assert.match(stdout, /loaded/);
  });

  it('the worker can bundle its workflows from the compiled dist/workflows/index.js', async () => {
    const { code } = await bundleWorkflowCode({
      workflowsPath: join(outDir, 'workflows/index.js'),
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
    });
    assert.ok(code.length > 0);
  });

  it('the workflow bundle holds every workflow', async () => {
    const code = await readFile(join(outDir, workflowBundleFile), 'utf8');
    for (const workflow of ['reconcileLeaderWorkerSet', 'provisionGroup', 'teardownGroup', 'recreateGroup']) {
      assert.ok(code.includes(workflow), `the bundle holds ${workflow}`);
    }
  });
});
