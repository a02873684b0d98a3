// Counts failed activity attempts by kind, for lws_activity_errors_total: permanent (non-retryable, e.g. a 422 from
// the API server) or transient (retried by Temporal: 429, 5xx, network); and, of the transient ones, the Kubernetes API
// failures by reason for lws_kube_api_retries_total (the activity's retry makes the call again).
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import { httpStatusOf, TransientKubernetesError } from '../kube/api-errors.js';
import { retryReasonOf, type KubeRetryReason } from '../kube/retry-reasons.js';
import { KUBERNETES_THROTTLED } from '../shared/failures.js';
import type { WorkerMetrics } from './metrics.js';

/**
 * The reason an error an activity threw gets its Kubernetes API call made again (kube/retry-reasons.ts), read from
 * what activities/kube-errors.ts throws; undefined when it will not be (a permanent failure) or the error is no API
 * failure (the activity's own "not yet", a cancellation).
 */
export function retryReason(err: unknown): KubeRetryReason | undefined {
  if (err instanceof ApplicationFailure) {
    if (err.type !== KUBERNETES_THROTTLED) return undefined;
    return retryReasonOf((err.details?.[0] as { code?: number } | undefined)?.code, err);
  }
  return retryReasonOf(err instanceof TransientKubernetesError ? err.code : httpStatusOf(err), err);
}

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
