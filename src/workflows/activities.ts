// Activity stubs with the retry behaviour each kind needs. Transient API errors (429, 5xx, network) are retried
// with backoff; the activities raise permanent ones (400, 403, 422) as non-retryable failures.
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { AllActivities } from '../activities/types.js';
import { REPORT_WAIT_HEARTBEAT_TIMEOUT, WAIT_HEARTBEAT_TIMEOUT } from '../model/crash-recovery.js';

const retry = { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '10s' };

/**
 * Single API calls, as local activities: their results ride on the workflow task's completion, so a call costs the
 * server no activity task and no extra workflow task.
 */
export const kube = proxyLocalActivities<AllActivities>({
  startToCloseTimeout: '30s',
  retry,
  // Backoffs longer than this become durable timers instead of in-memory sleeps.
  localRetryThreshold: '10s',
});

/** Waits on a watch: long, kept alive by heartbeats, so another worker takes over a wait whose worker died. */
const waitOptions = {
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: WAIT_HEARTBEAT_TIMEOUT,
  retry,
};
export const wait = proxyActivities<AllActivities>(waitOptions);

/** The waits only the workflow's own report waits on: a dead worker's are taken over later, for fewer heartbeats. */
const reportWaitOptions = { ...waitOptions, heartbeatTimeout: REPORT_WAIT_HEARTBEAT_TIMEOUT };
export const reportWait = proxyActivities<AllActivities>(reportWaitOptions);

/** How long a rebuild waits for its replacement group before it reports without one. */
export const REPLACEMENT_TIMEOUT = '30 minutes';

/**
 * A rebuild's wait for its replacement, bounded by the server: its timeout costs no Action, where a workflow timer
 * costs one. The LWS may be scaled down or deleted meanwhile, and then no replacement ever comes.
 */
export const replacementWait = proxyActivities<AllActivities>({
  ...reportWaitOptions,
  scheduleToCloseTimeout: REPLACEMENT_TIMEOUT,
});
