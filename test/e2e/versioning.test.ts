// Worker Versioning on the Temporal dev server (docs/operations.md, "Upgrades and Worker Versioning"): a lifecycle
// stays on the build that started it while a newer build becomes current; the reconcile moves to the current build; a
// version whose pinned runs have ended reports itself drained. The workers are versioned as the worker process versions
// itself (src/worker/versioning.ts) and run stand-ins of the four workflow types with the behaviours the real types
// register (test/fixtures/versioning-workflows.ts).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { decodeVersioningBehavior, type WorkerDeploymentVersion } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import type { Logger } from '../../src/log.js';
import { startControllerProcess, type ControllerProcess } from '../../tools/stack/controller-processes.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { startDevServerEnvironment } from '../../tools/stack/temporal.js';
import { deploymentOptions, setCurrentVersion, versionStatus } from '../../src/worker/versioning.js';
import type { VersionedWorkflowType } from '../../src/workflows/versioning.js';
import { finishSignal, nudgeSignal } from '../fixtures/versioning-workflows.js';
import { testLogDir } from '../fixtures/controller.js';

const workflowsPath = fileURLToPath(new URL('../fixtures/versioning-workflows.ts', import.meta.url));
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

interface VersionedWorker {
  version: WorkerDeploymentVersion;
  connection: NativeConnection;
  stop(): Promise<void>;
}

/** Where a run is, as `temporal workflow describe` shows it. */
async function versioningOf(client: Client, workflowId: string) {
  const { workflowExecutionInfo: info } = await client.workflowService.describeWorkflowExecution({
    namespace: 'default',
    execution: { workflowId },
  });
  const versioning = info?.versioningInfo;
  return {
    behavior: decodeVersioningBehavior(versioning?.behavior),
    buildId: versioning?.deploymentVersion?.buildId ?? undefined,
  };
}

/** The build of each completed workflow task of the run, in order, from its history. */
async function tasksOn(handle: WorkflowHandle): Promise<(string | undefined)[]> {
  const { events } = await handle.fetchHistory();
  return (events ?? [])
    .filter((e) => e.workflowTaskCompletedEventAttributes)
    .map((e) => e.workflowTaskCompletedEventAttributes?.deploymentVersion?.buildId ?? undefined);
}

const { VERSION_DRAINAGE_STATUS_DRAINED } = temporal.api.enums.v1.VersionDrainageStatus;

