// Activity stubs with the retry behaviour each kind needs. Transient API errors (429, 5xx, network) are retried
// with backoff; the activities raise permanent ones (400, 403, 422) as non-retryable failures.
import { ActivityCancellationType, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { AllActivities } from '../activities/types.js';

const retry = { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '10s' };

/**
 * Single API calls: short, retried until they succeed or fail permanently. Local activities: they run in the
 * worker that runs the workflow and their results ride on the workflow task's completion, so a call costs the
 * server no activity task and no extra workflow task. A mass rebuild makes thousands of them; as regular activities
 * each cost about 200 ms between two steps on a busy server, and work on the server for every call.
 */
export const kube = proxyLocalActivities<AllActivities>({
  startToCloseTimeout: '30s',
  retry,
  // Backoffs longer than this become durable timers instead of in-memory sleeps.
  localRetryThreshold: '10s',
});

/**
 * Waits on a watch: long, kept alive by heartbeats. If the worker dies, the missed heartbeat lets another worker
 * (or the restarted one) take the wait over within the heartbeat timeout.
 */
const waitOptions = {
  startToCloseTimeout: '2 hours',
  // 30 s: the SDK sends at most one heartbeat per 0.8 x this, and hundreds of waits run during a mass rebuild. The
  // waits beat every 10 s (HEARTBEAT_INTERVAL_MS in activities/wait-support.ts): keep that under half of 0.8 x this.
  heartbeatTimeout: '30s',
  retry,
};
export const wait = proxyActivities<AllActivities>(waitOptions);

/**
 * The same waits, for one the workflow may cancel and then end: the workflow goes on once the wait has ended, which
 * it does at its next heartbeat. Without this a workflow could complete while its wait still ran; the wait's late
 * completion then found no workflow, and Temporal's time-skipping test server never released the time lock it held
 * for it (time stopped skipping for every later test).
 */
export const cancellableWait = proxyActivities<AllActivities>({
  ...waitOptions,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});
