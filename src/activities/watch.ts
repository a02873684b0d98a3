// One watch request turned into a promise: it settles with what the caller was waiting for, or when the watch ends,
// fails, or is cancelled. Resuming (a fresh GET or list, then a new watch) is the caller's job (see waits.ts).
import * as k8s from '@kubernetes/client-node';

/** The server ends each watch after this long; a fresh GET and watch follow, which also heal a missed event. */
export const WATCH_TIMEOUT_SECONDS = 60;
/** A watch that has said nothing for this long (not even its end) is presumed dead: its connection went silent. */
const IDLE_LIMIT_MS = (WATCH_TIMEOUT_SECONDS + 30) * 1000;

export type WatchEnd<R> = { result: R } | { ended: true } | { error: unknown };

/** A watch ERROR event's Status as an Error (410 Gone: the resourceVersion is too old to resume from). */
function statusError(obj: unknown): Error & { code?: number } {
  const status = (obj ?? {}) as { code?: number; message?: string };
  return Object.assign(new Error(`watch error ${status.code ?? '?'}: ${status.message ?? 'no message'}`), {
    code: status.code,
  });
}

export interface WatchOptions {
  /** The collection, e.g. `/api/v1/namespaces/<ns>/pods`. */
  listPath: string;
  /** `metadata.name=<name>` for one object. */
  fieldSelector?: string;
  labelSelector?: string;
  /** From a GET or list: the watch then starts right after it. Unset: synthetic ADDED events for what exists now. */
  resourceVersion?: string;
  signal: AbortSignal;
}

/**
 * Watches `listPath` (narrowed by the selectors). `onEvent` gets every ADDED, MODIFIED and DELETED event; the first
 * value it returns settles the watch as `{ result }`.
 */
export function watchOnce<R>(
  kc: k8s.KubeConfig,
  opts: WatchOptions,
  onEvent: (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: unknown) => R | undefined,
): Promise<WatchEnd<R>> {
  return new Promise((resolve) => {
    let settled = false;
    let request: AbortController | undefined;
    let idle: NodeJS.Timeout | undefined;
    const finish = (end: WatchEnd<R>) => {
      if (settled) return;
      settled = true;
      clearTimeout(idle);
      opts.signal.removeEventListener('abort', onCancel);
      request?.abort();
      resolve(end);
    };
    const onCancel = () => finish({ ended: true });
    const resetIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => finish({ error: new Error('watch went silent') }), IDLE_LIMIT_MS);
    };
    if (opts.signal.aborted) return finish({ ended: true });
    opts.signal.addEventListener('abort', onCancel, { once: true });
    resetIdle();

    const query = {
      fieldSelector: opts.fieldSelector,
      labelSelector: opts.labelSelector,
      resourceVersion: opts.resourceVersion,
      timeoutSeconds: WATCH_TIMEOUT_SECONDS,
    };
    new k8s.Watch(kc)
      .watch(
        opts.listPath,
        query,
        (type: string, obj: unknown) => {
          if (settled) return;
          resetIdle();
          if (type === 'ERROR') return finish({ error: statusError(obj) });
          if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return; // BOOKMARK
          const result = onEvent(type, obj);
          if (result !== undefined) finish({ result });
        },
        (err: unknown) => finish(err ? { error: err } : { ended: true }),
      )
      .then(
        (controller) => {
          request = controller;
          if (settled) controller.abort();
        },
        (err: unknown) => finish({ error: err }),
      );
  });
}
