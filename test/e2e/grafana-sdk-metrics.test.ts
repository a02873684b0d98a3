// The Temporal SDK metrics the Grafana dashboard queries, read from a real worker's TEMPORAL_METRICS_PORT: the names
// in test/unit/grafana-dashboard.test.ts come from the SDK's source, and this checks the exporter as
// src/worker/sdk-logging.ts configures it (prefix, counter and unit suffixes) really writes them.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot, stateDir } from '../../tools/stack/paths.js';
import { freePort, SERVER_PORTS, waitFor } from '../../src/dev-server/processes.js';
import { startDevServerEnvironment } from '../../tools/stack/temporal.js';

const TASK_QUEUE = 'grafana-sdk-metrics';

// One workflow with an activity whose first attempt fails, and one whose workflow task always fails: between them
// every counter and histogram the dashboard reads gets a sample.
const WORKFLOWS = `import { proxyActivities } from '@temporalio/workflow';
const { flaky } = proxyActivities<{ flaky(): Promise<void> }>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '100ms' },
});
export async function withActivity(): Promise<void> {
  await flaky();
}
export async function failingTask(): Promise<void> {
  throw new TypeError('this workflow task fails on purpose');
}
`;

// A process of its own: the SDK runtime is installed once per process, and test/setup.ts installed this one's. A file,
// not --eval: the SDK's workflow threads inherit the process's flags, and they refuse --input-type.
const WORKER = `import { NativeConnection, Worker } from '@temporalio/worker';
import { installSdkRuntime } from ${JSON.stringify(pathToFileURL(join(repoRoot, 'src/worker/sdk-logging.ts')).href)};
import { createLogger } from ${JSON.stringify(pathToFileURL(join(repoRoot, 'src/log.ts')).href)};
installSdkRuntime(createLogger('sdk-metrics-worker'), process.env.TEMPORAL_METRICS_PORT);
const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
let attempts = 0;
const worker = await Worker.create({
  connection,
  taskQueue: process.env.TEMPORAL_TASK_QUEUE,
  workflowsPath: process.env.WORKFLOWS_PATH,
  activities: { flaky: async () => { if (attempts++ === 0) throw new Error('the first attempt fails on purpose'); } },
});
await worker.run();
await connection.close();
`;

describe('Grafana dashboard: the Temporal SDK metrics of a real worker', function () {
  this.timeout(90_000);

  it('exports every temporal_* series the dashboard queries', async () => {
    const dashboard = JSON.parse(await readFile(join(repoRoot, 'deploy', 'grafana', 'lws-temporal.json'), 'utf8')) as {
      panels: { targets?: { expr?: string }[] }[];
    };
    // The queries only: the descriptions name the histograms without the _bucket of their series.
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? ''));
    const wanted = [...new Set(exprs.flatMap((e) => e.match(/\btemporal_\w+/g) ?? []))].sort();
    assert.ok(wanted.length > 0, 'the dashboard queries no temporal_* metric');

    const dir = join(stateDir, 'grafana-sdk-metrics');
    await mkdir(dir, { recursive: true });
    const workflowsPath = join(dir, 'workflows.ts');
    await writeFile(workflowsPath, WORKFLOWS);
    const workerPath = join(dir, 'worker.ts');
    await writeFile(workerPath, WORKER);
    // Idle polls end empty after 1 s instead of a minute, so the "empty poll" counters get samples too.
    const env = await startDevServerEnvironment({
      dynamicConfig: { 'matching.longPollExpirationInterval': '1s' },
    });
    let worker: ChildProcess | undefined;
    let output = '';
    try {
      const metricsPort = await freePort(SERVER_PORTS);
      worker = spawn(process.execPath, ['--import', 'tsx', workerPath], {
        cwd: repoRoot,
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: env.address,
          TEMPORAL_TASK_QUEUE: TASK_QUEUE,
          TEMPORAL_METRICS_PORT: String(metricsPort),
          WORKFLOWS_PATH: workflowsPath,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      for (const stream of [worker.stdout!, worker.stderr!]) {
        stream.setEncoding('utf8').on('data', (chunk: string) => (output = (output + chunk).slice(-4000)));
      }
      // A worker that fails to start would leave the workflow waiting for the test's timeout: say so at once.
      const died = new Promise<never>((_, reject) =>
        worker!.once('exit', (code) => reject(new Error(`the worker exited (${code}); its output:\n${output}`))),
      );
      died.catch(() => undefined);
      const client = env.client.workflow;
      await Promise.race([
        client.execute('withActivity', { taskQueue: TASK_QUEUE, workflowId: 'with-activity' }),
        died,
      ]);
      const failing = await client.start('failingTask', { taskQueue: TASK_QUEUE, workflowId: 'failing-task' });

      let missing = wanted;
      await waitFor(
        'the worker to export every temporal_* series the dashboard queries',
        async () => {
          const page = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then(
            (r) => r.text(),
            () => '',
          );
          const series = new Set(page.match(/^[a-zA-Z_:][\w:]*(?=[{ ])/gm) ?? []);
          missing = wanted.filter((name) => !series.has(name));
          return missing.length === 0 ? true : undefined;
        },
        { timeoutMs: 30_000 },
      ).catch(() => undefined);
      await failing.terminate('the test has its metrics');
      assert.deepEqual(missing, [], `not on the worker's SDK metrics page; its output:\n${output}`);
    } finally {
      if (worker && worker.exitCode === null) {
        const exited = new Promise((resolve) => worker!.once('exit', resolve));
        worker.kill('SIGTERM');
        // It drains, then exits; SIGKILL if that hangs.
        const timer = setTimeout(() => worker!.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      await env.teardown();
    }
  });
});
