// Counts failed activity attempts by kind, for lws_activity_errors_total: permanent (non-retryable, e.g. a 422 from
// the API server) or transient (retried by Temporal: 429, 5xx, network); and, of the transient ones, the Kubernetes API
// failures by reason for lws_kube_api_retries_total (the activity's retry makes the call again).
import { ApplicationFailure } from '@temporalio/common';
import { retryReason } from '../activities/kube-errors.js';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import type { WorkerMetrics } from './metrics.js';

export function countActivityErrors(
  metrics: WorkerMetrics,
  activityType: () => string,
): ActivityInboundCallsInterceptor {
  return {
    async execute(
      input: ActivityExecuteInput,
      next: Next<ActivityInboundCallsInterceptor, 'execute'>,
    ): Promise<unknown> {
      try {
        return await next(input);
      } catch (err) {
        const permanent = err instanceof ApplicationFailure && err.nonRetryable;
        metrics.activityErrors.inc({ activity: activityType(), kind: permanent ? 'permanent' : 'transient' });
        const reason = permanent ? undefined : retryReason(err);
        if (reason) metrics.kubeApiRetries.inc({ component: 'worker', reason });
        throw err;
      }
    },
  };
}
