// Failures the workflows tell apart, raised by the activities. Imports only the SDK's common failure classes and the
// pure model, so both the workflow bundle and the worker can load it.
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { REFUSED_OBJECT_CODES, type ApiRefusal } from '../model/refusals.js';

/** ApplicationFailure.type of every other permanent Kubernetes API failure; its details: `[{ code, reason }]`. */
export const KUBERNETES_API_ERROR = 'KubernetesApiError';

/** ApplicationFailure.type of a retryable call the API server asked to be made again after a while (Retry-After). */
export const KUBERNETES_THROTTLED = 'KubernetesThrottled';

/**
 * ApplicationFailure.type of a create refused because the namespace is being deleted (the API server's
 * NamespaceLifecycle admission). The LWS in it is going too: a lifecycle that meets this ends, it does not fail.
 */
export const NAMESPACE_TERMINATING = 'NamespaceTerminating';

/** A local or regular activity's failure of that type (local ones may reach the workflow unwrapped). */
export function isNamespaceTerminating(err: unknown): boolean {
  return applicationFailureOf(err)?.type === NAMESPACE_TERMINATING;
}

/** The API server found the object sent invalid (400, 422): its code and message (truncated where it was raised). */
export function apiRefusal(err: unknown): ApiRefusal | undefined {
  const code = apiCodeOf(err);
  return code !== undefined && REFUSED_OBJECT_CODES.has(code)
    ? { code, message: applicationFailureOf(err)!.message }
    : undefined;
}

/** An activity's failure telling the API server answered 404: the object the call named is gone. */
export function isNotFoundFailure(err: unknown): boolean {
  return apiCodeOf(err) === 404;
}

/** The HTTP status of a permanent Kubernetes API failure, from its details (kube-errors.ts). */
function apiCodeOf(err: unknown): number | undefined {
  const failure = applicationFailureOf(err);
  if (failure?.type !== KUBERNETES_API_ERROR) return undefined;
  const code = (failure.details?.[0] as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

function applicationFailureOf(err: unknown): ApplicationFailure | undefined {
  const failure = err instanceof ActivityFailure ? err.cause : err;
  return failure instanceof ApplicationFailure ? failure : undefined;
}
