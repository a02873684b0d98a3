// Who holds a name: the rules the ensure activities share for an object that already exists when they create.
import { controllerUid } from '../model/index.js';
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';

/** ApplicationFailure.type when a name the controller needs is held by an object it does not manage. */
export const NAME_TAKEN = 'KubernetesNameTaken';

export type Holder =
  | 'ours'
  /** A previous incarnation's (same owner kind, other uid) or one being deleted: it goes away by itself. */
  | 'previous'
  /** Someone else's object (no controller of the owner's kind). */
  | 'foreign';

export function holder(meta: V1ObjectMeta | undefined, owner: { kind: string; uid: string }): Holder {
  if (controllerUid(meta) === owner.uid) return meta?.deletionTimestamp ? 'previous' : 'ours';
  if (meta?.deletionTimestamp) return 'previous';
  const controller = meta?.ownerReferences?.find((ref) => ref.controller === true);
  return controller?.kind === owner.kind ? 'previous' : 'foreign';
}

/** Retryable: the garbage collector frees the name, and Temporal's retries try again until then. */
export function stillHeld(what: string, meta: V1ObjectMeta | undefined): Error {
  return new Error(`${what} is still held by a previous owner (uid ${meta?.uid ?? '?'}); retrying until it is gone`);
}

/** A non-retryable failure for a name held by an object that is not ours and will not go away by itself. */
export function nameTaken(what: string, meta: V1ObjectMeta | undefined, wantedOwner: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    `${what} already exists and is not controlled by ${wantedOwner}: delete or rename it`,
    NAME_TAKEN,
    { uid: meta?.uid ?? null },
  );
}
