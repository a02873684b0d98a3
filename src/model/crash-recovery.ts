// How long Temporal waits on a controller process that may have died before it hands the work to another (a
// restarted or second worker): together these bound what a crash costs at any instant of a lifecycle. Measured by
// `npm run chaos` (docs/reliability.md).

/**
 * A workflow task whose worker died is retried after this. Its local activities (the short API calls) keep it alive
 * past it: the SDK heartbeats a task whose local activities run long.
 */
export const WORKFLOW_TASK_TIMEOUT = '2s';

/**
 * Each lifecycle's workflow task timeout. A teardown's first task holds the Parallel delete and a recreate's the
 * leader's; the reconcile's decide what the trigger starts: a crash costs them 2 s. Provisioning times no policy: at
 * 1,000 groups its calls took 1.6 s each on the saturated API server, the SDK's heartbeat (at 80 % of 2 s) came too
 * late, and each timed-out task went back behind hundreds of others on the task queue. With
 * Temporal's default, a crash mid-provisioning costs up to 10 s.
 */
export const WORKFLOW_TASK_TIMEOUTS = {
  teardownGroup: WORKFLOW_TASK_TIMEOUT,
  recreateGroup: WORKFLOW_TASK_TIMEOUT,
  reconcileLeaderWorkerSet: WORKFLOW_TASK_TIMEOUT,
  provisionGroup: '10s',
} as const;

/** A task sent to a dead worker's sticky queue goes to the shared task queue after this. */
export const STICKY_QUEUE_TIMEOUT = '2s';

/**
 * A wait (a watch held by an activity) that work waits on, whose worker died, is retried after this without a
 * heartbeat: a provisioning's wait for the old group's names to be free, and its leader's.
 */
export const WAIT_HEARTBEAT_TIMEOUT = '2500ms';

/**
 * A wait that only its workflow's own report waits on: a teardown following the old group out and the replacement in,
 * a provisioning's new group turning Ready. Nothing in the cluster waits on it, so a dead worker's wait is taken over
 * after this. Each heartbeat the SDK sends (at most one per 0.8 x this) is a write on the Temporal server and an Action
 * on Temporal Cloud: a 1,000-group provisioning holds a thousand such waits at once, and at 2.5 s they sent 40,827
 * heartbeats against 2,065 workflow tasks; at 30 s, about 3,200.
 */
export const REPORT_WAIT_HEARTBEAT_TIMEOUT = '30s';

/** The waits beat at least this often apart; the SDK sends at most one beat per 0.8 x the timeout. */
export const WAIT_HEARTBEAT_INTERVAL_MS = 1_000;

/**
 * A wait beats every third of its heartbeat timeout: a 30 s one beats every 10 s, so a wait that ends sooner costs the
 * server no heartbeat, and two beats may still be lost before the timeout.
 */
export function waitHeartbeatIntervalMs(heartbeatTimeoutMs: number | undefined): number {
  return Math.max(WAIT_HEARTBEAT_INTERVAL_MS, (heartbeatTimeoutMs ?? 0) / 3);
}
