import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { startDevServerEnvironment, startTimeSkippingEnvironment } from '../../tools/stack/temporal.js';
import { binPath } from '../../tools/stack/paths.js';
import { freePort, SERVER_PORTS } from '../../src/dev-server/processes.js';

const workflowsPath = fileURLToPath(new URL('../fixtures/stack-workflows.ts', import.meta.url));

async function runOnWorker<T>(env: TestWorkflowEnvironment, fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = `stack-test-${randomUUID()}`;
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowsPath });
  return worker.runUntil(fn(taskQueue));
}

describe('Temporal servers from the provisioned binaries', function () {
  this.timeout(180_000);

  it('time-skipping: a workflow that sleeps 1 day completes in seconds of wall time', async () => {
    const env = await startTimeSkippingEnvironment();
    try {
      const started = Date.now();
      const result = await runOnWorker(env, (taskQueue) =>
        env.client.workflow.execute('sleepOneDay', { taskQueue, workflowId: `sleep-${randomUUID()}` }),
      );
      const wall = Date.now() - started;
      assert.equal(result, 'slept');
      assert.ok(wall < 60_000, `took ${wall} ms of wall time for a 1-day sleep`);
    } finally {
      await env.teardown();
    }
  });

  it('dev server: a start the SDK gave up on (over its fixed 5 s) is tried again', async function () {
    this.timeout(60_000);
    // A CLI that hangs on its first run, as a server on a busy machine answers late, then runs the real one.
    const dir = mkdtempSync(join(tmpdir(), 'lws-slow-temporal-'));
    const firstRun = join(dir, 'first-run-done');
    const cli = join(dir, 'temporal');
    writeFileSync(
      cli,
      `#!/bin/sh\nif [ ! -e '${firstRun}' ]; then touch '${firstRun}'; exec sleep 30; fi\nexec '${binPath('temporal')}' "$@"\n`,
    );
    chmodSync(cli, 0o755);
    const env = await startDevServerEnvironment({ executablePath: cli });
    try {
      assert.ok(existsSync(firstRun), 'the first start hung and was given up on');
      const result = await runOnWorker(env, (taskQueue) =>
        env.client.workflow.execute('hello', { taskQueue, workflowId: `hello-${randomUUID()}`, args: ['retried'] }),
      );
      assert.equal(result, 'hello retried');
    } finally {
      await env.teardown();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('dev server: a workflow runs, and the Web UI answers HTTP 200', async () => {
    const port = await freePort(SERVER_PORTS);
    const uiPort = await freePort(SERVER_PORTS);
    const env = await startDevServerEnvironment({ port, uiPort });
    try {
      const result = await runOnWorker(env, (taskQueue) =>
        env.client.workflow.execute('hello', { taskQueue, workflowId: `hello-${randomUUID()}`, args: ['dev server'] }),
      );
      assert.equal(result, 'hello dev server');
      const res = await fetch(`http://127.0.0.1:${uiPort}/`);
      assert.equal(res.status, 200);
      assert.match(await res.text(), /<html/i);
    } finally {
      await env.teardown();
    }
  });
});
