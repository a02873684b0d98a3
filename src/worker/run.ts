// The Temporal worker: every lifecycle workflow and the Kubernetes activities on one task queue.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { bundleWorkflowCode, NativeConnection, Runtime, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import { createActivities } from '../activities/index.js';
import { followConfiguredApiKey } from '../config/api-key-file.js';
import { payloadCodecsFromEnv } from '../config/payload-codec.js';
import {
  connectionOptions,
  temporalUnreachable,
  workerVersioningFromEnv,
  type TemporalConfig,
  type WorkerVersioningConfig,
} from '../config/temporal.js';
import type { Logger } from '../log.js';
import { STICKY_QUEUE_TIMEOUT } from '../model/crash-recovery.js';
import { countActivityErrors } from '../observability/activity-errors.js';
import { refuseOtherClusters } from './cluster-guard.js';
import { serveMetrics, WorkerMetrics } from '../observability/metrics.js';
import { drainPinnedRuns } from './drain.js';
import { buildIdOf, deploymentOptions, setCurrentVersion, type SetCurrentOutcome } from './versioning.js';

/** Running from dist/ (compiled) or from src/ through tsx. */
const compiled = import.meta.url.endsWith('.js');
export const workflowsPath = fileURLToPath(new URL(`../workflows/index.${compiled ? 'js' : 'ts'}`, import.meta.url));
/**
 * How every workflow bundle is built (here, `npm run build` and the workflow tests). The SDK evaluates a workflow's
 * modules again for each workflow it starts, except those preloaded once into the shared V8 context. src/model is
 * pure (test/unit/model-purity.test.ts: no state, clock or randomness), so all workflows can share it: in a burst of
 * teardowns that is less work on the workflow thread before each one's first call.
 */
export const workflowBundleOptions = {
  workflowsPath,
  preloadModules: [fileURLToPath(new URL(`../model/index.${compiled ? 'js' : 'ts'}`, import.meta.url))],
};
/** The file `npm run build` writes the workflow bundle to, at the top of dist/ (tools/build/build.ts). */
export const workflowBundleFile = 'workflow-bundle.js';
const builtBundle = fileURLToPath(new URL(`../${workflowBundleFile}`, import.meta.url));

/** The worker's connection to Temporal, with an error that says what to set when the server cannot be reached. */
export function connectWorker(temporal: TemporalConfig): Promise<NativeConnection> {
  return NativeConnection.connect(connectionOptions(temporal)).catch((err: unknown) => {
    throw temporalUnreachable(temporal, err);
  });
}

/**
 * The workflow bundle the worker runs, and the build ID of its code. A bundle built ahead of time (`npm run build`,
 * LWS_WORKFLOW_BUNDLE) spares the worker webpack and its memory at start.
 */
async function loadWorkflowBundle(): Promise<{ bundle: WorkflowBundleOption; buildId: string }> {
  const codePath = process.env.LWS_WORKFLOW_BUNDLE || (compiled && existsSync(builtBundle) ? builtBundle : undefined);
  if (codePath) return { bundle: { codePath }, buildId: buildIdOf(await readFile(codePath)) };
  const { code } = await bundleWorkflowCode({ ...workflowBundleOptions, logger: Runtime.instance().logger });
  return { bundle: { code }, buildId: buildIdOf(code) };
}

export interface RunWorkerOptions {
  /** Run on the caller's connection (which the caller closes), as `npm start` does to share it with the trigger. */
  shared?: NativeConnection;
  /** Default: from the environment (workerVersioningFromEnv). */
  versioning?: WorkerVersioningConfig;
}

/**
 * Resolves when the worker has stopped. On SIGTERM / SIGINT a versioned worker whose build is no longer current first
 * serves the runs pinned to it until none is open (a second signal cuts that short); then the SDK drains it.
 */
