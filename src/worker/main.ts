// `npm run worker`: the Temporal worker process.
import { resolveClusterName } from '../config/cluster.js';
import { loadKubeConfig } from '../config/kubernetes.js';
import { temporalConfigFromEnv } from '../config/temporal.js';
import { Runtime } from '@temporalio/worker';
import { checkLogSettings, createLogger } from '../log.js';
import { runWorker } from './run.js';

const log = createLogger('worker');
// The SDK's own metrics (task latencies, pollers, slots) on a Prometheus endpoint of their own, when asked for.
const sdkMetricsPort = process.env.TEMPORAL_METRICS_PORT;
if (sdkMetricsPort) {
  Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress: `0.0.0.0:${sdkMetricsPort}` } } } });
}
try {
  checkLogSettings();
  const kc = loadKubeConfig(process.env, 'worker');
  await runWorker(temporalConfigFromEnv(process.env, await resolveClusterName(kc)), kc, log);
} catch (err) {
  // A configuration error (no KUBECONFIG, no Temporal) already says what to do: one line, no stack trace.
  log.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}
