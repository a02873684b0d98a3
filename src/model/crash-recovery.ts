// How long Temporal waits on a controller process that may have died before it hands the work to another (a
// restarted or second worker): together these bound what a crash costs at any instant of a lifecycle. Measured by
// `npm run chaos` (docs/reliability.md).

/**
 * A workflow task whose worker died is retried after this. Its local activities (the short API calls) keep it alive
 * past it: the SDK heartbeats a task whose local activities run long.
 */
export const WORKFLOW_TASK_TIMEOUT = '2s';

/** A task sent to a dead worker's sticky queue goes to the shared task queue after this. */
export const STICKY_QUEUE_TIMEOUT = '2s';

/** A wait (a watch held by an activity) whose worker died is retried after this without a heartbeat. */
export const WAIT_HEARTBEAT_TIMEOUT = '2500ms';

/** The waits beat this often; the SDK sends at most one beat per 0.8 x the timeout. */
export const WAIT_HEARTBEAT_INTERVAL_MS = 1_000;