export async function runWorker(
  temporal: TemporalConfig,
  kc: k8s.KubeConfig,
  log: Logger,
  { shared, versioning = workerVersioningFromEnv(process.env, temporal.taskQueue) }: RunWorkerOptions = {},
): Promise<void> {
  const metrics = new WorkerMetrics();
  metrics.kubeApiRequests.observe(kc);
  const connection = shared ?? (await connectWorker(temporal));
  // A shared connection is its owner's to follow (`npm start`).
  const apiKey = shared ? undefined : followConfiguredApiKey(temporal, connection, log);
  const { bundle, buildId } = await loadWorkflowBundle();
  const version: WorkerDeploymentVersion | undefined = versioning.enabled
    ? { deploymentName: versioning.deploymentName, buildId: versioning.buildId ?? buildId }
    : undefined;
  const worker = await Worker.create({
    connection,
    namespace: temporal.namespace,
    taskQueue: temporal.taskQueue,
    workflowBundle: bundle,
    // LWS_PAYLOAD_KEYS_DIR / LWS_PAYLOAD_KEY_ID: histories encrypted (docs/install.md, "Payload encryption").
    dataConverter: { payloadCodecs: payloadCodecsFromEnv() },
    ...(version ? { workerDeploymentOptions: deploymentOptions(version) } : {}),
    activities: createActivities(kc, metrics),
    // Most activities are waits on a watch: cheap, but each holds a slot for a grace period or more. With the SDK's
    // default of 100 slots, 50 concurrent rebuilds starved the short calls (deletes, creates) behind the waits.
    maxConcurrentActivityTaskExecutions: 2000,
    // A workflow task keeps its slot while its local activities (the short API calls) run, a second or more under
    // load. With the default of 40 slots, 50 teardowns started at once queued for seconds behind each other before
    // their first call, the worker StatefulSet's delete.
    maxConcurrentWorkflowTaskExecutions: 100,
    // A new workflow's first task goes to the task queue, its later ones to this worker's sticky queue. The SDK polls
    // with 10 at most, 2 of them on the task queue (it ignores maxConcurrentWorkflowTaskPolls): 50 teardowns started at
    // once found no poll waiting, and most first tasks went through the server's backlog, 0.44 s each on average.
    // With 20 polls on each queue, 4 in 5 are matched at once (a first task waits 233 ms on average, 478 ms with the
    // SDK's defaults). An idle poll is an open request.
    workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: 40 },
    nonStickyToStickyPollRatio: 0.5,
    // A task for a workflow cached on a worker that died reaches another this soon (the default is 10 s).
    stickyQueueScheduleToStartTimeout: STICKY_QUEUE_TIMEOUT,
    // Set, not derived: the SDK's default follows the heap limit (about 50 workflows at the Deployment's 256 MB) and
    // then lowers the workflow task slots to it. Our workflows are small (about 0.2 MB each in the cache).
    maxCachedWorkflows: 200,
    maxConcurrentLocalActivityExecutions: 1000,
    interceptors: {
      activity: [
        // Outermost first: a refused activity is counted as a permanent error.
        (ctx) => ({ inbound: countActivityErrors(metrics, () => ctx.info.activityType) }),
        (ctx) => ({ inbound: refuseOtherClusters(temporal.cluster, ctx.info) }),
      ],
    },
  });
  // Ready once its version is where the policy puts it: a rolling update stops an old pod only after the new build is
  // current, so the old one sees that it must drain.
  let placed = !version;
  const server = await serveMetrics({
    registry: metrics.registry,
    role: 'worker',
    healthy: () => placed && worker.getState() === 'RUNNING',
    log,
  });
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (++signals > 1) return;
    log.info('stopping', { signal });
    const drained = version
      ? drainPinnedRuns({
          service: connection.workflowService,
          namespace: temporal.namespace,
          version,
          log,
          interrupted: () => signals > 1 || worker.getState() !== 'RUNNING',
        })
      : Promise.resolve(undefined);
    void drained.then((outcome) => {
      if (outcome) log.info('drain done', { outcome });
      if (worker.getState() === 'RUNNING') worker.shutdown();
    });
  };
  const stopSignals = ['SIGTERM', 'SIGINT'] as const;
  for (const signal of stopSignals) process.on(signal, onSignal);
  // A versioned worker gets workflow tasks only while its version is current (or for the runs pinned to it): it
  // says it is running once its version is where the policy puts it.
  const running = worker.run();
  running.catch(() => undefined);
  try {
    let current: SetCurrentOutcome | undefined;
    if (version && versioning.enabled) {
      current = await setCurrentVersion(connection, {
        namespace: temporal.namespace,
        version,
        policy: versioning.setCurrent,
        log,
        // As the SDK names the worker, so that the deployment's last change shows which worker made it.
        identity: `${process.pid}@${hostname()}`,
        running: () => worker.getState() === 'RUNNING',
      });
    }
    placed = true;
    log.info('running', {
      temporal: temporal.address,
      namespace: temporal.namespace,
      taskQueue: temporal.taskQueue,
      cluster: temporal.cluster,
      apiServer: kc.getCurrentCluster()?.server,
      ...(version ? { deployment: version.deploymentName, buildId: version.buildId, version: current } : {}),
    });
    await running;
  } finally {
    for (const signal of stopSignals) process.off(signal, onSignal);
    apiKey?.stop();
    await server.close();
  }
  if (!shared) await connection.close();
  log.info('stopped');
}
