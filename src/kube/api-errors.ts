// What a failed Kubernetes API call answered, read from client-node's error: its HTTP status and the metav1.Status
// the API server sent. Reading only; what a failure means to Temporal is activities/kube-errors.ts, and a failure
// as a workflow sees it (an ActivityFailure) is read in shared/failures.ts. No Temporal import: the admission
// webhook and the CLI load this too.
import { ApiException } from '@kubernetes/client-node';

/** Status codes that the same request will always get again. */
export const PERMANENT_CODES = new Set([400, 401, 403, 404, 405, 406, 413, 415, 422]);

/** The HTTP status of a client-node ApiException (what typed clients and kube-json.ts throw), if it is one. */
export function apiExceptionCode(err: unknown): number | undefined {
  return err instanceof ApiException && typeof err.code === 'number' ? err.code : undefined;
}

/** The HTTP status a client error carries: ApiException's `code`, else a `statusCode` (a refused watch's), if any. */
export function httpStatusOf(err: unknown): number | undefined {
  if (err instanceof ApiException && typeof err.code === 'number') return err.code;
  const statusCode = (err as { statusCode?: unknown } | undefined)?.statusCode;
  return typeof statusCode === 'number' ? statusCode : undefined;
}

/** The API server answered 404: the object the call named is not there. */
export function isHttpNotFound(err: unknown): boolean {
  return apiExceptionCode(err) === 404;
}

/** 409: the name is taken (on create), a resourceVersion or uid precondition failed (on update or delete). */
export function isHttpConflict(err: unknown): boolean {
  return apiExceptionCode(err) === 409;
}

/** An answer the same request would get again (PERMANENT_CODES). */
export function isPermanentHttpError(err: unknown): boolean {
  const code = apiExceptionCode(err);
  return code !== undefined && PERMANENT_CODES.has(code);
}

/** The parts of a metav1.Status the API server sends with a failure. */
export interface ApiStatus {
  code: number;
  reason?: string;
  message: string;
  /** The cause types in `details.causes` (JSON field `reason`), e.g. NamespaceTerminating. */
  causes?: string[];
}

/** The metav1.Status in the error's body. client-node 1.x hands the body over as text; a 401 comes without one. */
export function apiStatusOf(err: ApiException<unknown>): ApiStatus {
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

/**
 * A transient API failure as the activities rethrow it (activities/kube-errors.ts): an ordinary, retryable error
 * with a short message instead of client-node's. It keeps the status, which the worker's metrics count by reason.
 */
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
