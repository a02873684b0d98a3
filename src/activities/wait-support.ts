// What every wait shares: heartbeats while it runs, a cancellable pause, the watch paths, the timestamp format.
import { cancellationSignal, heartbeat, heartbeatTimeoutMs } from './activity-context.js';

import { WAIT_HEARTBEAT_INTERVAL_MS, waitHeartbeatIntervalMs } from '../model/crash-recovery.js';

export const HEARTBEAT_INTERVAL_MS = WAIT_HEARTBEAT_INTERVAL_MS;
/** Pause before a new GET after a failed watch, so that a failing API server is not hammered. */
export const RETRY_PAUSE_MS = 1_000;

/** When the activity saw something: RFC 3339 with milliseconds. */
export function now(): string {
  return new Date().toISOString();
}

/** The first beat comes after an interval: a wait that ends sooner costs the server no heartbeat. */
export async function withHeartbeats<R>(what: string, wait: (signal: AbortSignal) => Promise<R>): Promise<R> {
  const beat = setInterval(() => heartbeat(what), waitHeartbeatIntervalMs(heartbeatTimeoutMs()));
  try {
    return await wait(cancellationSignal());
  } finally {
    clearInterval(beat);
  }
}

/** Sleeps, but wakes at once when the signal aborts (the caller then checks it). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