describe('Worker Versioning on the dev server', function () {
  this.timeout(180_000);
  let env: TestWorkflowEnvironment;
  let code: string;
  const workers: VersionedWorker[] = [];
  const deploymentName = `lws-temporal-test-${randomUUID().slice(0, 8)}`;
  const taskQueue = `versioning-${randomUUID()}`;

  before(async () => {
    // Drainage is checked every 3 minutes by default, after a grace period of as long.
    [env, { code }] = await Promise.all([
      startDevServerEnvironment({
        dynamicConfig: {
          'matching.wv.VersionDrainageStatusVisibilityGracePeriod': '1s',
          'matching.wv.VersionDrainageStatusRefreshInterval': '1s',
        },
      }),
      bundleWorkflowCode({ workflowsPath }),
    ]);
  });

  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await env?.teardown();
  });

  async function startWorker(buildId: string): Promise<VersionedWorker> {
    const version = { deploymentName, buildId };
    const connection = await NativeConnection.connect({ address: env.address });
    const worker = await Worker.create({
      connection,
      taskQueue,
      workflowBundle: { code },
      workerDeploymentOptions: deploymentOptions(version),
    });
    const running = worker.run();
    const started: VersionedWorker = {
      version,
      connection,
      async stop() {
        worker.shutdown();
        await running;
        await connection.close();
      },
    };
    workers.push(started);
    return started;
  }

  const setCurrent = (w: VersionedWorker, policy: 'if-new' | 'always') =>
    setCurrentVersion(w.connection, { namespace: 'default', version: w.version, policy, log: silent });

  const start = (type: VersionedWorkflowType) =>
    env.client.workflow.start(type, { taskQueue, workflowId: `${type}-${randomUUID()}` });

  /** Waits until the run's last workflow task was completed on `buildId`. */
  const onBuild = (workflowId: string, buildId: string) =>
    waitFor(
      `${workflowId} on build ${buildId}`,
      async () => {
        const where = await versioningOf(env.client, workflowId);
        return where.buildId === buildId ? where : undefined;
      },
      { timeoutMs: 30_000 },
    );

  const versionInfo = async (w: VersionedWorker) =>
    (
      await env.client.workflowService.describeWorkerDeploymentVersion({
        namespace: 'default',
        deploymentVersion: w.version,
      })
    ).workerDeploymentVersionInfo;

  it('pins a lifecycle to build A while build B becomes current; the reconcile moves to B; A drains', async () => {
    const a = await startWorker('A');
    assert.equal(await setCurrent(a, 'if-new'), 'made-current', 'a new build becomes current');
    assert.equal(await setCurrent(a, 'if-new'), 'current', 'a restart of the current build changes nothing');

    const lifecycles = await Promise.all([start('teardownGroup'), start('provisionGroup'), start('recreateGroup')]);
    const reconcile = await start('reconcileLeaderWorkerSet');
    for (const run of lifecycles) {
      assert.deepEqual(await onBuild(run.workflowId, 'A'), { behavior: 'PINNED', buildId: 'A' }, run.workflowId);
    }
    assert.deepEqual(await onBuild(reconcile.workflowId, 'A'), { behavior: 'AUTO_UPGRADE', buildId: 'A' });

    const b = await startWorker('B');
    assert.equal(await setCurrent(b, 'if-new'), 'made-current');
    const [teardownA] = lifecycles;
    const teardownB = await start('teardownGroup');
    assert.deepEqual(await onBuild(teardownB.workflowId, 'B'), { behavior: 'PINNED', buildId: 'B' }, 'a new run');

    // A new workflow task of each: the reconcile takes it on B, the pinned teardown on A.
    await reconcile.signal(nudgeSignal);
    await teardownA!.signal(nudgeSignal);
    assert.deepEqual(await onBuild(reconcile.workflowId, 'B'), { behavior: 'AUTO_UPGRADE', buildId: 'B' });
    const nudged = await waitFor(
      'the teardown to take the nudge',
      async () => {
        const tasks = await tasksOn(teardownA!);
        return tasks.length === 2 ? tasks : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.deepEqual(nudged, ['A', 'A']);
    assert.deepEqual(await versioningOf(env.client, teardownA!.workflowId), { behavior: 'PINNED', buildId: 'A' });
    assert.deepEqual(await tasksOn(reconcile), ['A', 'B']);
    assert.equal(versionStatus[(await versionInfo(a))?.status as keyof typeof versionStatus], 'draining');

    // A worker of A that restarts does not take the current version back (a rollback stays a rollback).
    assert.equal(await setCurrent(a, 'if-new'), 'left');

    await Promise.all([...lifecycles, teardownB, reconcile].map((run) => run.signal(finishSignal)));
    assert.deepEqual(await Promise.all(lifecycles.map((run) => run.result())), ['A', 'A', 'A']);
    assert.equal(await teardownB.result(), 'B');
    assert.equal(await reconcile.result(), 'B');
    assert.deepEqual(await tasksOn(teardownA!), ['A', 'A', 'A']);
    assert.deepEqual(await tasksOn(reconcile), ['A', 'B', 'B']);

    // No run is pinned to A any more: its workers may go.
    await waitFor(
      'build A to report itself drained',
      async () => ((await versionInfo(a))?.drainageInfo?.status === VERSION_DRAINAGE_STATUS_DRAINED ? true : undefined),
      { timeoutMs: 60_000 },
    );
    assert.equal(await setCurrent(a, 'always'), 'made-current', '`always` takes it back');
  });

  it('an unversioned worker (TEMPORAL_WORKER_VERSIONING=false) runs the same workflows to their end', async () => {
    const queue = `unversioned-${randomUUID()}`;
    const connection = await NativeConnection.connect({ address: env.address });
    const worker = await Worker.create({ connection, taskQueue: queue, workflowBundle: { code } });
    await worker.runUntil(async () => {
      const runs = await Promise.all(
        (['teardownGroup', 'reconcileLeaderWorkerSet'] as const).map((type) =>
          env.client.workflow.start(type, { taskQueue: queue, workflowId: `${type}-${randomUUID()}` }),
        ),
      );
      await Promise.all(runs.map((run) => run.signal(finishSignal)));
      const results = await Promise.race([
        Promise.all(runs.map((run) => run.result())),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('not done after 20 s')), 20_000)),
      ]);
      assert.equal(results.length, 2);
    });
    await connection.close();
  });

  it('the worker process makes its build current at its first start, and finds it current when it starts again', async () => {
    // The worker reads its cluster's address at start and calls it only from activities: any kubeconfig will do.
    const dir = mkdtempSync(join(tmpdir(), 'lws-versioning-'));
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]',
        'users: [{name: none, user: {token: none}}]',
        'contexts: [{name: none, context: {cluster: none, user: none}}]',
        'current-context: none',
      ].join('\n'),
    );
    const processEnv = {
      ...process.env,
      KUBECONFIG: kubeconfig,
      // No cluster to read kube-system from: its name is given.
      LWS_CLUSTER_NAME: 'versioning-test',
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_TASK_QUEUE: `versioning-process-${randomUUID()}`,
      TEMPORAL_WORKER_DEPLOYMENT: `lws-temporal-process-${randomUUID().slice(0, 8)}`,
      TEMPORAL_WORKER_BUILD_ID: '',
      TEMPORAL_WORKER_SET_CURRENT: '',
      LOG_FORMAT: 'json',
    };
    const running = (worker: ControllerProcess) => {
      const line = worker.lines.find((l) => l.includes('"msg":"running"'));
      return JSON.parse(line ?? '{}') as { buildId?: string; version?: string };
    };
    let worker: ControllerProcess | undefined;
    try {
      worker = await startControllerProcess('worker', processEnv, testLogDir);
      const first = running(worker);
      assert.match(first.buildId ?? '', /^0\.1\.0-[0-9a-f]{12}$/, 'the build ID of the workflow bundle');
      assert.equal(first.version, 'made-current');
      const { workerDeploymentInfo } = await env.client.workflowService.describeWorkerDeployment({
        namespace: 'default',
        deploymentName: processEnv.TEMPORAL_WORKER_DEPLOYMENT,
      });
      assert.equal(workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId, first.buildId);
      await worker.stop();

      worker = await startControllerProcess('worker', processEnv, testLogDir);
      assert.deepEqual(running(worker), { ...running(worker), buildId: first.buildId, version: 'current' });
    } finally {
      await worker?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
