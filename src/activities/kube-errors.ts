// What a failed Kubernetes API call means to Temporal. Transient ones (throttling, a busy API server, a broken
// connection) are thrown as ordinary errors, so the retry policy retries them; permanent ones (a wrong request, no
// rights) become non-retryable ApplicationFailures with the API server's message: a retry would get the same answer.
import { ApiException } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { NAMESPACE_TERMINATING } from '../shared/failures.js';

/** ApplicationFailure.type of every permanent Kubernetes API failure. */
export const KUBERNETES_API_ERROR = 'KubernetesApiError';

/** Status codes that the same request will always get again. */
const PERMANENT_CODES = new Set([400, 401, 403, 404, 405, 406, 413, 415, 422]);

/** The parts of a metav1.Status the API server sends with a failure. */
export interface KubeStatus {
  code: number;
  reason?: string;
  message: string;
  /** The cause types in `details.causes` (JSON field `reason`), e.g. NamespaceTerminating. */
  causes?: string[];
}

export function statusCode(err: unknown): number | undefined {
  return err instanceof ApiException && typeof err.code === 'number' ? err.code : undefined;
}

export function isNotFound(err: unknown): boolean {
  return statusCode(err) === 404;
}

export function isPermanent(err: unknown): boolean {
  const code = statusCode(err);
  return code !== undefined && PERMANENT_CODES.has(code);
}

/** 409: the name is taken (on create), a resourceVersion or uid precondition failed (on update or delete). */
export function isConflict(err: unknown): boolean {
  return statusCode(err) === 409;
}

/** client-node 1.x hands the body over as text; a 401 comes without one. */
export function kubeStatus(err: ApiException<unknown>): KubeStatus {
  let body: unknown = err.body;
  if (typeof body === 'string') {
    const text = body;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON (a proxy's HTML page, say): the text itself is the best message there is.
      return { code: err.code, message: text.trim() || `HTTP ${err.code}` };
    }
  }
  const status = (body ?? {}) as { message?: unknown; reason?: unknown; details?: { causes?: unknown } };
  const message = typeof status.message === 'string' && status.message ? status.message : defaultMessage(err.code);
  const reason = typeof status.reason === 'string' ? status.reason : undefined;
  const causes = Array.isArray(status.details?.causes)
    ? (status.details.causes as { reason?: unknown }[])
        .map((c) => c.reason)
        .filter((t): t is string => typeof t === 'string')
    : [];
  return {
    code: err.code,
    message,
    ...(reason === undefined ? {} : { reason }),
    ...(causes.length === 0 ? {} : { causes }),
  };
}

function defaultMessage(code: number): string {
  if (code === 401) return 'Unauthorized: the Kubernetes API rejected the credentials';
  if (code === 403) return 'Forbidden';
  return `HTTP ${code}`;
}

/** A transient API failure, thrown as an ordinary (retryable) error with a short message instead of client-node's. */
export class TransientKubernetesError extends Error {
  override readonly name = 'TransientKubernetesError';
  constructor(
    readonly code: number,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export function classify(err: unknown): unknown {
  if (!(err instanceof ApiException)) return err;
  const status = kubeStatus(err);
  if (PERMANENT_CODES.has(status.code)) {
    return ApplicationFailure.create({
      message: status.message,
      type: status.causes?.includes(NAMESPACE_TERMINATING) ? NAMESPACE_TERMINATING : KUBERNETES_API_ERROR,
      nonRetryable: true,
      details: [{ code: status.code, reason: status.reason ?? null }],
      cause: err,
    });
  }
  return new TransientKubernetesError(status.code, `Kubernetes API ${status.code}: ${status.message}`, { cause: err });
}

export async function kube<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw classify(err);
  }
}

/** A 404 gives null. */
export async function orNull<T>(call: () => Promise<T>): Promise<T | null> {
  try {
    return await call();
  } catch (err) {
    if (isNotFound(err)) return null;
    throw classify(err);
  }
}

/**
 * Why a failed Kubernetes API call is made again, for lws_kube_api_retries_total: throttled (429), a server error
 * (5xx), the connection refused, reset or closed before the answer (network), a watch that broke and is opened again
 * (watch-restart, counted where watches restart), or another transient answer (409 and the like: other).
 */
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
 * The reason an error thrown by a Kubernetes API call gets it made again; undefined when it will not be (a permanent
 * failure) or the error is no API failure (the activity's own "not yet", a cancellation).
 */
export function retryReason(err: unknown): KubeRetryReason | undefined {
  if (err instanceof ApplicationFailure) return undefined;
  const code =
    err instanceof TransientKubernetesError
      ? err.code
      : (statusCode(err) ?? (err as { statusCode?: unknown } | undefined)?.statusCode);
  if (typeof code === 'number') {
    // No status at all: the connection went before the answer came (kube-json.ts reports such a stream as HTTP 0).
    if (code === 0) return 'network';
    if (code === 429) return '429';
    if (code >= 500 && code <= 599) return '5xx';
    return PERMANENT_CODES.has(code) ? undefined : 'other';
  }
  return isNetworkFailure(err) ? 'network' : undefined;
}
