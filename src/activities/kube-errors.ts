// What a failed Kubernetes API call means to Temporal. Transient ones (throttling, a busy API server, a broken
// connection) are thrown as ordinary errors, so the retry policy retries them; permanent ones (a wrong request, no
// rights) become non-retryable ApplicationFailures with the API server's message: a retry would get the same answer.
import { ApiException } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { truncateApiMessage } from '../model/refusals.js';
import { KUBERNETES_API_ERROR, KUBERNETES_THROTTLED, NAMESPACE_TERMINATING } from '../shared/failures.js';
import { apiStatusOf, isHttpNotFound, PERMANENT_CODES, TransientKubernetesError } from '../kube/api-errors.js';
import { retryAfterMs } from '../kube/retry-reasons.js';

export { KUBERNETES_API_ERROR, KUBERNETES_THROTTLED } from '../shared/failures.js';

/** A client-node error as the workflow is to see it: a non-retryable ApplicationFailure, or an error to retry. */
export function classify(err: unknown): unknown {
  if (!(err instanceof ApiException)) return err;
  const status = apiStatusOf(err);
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

/** A Kubernetes API call whose failure is thrown as classify() makes it. */
export async function apiCall<T>(call: () => Promise<T>): Promise<T> {
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
    if (isHttpNotFound(err)) return null;
    throw classify(err);
  }
}
