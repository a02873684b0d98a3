// What every wait shares: heartbeats while it runs, a cancellable pause, the watch paths, the timestamp format.
import { cancellationSignal, heartbeat } from './activity-context.js';

/**
 * The waits run with a 30 s heartbeat timeout (workflows/activities.ts), and the SDK sends at most one heartbeat per
 * 0.8 x that (24 s), holding the latest one back until then. Beating more often than about half of that sends nothing
 * more to the server, but each beat still crosses into the SDK's native core: with hundreds of waits in a mass
 * rebuild, beating every 5 s cost the worker's main thread about 6 % of its time.
 */
export const HEARTBEAT_INTERVAL_MS = 10_000;
/** Pause before a new GET after a failed watch, so that a failing API server is not hammered. */
export const RETRY_PAUSE_MS = 1_000;

/** When the activity saw something: RFC 3339 with milliseconds. */
export function now(): string {
  return new Date().toISOString();
}

/**
 * Runs a wait with heartbeats every HEARTBEAT_INTERVAL_MS (so Temporal notices a dead worker within the heartbeat
 * timeout) and the activity's cancellation signal (never aborted outside an activity).
 */
export async function withHeartbeats<R>(what: string, wait: (signal: AbortSignal) => Promise<R>): Promise<R> {
  heartbeat(what);
  const beat = setInterval(() => heartbeat(what), HEARTBEAT_INTERVAL_MS);
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
