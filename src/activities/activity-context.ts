// The bits of the Temporal activity context that long waits need. Outside an activity (tests calling the functions
// directly) heartbeats do nothing and nothing cancels, so the same code runs in both places.
import { CancelledFailure, Context } from '@temporalio/activity';

function current(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined; // not inside an activity
  }
}

export function heartbeat(details?: unknown): void {
  current()?.heartbeat(details);
}

/** Logs through the activity's logger (with its workflow and activity ids); outside one, a warning to stderr. */
export function log(level: 'warn' | 'info' | 'debug', message: string, meta: Record<string, unknown>): void {
  const logger = current()?.log;
  if (logger) logger[level](message, meta);
  else if (level === 'warn') console.warn(JSON.stringify({ level, msg: message, ...meta }));
}

/** The activity's heartbeat timeout; undefined outside an activity or without one. */
export function heartbeatTimeoutMs(): number | undefined {
  return current()?.info.heartbeatTimeoutMs;
}

export function cancellationSignal(): AbortSignal {
  return current()?.cancellationSignal ?? new AbortController().signal;
}

/** Throws what Temporal expects from a cancelled activity: the cancellation reason, a CancelledFailure. */
export function throwIfCancelled(signal: AbortSignal): void {
  if (!signal.aborted) return;
  const reason: unknown = signal.reason;
  throw reason instanceof Error ? reason : new CancelledFailure(String(reason ?? 'cancelled'));
}

/** Identifies one scheduled activity across its retries (see events.ts); undefined outside a workflow's activity. */
export function activityExecutionKey(): string | undefined {
  const info = current()?.info;
  const run = info?.workflowExecution;
  return info === undefined || run === undefined ? undefined : `${run.workflowId}/${run.runId}/${info.activityId}`;
}
