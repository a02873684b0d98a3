// spec.podTerminationPolicy: which policy applies to a terminating group, and what the controller then does.
//
// Sequential: the controller only observes. The leader terminates, and when it is gone from the API the garbage
// collector deletes the worker StatefulSet it owns (about 2 x grace period in all).
// Parallel: as soon as the leader has a deletionTimestamp, the controller foreground-deletes the worker StatefulSet,
// so leader and workers terminate together (about 1 x grace period).
// Both: a new group's worker StatefulSet is only created once the old one is gone, because the names collide.
import { ANNOTATION_POD_TERMINATION_POLICY } from './labels.js';
import { DEFAULT_POD_TERMINATION_POLICY } from './defaults.js';
import { predatesLws } from './lifecycle.js';
import { POD_TERMINATION_POLICIES, type PodTerminationPolicy } from './types.js';

export function isPodTerminationPolicy(value: unknown): value is PodTerminationPolicy {
  return typeof value === 'string' && (POD_TERMINATION_POLICIES as readonly string[]).includes(value);
}

/** The few metadata fields the decisions below read, from any Kubernetes object (pod, StatefulSet, LWS). */
export interface ObjectState {
  metadata?: {
    name?: string;
    uid?: string;
    annotations?: Record<string, string>;
    creationTimestamp?: string | Date;
    deletionTimestamp?: string | Date | null;
    ownerReferences?: ReadonlyArray<{ uid: string; controller?: boolean }>;
  };
}

export interface ResolvedPolicy {
  policy: PodTerminationPolicy;
  /** Where it came from, for logs: the LWS spec, the leader pod's annotation, or the default. */
  source: 'spec' | 'annotation' | 'default';
}

/**
 * The termination policy of a group: the LWS spec's while the LWS exists (pass it, even when it is being deleted);
 * else the annotation recorded on the terminating leader pod; else Sequential. An unknown value also gives
 * Sequential, the policy under which the controller deletes nothing itself. A leader created before the LWS of its
 * name (pass its creationTimestamp) is an older LWS's, deleted and created again: the new one's spec is not its.
 */
export function resolvePodTerminationPolicy(sources: {
  lws?: { metadata?: { creationTimestamp?: string | Date }; spec?: { podTerminationPolicy?: unknown } } | null;
  leaderPod?: ObjectState | null;
}): ResolvedPolicy {
  if (
    sources.lws !== undefined &&
    sources.lws !== null &&
    !predatesLws(sources.lws, sources.leaderPod?.metadata?.creationTimestamp)
  ) {
    const fromSpec = sources.lws.spec?.podTerminationPolicy;
    return isPodTerminationPolicy(fromSpec)
      ? { policy: fromSpec, source: 'spec' }
      : { policy: DEFAULT_POD_TERMINATION_POLICY, source: 'default' };
  }
  const fromAnnotation = sources.leaderPod?.metadata?.annotations?.[ANNOTATION_POD_TERMINATION_POLICY];
  return isPodTerminationPolicy(fromAnnotation)
    ? { policy: fromAnnotation, source: 'annotation' }
    : { policy: DEFAULT_POD_TERMINATION_POLICY, source: 'default' };
}

/** What the controller does when a group's leader starts terminating, per policy. */
export type GroupTeardownPlan =
  | {
      policy: 'Sequential';
      /** The controller never deletes the worker StatefulSet: the garbage collector does, after the leader is gone. */
      deleteWorkerStatefulSet: false;
      summary: string;
    }
  | {
      policy: 'Parallel';
      /** The controller deletes the worker StatefulSet as soon as the leader has a deletionTimestamp. */
      deleteWorkerStatefulSet: true;
      /** Foreground: the StatefulSet stays visible until its pods are gone, which the safe-rebuild wait relies on. */
      propagationPolicy: 'Foreground';
      summary: string;
    };

export function groupTeardownPlan(policy: PodTerminationPolicy): GroupTeardownPlan {
  if (policy === 'Parallel') {
    return {
      policy,
      deleteWorkerStatefulSet: true,
      propagationPolicy: 'Foreground',
      summary: 'delete the worker StatefulSet (foreground) as soon as the leader is terminating',
    };
  }
  return {
    policy,
    deleteWorkerStatefulSet: false,
    summary: 'observe: the garbage collector deletes the worker StatefulSet once the leader is gone',
  };
}

