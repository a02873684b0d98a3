// `npm start`: the production entry. Worker and trigger in one process, against KUBECONFIG (or the in-cluster
// service account) and TEMPORAL_ADDRESS. Without TEMPORAL_ADDRESS it runs an embedded Temporal dev server.
import * as k8s from '@kubernetes/client-node';
import { followConfiguredApiKey } from './config/api-key-file.js';
import { resolveClusterName } from './config/cluster.js';
import { loadKubeConfig } from './config/kubernetes.js';
import { temporalConfigFromEnv, workerVersioningFromEnv } from './config/temporal.js';
import { checkLogSettings, createLogger } from './log.js';
import { defaultMetricsPorts } from './observability/metrics.js';
import { devServerDbPath, startDevServer, type DevServer } from './dev-server/dev-server.js';
import { runTrigger } from './trigger/run.js';
import { connectWorker, runWorker } from './worker/run.js';
import { installSdkRuntime } from './worker/sdk-logging.js';

const log = createLogger('lws-temporal');

/** A clear error, before any workflow starts, when the cluster cannot be reached. */
async function checkCluster(kc: k8s.KubeConfig): Promise<void> {
  const server = kc.getCurrentCluster()?.server ?? '(none)';
  try {
    await kc.makeApiClient(k8s.VersionApi).getCode();
  } catch (err) {
    throw new Error(
      `cannot reach the Kubernetes API at ${server} (${(err as Error).message}). Start a local cluster with \`npm run cluster:up\` and export the KUBECONFIG it prints, or point KUBECONFIG at your cluster.`,
      { cause: err },
    );
  }
}

async function main(): Promise<void> {
  checkLogSettings();
  installSdkRuntime(createLogger('worker'), process.env.TEMPORAL_METRICS_PORT);
  const kc = loadKubeConfig(process.env, 'worker+trigger');
  await checkCluster(kc);
  const cluster = await resolveClusterName(kc);
  let devServer: DevServer | undefined;
  if (!process.env.TEMPORAL_ADDRESS) {
    devServer = await startDevServer({ dbFilename: devServerDbPath });
    process.env.TEMPORAL_ADDRESS = devServer.address;
    log.info('TEMPORAL_ADDRESS is not set: running an embedded Temporal dev server', {
      address: devServer.address,
      webUi: devServer.uiUrl,
      db: devServerDbPath,
      pid: devServer.child.pid,
    });
  }
  const temporal = temporalConfigFromEnv(process.env, cluster);
  // The embedded dev server keeps its history across restarts: a checkout switched back to an older commit must get
  // its build back as the current version.
  const versioning = workerVersioningFromEnv(process.env, temporal.taskQueue, {
    setCurrent: devServer ? 'always' : undefined,
  });
  // One process, two metrics servers: the worker's on METRICS_PORT, the trigger's on the next port.
  const metricsPort = Number(process.env.METRICS_PORT ?? defaultMetricsPorts.worker);
  const triggerEnv = { ...process.env, METRICS_PORT: String(metricsPort === 0 ? 0 : metricsPort + 1) };
  // One connection for both: the trigger's starts then ask the server for eager workflow start, and the first task
  // of a teardown comes back with its start, to this process's worker, instead of through the task queue.
  const connection = await connectWorker(temporal);
  const apiKey = followConfiguredApiKey(temporal, connection, log);
  // A KubeConfig each (the connections stay shared): lws_kube_api_requests_total counts each role's requests apart.
  const triggerKc = loadKubeConfig(process.env, 'worker+trigger');
  const trigger = await runTrigger(temporal, triggerKc, createLogger('trigger'), triggerEnv, connection);
  const stopTrigger = () => void trigger.stop();
  // The worker stops on SIGTERM / SIGINT by itself (an old build first drains its pinned runs); the trigger stops at once.
  process.once('SIGTERM', stopTrigger);
  process.once('SIGINT', stopTrigger);
  await runWorker(temporal, kc, createLogger('worker'), { shared: connection, versioning });
  await trigger.stop();
  apiKey?.stop();
  await connection.close();
  await devServer?.stop();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    log.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  },
);
