// List + watch of one resource through client-node's informer, restarted after any error: the trigger's watches, the
// pod finisher's and the benchmark's. The informer re-lists when it (re)starts and when the API answers 410 Gone, and
// reports the difference as add / update / delete. Its watches are bounded (bounded-watch.ts): a stream that went
// silent ends, and is restarted as a broken one is.
import * as k8s from '@kubernetes/client-node';
import { httpStatusOf } from './api-errors.js';
import { BoundedWatch, DEFAULT_WATCH_BOUNDS, type WatchBounds } from './bounded-watch.js';
import { retryAfterMs, retryReasonOf, type KubeRetryReason } from './retry-reasons.js';
import type { Logger } from '../log.js';
import { noteKubeRequest } from './requests.js';
import { RestartBackoff } from './restart-backoff.js';

export interface WatchHandlers<T> {
  upsert(obj: T, verb: 'add' | 'update'): void;
  remove(obj: T): void;
}

export interface RunningWatch {
  stop(): Promise<void>;
  /** Resolves once the first list has been delivered. */
  synced: Promise<void>;
}

/** A failed list, or a watch refused with a status (a 429 before it streamed), by its answer; a broken watch as such. */
export function restartReason(err: unknown, listFailed: boolean): KubeRetryReason {
  const reason = retryReasonOf(httpStatusOf(err), err);
  if (listFailed) return reason ?? 'other';
  return reason === undefined || reason === 'network' ? 'watch-restart' : reason;
}

export function watchResource<T extends k8s.KubernetesObject>(opts: {
  kc: k8s.KubeConfig;
  what: string;
  path: string;
  list: () => Promise<k8s.KubernetesListObject<T>>;
  labelSelector?: string;
  log: Logger;
  handlers: WatchHandlers<T>;
  /** Each restart after an error, with why (lws_kube_api_retries_total's reason). */
  onRestart?: (reason: KubeRetryReason) => void;
  /**
   * Cuts an object down in place before the handlers see it. client-node's informer keeps the very object it
   * delivers, so this is also what its cache holds.
   */
  trim?: (obj: T) => void;
  /** Default: DEFAULT_WATCH_BOUNDS. */
  bounds?: WatchBounds;
}): RunningWatch {
  const { log, what } = opts;
  const backoff = new RestartBackoff();
  // A failed list is a failed call (429, 5xx, network); any other error broke the watch itself.
  let listFailure: unknown;
  const list = async () => {
    try {
      const listed = await opts.list();
      if (opts.trim) listed.items.forEach(opts.trim);
      return listed;
    } catch (err) {
      listFailure = err;
      throw err;
    }
  };
  const watch = new BoundedWatch(opts.kc, opts.bounds ?? DEFAULT_WATCH_BOUNDS);
  const informer = new k8s.ListWatch<T>(opts.path, watch, list, false, opts.labelSelector);
  let stopped = false;
  const trim = opts.trim ?? (() => undefined);
  informer.on('add', (obj) => {
    trim(obj);
    opts.handlers.upsert(obj, 'add');
  });
  informer.on('update', (obj) => {
    trim(obj);
    opts.handlers.upsert(obj, 'update');
  });
  informer.on('delete', (obj) => opts.handlers.remove(obj));
  // Each (re)start counts from its connect, not from a list: after an error client-node resumes from the last
  // resourceVersion without listing (it lists only at the first start and after a 410), so a watch that ran for hours
  // between two breaks would otherwise never count as healthy, and its delay would only ever double, to 30 s.
  informer.on('connect', () => {
    backoff.listed(Date.now());
    noteKubeRequest(opts.kc, 'GET', opts.path, 200, new URLSearchParams({ watch: 'true' }));
  });
  informer.on('error', (err) => {
    if (stopped) return;
    const restartDelay = restartDelayMs(backoff, err, Date.now());
    log.warn('watch ended; listing again', {
      what,
      error: err instanceof Error ? err.message : String(err),
      retryInMs: restartDelay,
    });
    opts.onRestart?.(restartReason(err, err === listFailure));
    setTimeout(() => {
      if (!stopped) informer.start().catch((e: unknown) => log.warn('restart failed', { what, error: String(e) }));
    }, restartDelay);
  });
  const synced = informer.start();
  return {
    synced,
    stop: async () => {
      stopped = true;
      await informer.stop();
    },
  };
}

/** The backoff's delay, and never sooner than a throttled list was asked to wait (Retry-After). */
export function restartDelayMs(backoff: RestartBackoff, err: unknown, now: number): number {
  return Math.max(backoff.next(now), retryAfterMs(err) ?? 0);
}