/** UID of the object's controlling owner (the ownerReference with controller: true), if any. */
export function controllerOwnerUid(obj: ObjectState): string | undefined {
  return obj.metadata?.ownerReferences?.find((ref) => ref.controller === true)?.uid;
}

function isTerminating(obj: ObjectState): boolean {
  const ts = obj.metadata?.deletionTimestamp;
  return ts !== undefined && ts !== null;
}

export type WorkerTeardownDecision =
  /** Delete this worker StatefulSet now, with a uid precondition so that no other object of the name is hit. */
  | { action: 'delete'; name: string; preconditionUid: string; propagationPolicy: 'Foreground'; reason: string }
  /** Someone else (the garbage collector, a foreground deletion under way) is removing it: look again later. */
  | { action: 'wait'; reason: string }
  /** Nothing of this group's workers is left to act on. */
  | { action: 'done'; reason: string };

/**
 * What to do about a terminating group's worker StatefulSet, under the rules of DESIGN.md section 3: act only on a
 * StatefulSet whose controlling owner is this leader (never on a replacement group's), only once this leader is
 * terminating, and only under Parallel.
 *
 * `leaderUid` is the terminating leader the caller is about; `leaderPod` is the current pod of that name (undefined
 * when gone) and `workerStatefulSet` the current StatefulSet of the group's worker name (undefined when gone).
 */
export function decideWorkerTeardown(input: {
  policy: PodTerminationPolicy;
  leaderUid: string;
  leaderPod: ObjectState | undefined;
  workerStatefulSet: ObjectState | undefined;
}): WorkerTeardownDecision {
  const { policy, leaderUid, leaderPod, workerStatefulSet: sts } = input;
  if (sts === undefined) return { action: 'done', reason: 'the worker StatefulSet is gone' };
  if (controllerOwnerUid(sts) !== leaderUid) {
    return { action: 'done', reason: 'the worker StatefulSet belongs to another leader: not this group' };
  }
  if (isTerminating(sts)) return { action: 'wait', reason: 'the worker StatefulSet is already being deleted' };
  const leaderPresent = leaderPod !== undefined && leaderPod.metadata?.uid === leaderUid;
  if (!leaderPresent) {
    return { action: 'wait', reason: 'the leader is gone: the garbage collector deletes its worker StatefulSet' };
  }
  if (!isTerminating(leaderPod))
    return { action: 'done', reason: 'the leader is not terminating: nothing to tear down' };
  if (policy === 'Sequential') {
    return { action: 'wait', reason: 'Sequential: the garbage collector deletes the workers after the leader is gone' };
  }
  const name = sts.metadata?.name;
  const uid = sts.metadata?.uid;
  if (name === undefined || uid === undefined) {
    return { action: 'wait', reason: 'the worker StatefulSet has no name or uid yet' };
  }
  return {
    action: 'delete',
    name,
    preconditionUid: uid,
    propagationPolicy: 'Foreground',
    reason: 'Parallel: the leader is terminating, so its workers terminate with it',
  };
}

export type WorkerProvisionDecision =
  /** No worker StatefulSet of the group's name exists: create it. */
  | { action: 'create'; reason: string }
  /** This leader's worker StatefulSet already exists (a repeated provision): nothing to do. */
  | { action: 'exists'; reason: string }
  /** Another (old) group's worker StatefulSet still holds the name, or it is being deleted: wait until it is gone. */
  | { action: 'wait'; reason: string };

/** The safe-rebuild rule, for both policies: a group's worker StatefulSet is created only when the name is free. */
export function decideWorkerProvision(input: {
  leaderUid: string;
  workerStatefulSet: ObjectState | undefined;
}): WorkerProvisionDecision {
  const sts = input.workerStatefulSet;
  if (sts === undefined) return { action: 'create', reason: 'no worker StatefulSet exists for the group' };
  if (isTerminating(sts)) return { action: 'wait', reason: 'the previous worker StatefulSet is still terminating' };
  if (controllerOwnerUid(sts) === input.leaderUid) {
    return { action: 'exists', reason: 'the worker StatefulSet of this leader already exists' };
  }
  return { action: 'wait', reason: 'the worker StatefulSet of a previous leader still exists' };
}
