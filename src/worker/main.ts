// `npm run worker`: the Temporal worker process.
import { resolveClusterName } from '../config/cluster.js';
import { loadKubeConfig } from '../config/kubernetes.js';
import { temporalConfigFromEnv } from '../config/temporal.js';
import { checkLogSettings, createLogger } from '../log.js';
import { runWorker } from './run.js';
import { installSdkRuntime } from './sdk-logging.js';

const log = createLogger('worker');
try {
  checkLogSettings();
  // TEMPORAL_METRICS_PORT: the SDK's own metrics on a Prometheus endpoint of their own.
  installSdkRuntime(log, process.env.TEMPORAL_METRICS_PORT);
  const kc = loadKubeConfig(process.env, 'worker');
  await runWorker(temporalConfigFromEnv(process.env, await resolveClusterName(kc)), kc, log);
} catch (err) {
  // A configuration error (no KUBECONFIG, no Temporal) already says what to do: one line, no stack trace.
  log.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}
