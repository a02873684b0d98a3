// What the Dockerfile's build stage does, without Docker: compile with docker/tsconfig.build.json and bundle the
// workflows, then check that the compiled output runs on plain Node.js (no tsx): its modules load, and the worker
// can also bundle its workflows from the compiled dist/workflows/index.js, the path it computes itself.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { bundleWorkflowCode } from '@temporalio/worker';
import { repoRoot, stateDir } from '../../src/stack/paths.js';

const run = promisify(execFile);

describe('the image build (tsc with docker/tsconfig.build.json)', function () {
  this.timeout(180_000);
  // Inside the repository, so that the compiled modules resolve node_modules as they do in the image's /app.
  const outDir = join(stateDir, 'deploy-test', `dist-${process.pid}`);

  before(async () => {
    await mkdir(outDir, { recursive: true });
    await run(join(repoRoot, 'node_modules/.bin/tsc'), ['-p', 'docker/tsconfig.build.json', '--outDir', outDir], {
      cwd: repoRoot,
    });
  });

  after(async () => {
    await rm(outDir, { recursive: true, force: true });
  });

  it('emits the entry points the image runs', () => {
    for (const file of ['worker/main.js', 'trigger/main.js', 'main.js', 'workflows/index.js']) {
      assert.ok(existsSync(join(outDir, file)), `dist/${file}`);
    }
  });

  it('the compiled modules load on plain Node.js', async () => {
    const script =
      'Promise.all(process.argv.slice(1).map((f) => import(f))).then(() => console.log("loaded"), (e) => { console.error(e); process.exit(1); })';
    const modules = ['worker/run.js', 'trigger/run.js', 'activities/index.js'].map(
      (f) => pathToFileURL(join(outDir, f)).href,
    );
    // A child without the tsx loader that mocha runs under, as in the image.
    const { stdout } = await run(process.execPath, ['-e', script, ...modules], {
      cwd: repoRoot,
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    assert.match(stdout, /loaded/);
  });

  it('the worker bundles its workflows from the compiled dist/workflows/index.js', async () => {
    const { code } = await bundleWorkflowCode({
      workflowsPath: join(outDir, 'workflows/index.js'),
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
    });
    assert.ok(code.length > 0);
  });

  it("the build stage's bundle step (scripts/bundle-workflows.ts) writes the bundle LWS_WORKFLOW_BUNDLE names", async () => {
    const bundle = join(outDir, 'workflow-bundle.js');
    await run(join(repoRoot, 'node_modules/.bin/tsx'), ['scripts/bundle-workflows.ts', bundle], { cwd: repoRoot });
    const code = await readFile(bundle, 'utf8');
    for (const workflow of ['reconcileLeaderWorkerSet', 'provisionGroup', 'teardownGroup', 'recreateGroup']) {
      assert.ok(code.includes(workflow), `the bundle holds ${workflow}`);
    }
  });

  // Without LWS_WORKFLOW_BUNDLE (the image sets it), the compiled worker bundles from workflowsPath at start.
  it('the compiled worker points workflowsPath at a file that exists in dist/', async () => {
    const compiled = (await import(pathToFileURL(join(outDir, 'worker/run.js')).href)) as { workflowsPath: string };
    assert.ok(
      existsSync(compiled.workflowsPath),
      `compiled worker/run.js looks for its workflows at ${compiled.workflowsPath}, which tsc does not emit: ` +
        'src/worker/run.ts must pick ../workflows/index.js when it runs compiled (import.meta.url ends in .js)',
    );
  });
});
