// A StatefulSet built from the user's templates that the API server refuses for good (400, 422: a field it finds
// invalid): told on the LWS as a Warning Event and a ReplicaFailure condition with the API server's message, until a
// new generation fixes it. Pure: the workflows decide with it.
import { ANNOTATION_WORKERS_REFUSED, EVENT_REASONS } from './labels.js';
import { isDeleting, type PodFacts } from './objects.js';
import type { LeaderWorkerSetStatus } from './types.js';

/** Ours, named as the Deployment's condition for a ReplicaSet that cannot create its pods: a group cannot be made. */
export const CONDITION_REPLICA_FAILURE = 'ReplicaFailure';

/** The API server's message as it may reach a workflow's payload, an Event, a condition or an annotation. */
export const MAX_API_MESSAGE_LENGTH = 1024;

export function truncateApiMessage(message: string): string {
  return message.length > MAX_API_MESSAGE_LENGTH ? `${message.slice(0, MAX_API_MESSAGE_LENGTH - 3)}...` : message;
}

/** The HTTP codes by which the API server says the object itself is wrong; a retry of the same object gets the same. */
export const REFUSED_OBJECT_CODES: ReadonlySet<number> = new Set([400, 422]);

/** What the workflows read of such a refusal (src/shared/failures.ts, apiRefusal). */
export interface ApiRefusal {
  code: number;
  message: string;
}

/** The reason and message of the Event and the condition. */
export interface Refusal {
  reason: (typeof EVENT_REASONS)['invalidLeaderTemplate' | 'invalidWorkerTemplate'];
  message: string;
}

/** The leader StatefulSet is built from the leader template, or from the worker template when there is none. */
export function leaderRefusal(statefulSet: string, refusal: ApiRefusal): Refusal {
  return {
    reason: EVENT_REASONS.invalidLeaderTemplate,
    message:
      `the API server refused leader StatefulSet ${statefulSet} (HTTP ${refusal.code}), built from ` +
      `spec.leaderWorkerTemplate.leaderTemplate (or workerTemplate without one): ${refusal.message}`,
  };
}

export function workerRefusal(groupIndex: number, statefulSet: string, refusal: ApiRefusal): Refusal {
  return {
    reason: EVENT_REASONS.invalidWorkerTemplate,
    message:
      `group ${groupIndex}: the API server refused worker StatefulSet ${statefulSet} (HTTP ${refusal.code}), built ` +
      `from spec.leaderWorkerTemplate.workerTemplate: ${refusal.message}`,
  };
}

/** The LWS's status already tells this refusal: no second Event for it. */
export function refusalTold(status: LeaderWorkerSetStatus | undefined, refusal: Refusal): boolean {
  return (
    status?.conditions?.some(
      (c) =>
        c.type === CONDITION_REPLICA_FAILURE &&
        c.status === 'True' &&
        c.reason === refusal.reason &&
        c.message === refusal.message,
    ) ?? false
  );
}

type Leader = Pick<PodFacts, 'name' | 'uid' | 'annotations' | 'deletionTimestamp'>;

/**
 * The groups whose workers were refused, as their provisioning wrote it on each leader pod (the reconcile, which
 * writes the status, reads it there): live leaders only, and only while the group has no workers. `formed` tells
 * whether a leader's group has its worker StatefulSet.
 */
export function workersRefusedOf<L extends Leader>(
  leaders: readonly L[],
  formed: (leader: L) => boolean,
): Refusal | undefined {
  const told = leaders.filter(
    (l) => !isDeleting(l) && l.annotations[ANNOTATION_WORKERS_REFUSED] !== undefined && !formed(l),
  );
  const [first] = told;
  if (first === undefined) return undefined;
  const more = told.length > 1 ? ` (and ${told.length - 1} more groups)` : '';
  return {
    reason: EVENT_REASONS.invalidWorkerTemplate,
    message: `${first.annotations[ANNOTATION_WORKERS_REFUSED]}${more}`,
  };
}
