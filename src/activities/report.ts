// Teardown and recovery durations into the worker's Prometheus histograms. The workflow reports them through this
// activity because workflow code runs in a sandbox and cannot touch process state.
import type { WorkerMetrics } from '../observability/metrics.js';
import type { ReportActivities } from './types.js';

export async function reportTeardown(
  metrics: WorkerMetrics | undefined,
  input: Parameters<ReportActivities['reportTeardown']>[0],
): Promise<void> {
  if (!metrics) return;
  const labels = { policy: input.policy, lifecycle: input.lifecycle };
  if (input.teardownMs !== undefined) metrics.teardown.observe(labels, input.teardownMs / 1000);
  if (input.recoveryMs !== undefined) metrics.recovery.observe(labels, input.recoveryMs / 1000);
}
