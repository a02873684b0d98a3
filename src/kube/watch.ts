// One watch request turned into a promise: it settles with what the caller was waiting for, or when the watch ends,
// fails, or is cancelled. Resuming (a fresh GET or list, then a new watch) is the caller's job (see
// src/activities/waits.ts).
import * as http2 from 'node:http2';
import type * as https from 'node:https';
import * as k8s from '@kubernetes/client-node';
import { http2Target, stream, streamError } from './api-http2.js';
import { noteKubeRequest } from './requests.js';

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

/** `onEvent` gets every ADDED, MODIFIED and DELETED event; the first value it returns settles the watch. */
export function watchOnce<R>(
  kc: k8s.KubeConfig,
  opts: WatchOptions,
  onEvent: (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: unknown) => R | undefined,
): Promise<WatchEnd<R>> {
  return new Promise((resolve) => {
    let settled = false;
    let request: { abort(): void } | undefined;
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
    openWatch(
      kc,
      opts.listPath,
      query,
      (type, obj) => {
        if (settled) return;
        resetIdle();
        if (type === 'ERROR') return finish({ error: statusError(obj) });
        if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return; // BOOKMARK
        const result = onEvent(type, obj);
        if (result !== undefined) finish({ result });
      },
      (err) => finish(err ? { error: err } : { ended: true }),
    ).then(
      (controller) => {
        request = controller;
        if (settled) controller.abort();
      },
      (err: unknown) => finish({ error: err }),
    );
  });
}

type WatchQuery = Record<string, string | number | undefined>;

/** Over HTTP/2 when on offer (api-http2.ts), else client-node's Watch; `done` is called once. */
async function openWatch(
  kc: k8s.KubeConfig,
  path: string,
  query: WatchQuery,
  onEvent: (type: string, obj: unknown) => void,
  done: (err: unknown) => void,
): Promise<{ abort(): void }> {
  const options: https.RequestOptions = { headers: { Accept: 'application/json' } };
  await kc.applyToHTTPSOptions(options);
  const target = http2Target(kc, options);
  const search = new URLSearchParams({ watch: 'true' });
  for (const [key, value] of Object.entries(query)) if (value !== undefined) search.set(key, String(value));
  // Counted once its status is known: a watch's answer is a stream that may last its whole timeout.
  const note = (code: number) => noteKubeRequest(kc, 'GET', path, code, search);
  if (!target) {
    return new k8s.Watch(kc).watch(path, query, onEvent, done).then(
      (controller) => {
        note(200);
        return controller;
      },
      (err: unknown) => {
        note(0);
        throw err;
      },
    );
  }
  const request = stream(target, 'GET', `${path}?${search}`);
  let ended = false;
  const end = (err: unknown) => {
    if (ended) return;
    ended = true;
    done(err);
  };
  let status = 0;
  let pending = '';
  request.setEncoding('utf8');
  request.on('response', (headers) => {
    status = Number(headers[':status']);
    note(status);
  });
  request.on('data', (chunk: string) => {
    pending += chunk;
    if (status !== 200) return; // the body is a Status: reported at the end
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline).trim();
      pending = pending.slice(newline + 1);
      if (!line) continue;
      let event: { type?: string; object?: unknown };
      try {
        event = JSON.parse(line) as typeof event;
      } catch (err) {
        request.close(http2.constants.NGHTTP2_CANCEL);
        return end(new Error(`watch ${path}: an event that is not JSON`, { cause: err }));
      }
      if (!ended) onEvent(event.type ?? '', event.object);
    }
  });
  request.on('end', () => end(status === 200 ? null : new Error(`watch ${path}: HTTP ${status}: ${pending.trim()}`)));
  request.on('error', (err) => {
    if (status === 0) note(0);
    end(streamError(err));
  });
  request.on('close', () => end(new Error(`watch ${path}: the HTTP/2 stream closed (code ${request.rstCode})`)));
  return { abort: () => request.close(http2.constants.NGHTTP2_CANCEL) };
}
