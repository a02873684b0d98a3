// What a failed Kubernetes API call means to Temporal. Transient ones (throttling, a busy API server, a broken
// connection) are thrown as ordinary errors, so the retry policy retries them; permanent ones (a wrong request, no
// rights) become non-retryable ApplicationFailures with the API server's message: a retry would get the same answer.
import { ApiException } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { truncateApiMessage } from '../model/refusals.js';
import { KUBERNETES_API_ERROR, KUBERNETES_THROTTLED, NAMESPACE_TERMINATING } from '../shared/failures.js';
import {
  httpStatusOf,
  PERMANENT_CODES,
  retryAfterMs,
  retryReasonOf,
  type KubeRetryReason,
} from '../kube/retry-reasons.js';

export { KUBE_RETRY_REASONS, MAX_RETRY_AFTER_MS, type KubeRetryReason } from '../kube/retry-reasons.js';

export { KUBERNETES_API_ERROR, KUBERNETES_THROTTLED } from '../shared/failures.js';

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
      // It reaches the workflows' payloads, and may be told on the LWS: bounded here, once.
      message: truncateApiMessage(status.message),
      type: status.causes?.includes(NAMESPACE_TERMINATING) ? NAMESPACE_TERMINATING : KUBERNETES_API_ERROR,
      nonRetryable: true,
      details: [{ code: status.code, reason: status.reason ?? null }],
      cause: err,
    });
  }
  const after = retryAfterMs(err);
  if (after !== undefined) {
    // As the server asks (API Priority and Fairness sends 1 s), not the retry policy's 200 ms, doubling.
    return ApplicationFailure.create({
      message: `Kubernetes API ${status.code}: ${truncateApiMessage(status.message)} (retried after ${after / 1000} s, as Retry-After asks)`,
      type: KUBERNETES_THROTTLED,
      nextRetryDelay: after,
      details: [{ code: status.code }],
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
 * The reason an error thrown by a Kubernetes API call gets it made again (kube/retry-reasons.ts); undefined when it
 * will not be (a permanent failure) or the error is no API failure (the activity's own "not yet", a cancellation).
 */
export function retryReason(err: unknown): KubeRetryReason | undefined {
  if (err instanceof ApplicationFailure) {
    if (err.type !== KUBERNETES_THROTTLED) return undefined;
    return retryReasonOf((err.details?.[0] as { code?: number } | undefined)?.code, err);
  }
  return retryReasonOf(err instanceof TransientKubernetesError ? err.code : httpStatusOf(err), err);
}
