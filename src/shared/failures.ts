// Failures the workflows tell apart, raised by the activities. Imports nothing but the SDK's common failure classes,
// so both the workflow bundle and the worker can load it.
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';

/**
 * ApplicationFailure.type of a create refused because the namespace is being deleted (the API server's
 * NamespaceLifecycle admission). The LWS in it is going too: a lifecycle that meets this ends, it does not fail.
 */
export const NAMESPACE_TERMINATING = 'NamespaceTerminating';

/** A local or regular activity's failure of that type (local ones may reach the workflow unwrapped). */
export function isNamespaceTerminating(err: unknown): boolean {
  const failure = err instanceof ActivityFailure ? err.cause : err;
  return failure instanceof ApplicationFailure && failure.type === NAMESPACE_TERMINATING;
}
