// Who holds a name: the rules the ensure activities share for an object that already exists when they create.
import { controllerUid } from '../model/index.js';
import type { V1ObjectMeta } from '@kubernetes/client-node';

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
