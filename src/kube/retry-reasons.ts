// Why a failed Kubernetes API call is made again, for lws_kube_api_retries_total: throttled (429), a server error
// (5xx), the connection refused, reset or closed before the answer (network), a watch that broke and is opened again
// (watch-restart, counted where watches restart), or another transient answer (409 and the like: other). Shared by
// the worker's activities and the trigger's watches, so it imports neither.
import { ApiException } from '@kubernetes/client-node';
import { PERMANENT_CODES } from './api-errors.js';

export const KUBE_RETRY_REASONS = ['429', '5xx', 'network', 'watch-restart', 'other'] as const;
export type KubeRetryReason = (typeof KUBE_RETRY_REASONS)[number];

/** Node's codes for a connection refused, reset or broken, and HTTP/2 streams and sessions that failed. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
const NETWORK_MESSAGES = /socket hang up|stream closed early|premature close|ECONNRESET|ECONNREFUSED/i;

function isNetworkFailure(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || code.startsWith('ERR_HTTP2'))) return true;
    if (NETWORK_MESSAGES.test(e.message)) return true;
  }
  return false;
}

/**
 * The reason for a call that failed with this HTTP status (undefined: none, the connection failed), or with this
 * error; undefined when it will not be made again (a permanent failure) or the error is no API failure.
 */
export function retryReasonOf(code: number | undefined, err: unknown): KubeRetryReason | undefined {
  if (code !== undefined) {
    // No status at all: the connection went before the answer came (kube-json.ts reports such a stream as HTTP 0).
    if (code === 0) return 'network';
    if (code === 429) return '429';
    if (code >= 500 && code <= 599) return '5xx';
    return PERMANENT_CODES.has(code) ? undefined : 'other';
  }
  return isNetworkFailure(err) ? 'network' : undefined;
}

/** The longest Retry-After taken as asked: a longer one waits this long. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * The Retry-After of a 429 or 503, in ms (delta-seconds, the form the API server sends), capped; undefined when the
 * error has none (or an HTTP date, or another status): the caller's own backoff applies.
 */
export function retryAfterMs(err: unknown): number | undefined {
  if (!(err instanceof ApiException) || (err.code !== 429 && err.code !== 503)) return undefined;
  const headers = (err.headers ?? {}) as Record<string, string>;
  const header = Object.entries(headers).find(([name]) => name.toLowerCase() === 'retry-after')?.[1];
  if (header === undefined || !/^\d+$/.test(header.trim())) return undefined;
  return Math.min(Number(header.trim()) * 1000, MAX_RETRY_AFTER_MS);
}
