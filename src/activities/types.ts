// The contract between workflows and activities: plain JSON in and out (Temporal payloads), no client objects.
// Workflows import this file for types only; src/activities/index.ts implements it against the Kubernetes API.
import type {
  ObjectIdentity,
  ObjectKey,
  PodFacts,
  StatefulSetFacts,
  LeaderStatefulSetOptions,
  LeaderStatefulSetStep,
  LeaderWorkerSet,
  LeaderWorkerSetStatus,
  PodTerminationPolicy,
  TeardownReads,
} from '../model/index.js';

export type EnsureOutcome = 'created' | 'updated' | 'unchanged';

export type EnsureLeaderStatefulSetResult =
  | EnsureOutcome
  /**
   * Not created: an older incarnation still holds the names (the LWS was deleted and created again under its name).
   * Its leader pods, and its StatefulSet if that is still there, are going away: wait until they are gone, then
   * ensure again.
   */
  | { outcome: 'blocked'; statefulSet?: ObjectIdentity; pods: ObjectIdentity[] };

export type EnsureWorkerStatefulSetResult =
  | { outcome: 'created' | 'exists'; uid: string }
  /**
   * The name is held by another leader's StatefulSet (an old group's), or by this leader's own one while it is being
   * deleted: wait until that uid is gone.
   */
  | {
      outcome: 'blocked';
      uid: string;
      ownerUid?: string;
      deleting: boolean;
      /**
       * Worker pods of an old incarnation that still hold the names (their StatefulSet, `uid`, may be gone already: the
       * garbage collector deletes it at once when its leader goes, and its pods for a grace period more). The
       * StatefulSet controller cannot create a pod whose name is taken, and retries with a backoff that grows to
       * minutes: wait until these are gone too.
       */
      pods?: ObjectIdentity[];
    }
  /** Size 1: the group is its leader alone. The leader was labelled (and its group Service made); no StatefulSet. */
  | { outcome: 'not-needed' }
  /** The leader pod of that uid no longer exists: nothing was created (a StatefulSet it owned would be collected). */
  | { outcome: 'leader-gone' };

export type DeleteOutcome =
  | 'deleted'
  /** Nothing of that name (or of that uid) exists any more. */
  | 'absent'
  /** It already has a deletionTimestamp: someone else is deleting it. */
  | 'already-deleting'
  /** Refused: its controlling owner is not the one the caller named. */
  | 'not-owned';

/** A group's worker StatefulSet and its pods as a watch showed them (the trigger's view), by incarnation. */
export interface SeenWorkers {
  statefulSet: ObjectIdentity;
  /** Its pods that were not yet terminating. */
  pods: ObjectIdentity[];
}

export interface GoneResult {
  /** When the activity saw it gone (RFC 3339 with milliseconds). */
  goneAt: string;
}

export type NamesFreedResult = GoneResult | { releasable: ObjectIdentity };

/** `failed`: the API server refused or failed (logged); the garbage collector still removes it. */
export type ReleaseOutcome = 'released' | 'absent' | 'not-foreground' | 'pods-left' | 'failed';

export type ReadyResult = { readyAt: string } | { goneAt: string };

export interface KubernetesEvent {
  /** The LWS the event is about (involvedObject). */
  lws: ObjectIdentity;
  type: 'Normal' | 'Warning';
  /** CamelCase reason, e.g. GroupTeardownStarted. */
  reason: string;
  message: string;
}

/** A teardown's first round: the leader it is about and, under Parallel, the workers the trigger saw to delete. */
export interface BeginTeardownInput {
  ref: ObjectKey;
  groupIndex: number;
  /** The terminating leader pod. */
  leader: ObjectIdentity;
  /** Deleted in the same round as the reads (deleteSeenWorkers). */
  deleteWorkers?: SeenWorkers;
}

/** What a teardown judges on (judgeTeardown), read in its first round. */
export interface TeardownStart extends TeardownReads {
  /** The outcome of the delete asked for; absent when none was. */
  deleted?: DeleteOutcome;
}

export interface LwsActivities {
  /** The LWS as stored (with metadata.uid, generation, deletionTimestamp), or null when it does not exist. */
  getLeaderWorkerSet(ref: ObjectKey): Promise<LeaderWorkerSet | null>;
  getPod(key: ObjectKey): Promise<PodFacts | null>;
  getStatefulSet(key: ObjectKey): Promise<StatefulSetFacts | null>;
  /** Leader pods and worker StatefulSets that carry the LWS's name label. */
  listGroups(ref: ObjectKey): Promise<{ leaders: PodFacts[]; workerStatefulSets: StatefulSetFacts[] }>;

  /** Create-or-confirm the headless Service of the LWS. */
  ensureHeadlessService(lws: LeaderWorkerSet): Promise<EnsureOutcome>;
  /**
   * Create the leader StatefulSet, or update replicas, template and update strategy where they differ from what was
   * last written. `options` (replicas with surge, partition, revision hash) default to what the spec says. `from`:
   * the rolling-update step the caller wrote before; while the StatefulSet is still that, one patch moves it on.
   */
  ensureLeaderStatefulSet(
    lws: LeaderWorkerSet,
    options?: LeaderStatefulSetOptions,
    from?: LeaderStatefulSetStep,
  ): Promise<EnsureLeaderStatefulSetResult>;
  /**
   * Create the worker StatefulSet of one group, owned by its leader pod, after patching the leader pod with the model's
   * leaderPodPatch (group-index and group-key labels, termination policy annotation). Idempotent: an existing
   * StatefulSet owned by this leader is `exists`; one owned by anyone else (or being deleted) is `blocked` and
   * untouched. Under UniquePerReplica also the group's headless Service.
   */
  ensureWorkerStatefulSet(input: {
    lws: LeaderWorkerSet;
    groupIndex: number;
    leader: ObjectIdentity;
  }): Promise<EnsureWorkerStatefulSetResult>;

  /**
   * Delete a worker StatefulSet with `preconditions.uid` (never another incarnation of the name), only when its
   * controlling owner is `ownerUid`, with the given propagation policy.
   */
  deleteWorkerStatefulSet(
    input: ObjectKey & {
      /** The incarnation; omitted: the one that exists now, if `ownerUid` controls it. */
      uid?: string;
      ownerUid: string;
      propagationPolicy: 'Foreground' | 'Background';
    },
  ): Promise<DeleteOutcome>;
  /**
   * The Parallel fast path when the trigger saw the group: no read, one round of deletes. The trigger saw the leader
   * terminating (which cannot be undone) and controlling this StatefulSet, which controls these pods. Foreground-
   * deletes the StatefulSet and deletes the pods at the same time, each with its uid as precondition, so only those
   * incarnations can be hit. The outcome is the StatefulSet's.
   */
  deleteSeenWorkers(input: SeenWorkers): Promise<DeleteOutcome>;
  /**
   * A teardown's first round in one call: the delete asked for, and with it the reads (getLeaderWorkerSet, getPod of
   * the leader, getStatefulSet of the workers, listGroupPods). Fails once every call has ended if any failed; a retry
   * deletes nothing twice (uid preconditions).
   */
  beginTeardown(input: BeginTeardownInput): Promise<TeardownStart>;
  /** Delete a pod with `preconditions.uid`. */
  deletePod(input: ObjectIdentity): Promise<DeleteOutcome>;

  /** Resolves once no pod of this uid exists (watch + heartbeats; safe to retry). */
  waitForPodGone(input: ObjectIdentity): Promise<GoneResult>;
  /** Resolves once no StatefulSet of this uid exists. */
  waitForStatefulSetGone(input: ObjectIdentity): Promise<GoneResult>;
  /**
   * Resolves once an old incarnation no longer holds the names: none of `pods` exists, nor the StatefulSet of that
   * uid, if given. A StatefulSet deleted in the foreground is kept after its last pod until the garbage collector gets
   * back to it, seconds under load: the wait then resolves `releasable` once the pods are gone.
   */
  waitForNamesFreed(input: { statefulSet?: ObjectIdentity; pods: ObjectIdentity[] }): Promise<NamesFreedResult>;
  /**
   * Deletes a StatefulSet that only its foreground deletion keeps, in the background: the API server drops the
   * finalizer and it goes at once. Only that uid, only one already in its foreground deletion, only with none of its
   * pods left (`pods` covers its names, else a list shows none). Best effort: a refusal is logged, not thrown.
   */
  releaseForegroundDeletion(input: { statefulSet: ObjectIdentity; pods: ObjectIdentity[] }): Promise<ReleaseOutcome>;
  /** Resolves once the pod of this uid is Ready, or gone. */
  waitForPodReady(input: ObjectIdentity): Promise<ReadyResult>;
  /** Resolves once the StatefulSet of this uid has `readyReplicas >= replicas`, or is gone. */
  waitForStatefulSetReady(input: ObjectIdentity): Promise<ReadyResult>;

  /** Write the status subresource (merge patch of the fields given). */
  updateLeaderWorkerSetStatus(input: { ref: ObjectKey; status: LeaderWorkerSetStatus }): Promise<void>;
  /**
   * Record a Kubernetes Event on the LWS, so `kubectl describe lws` tells the same story as the workflow. false: the
   * API server refused it for good (the namespace is being deleted, say); it is logged and dropped.
   */
  recordEvent(event: KubernetesEvent): Promise<boolean>;
  /** Several Events at once, as recordEvent each; a retry records none twice. */
  recordEvents(events: KubernetesEvent[]): Promise<boolean[]>;
}

export interface PodsGoneResult extends GoneResult {
  /** When the first of the pods was seen with a deletionTimestamp (undefined if none was seen terminating). */
  terminatingAt?: string;
}

export type ReplacementGroupResult =
  | {
      leader: ObjectIdentity;
      /** The new leader pod's creationTimestamp. */
      leaderCreatedAt: string;
      /** When the new group was seen ready: leader Ready and its worker StatefulSet fully ready. */
      readyAt: string;
    }
  /** Why no replacement will come: the LWS is gone or being deleted (with its namespace, say), or scaled below it. */
  | { notWanted: string };

/** What a teardown waits for after a rebuild: the group's next incarnation. */
export interface ReplacementGroupInput {
  namespace: string;
  leaderName: string;
  workerStatefulSetName: string;
  previousLeaderUid: string;
  size: number;
  /** Absent in the inputs of workflows started before this check existed. */
  group?: { lwsName: string; groupIndex: number };
}

/** Waits over a whole group, used by the teardown timeline. */
export interface GroupWaitActivities {
  /** Resolves once none of these pods (by uid) exists; reports when the first started terminating. */
  waitForPodsGone(input: { namespace: string; pods: ObjectIdentity[] }): Promise<PodsGoneResult>;
  /** The pods of one group (leader and workers) that carry the LWS's name and group-index labels. */
  listGroupPods(input: { namespace: string; lwsName: string; groupIndex: number }): Promise<PodFacts[]>;
  /**
   * Resolves once a leader pod of `leaderName` other than `previousLeaderUid` exists and is Ready, and (size > 1) the
   * worker StatefulSet it owns has size - 1 ready replicas. With `group`, it also looks at the LWS every
   * REPLACEMENT_CHECK_MS and resolves with `notWanted` once it no longer wants that group.
   */
  waitForReplacementGroupReady(input: ReplacementGroupInput): Promise<ReplacementGroupResult>;
}

/** Measurements the worker process exports as Prometheus metrics (workflow code cannot touch process state). */
export interface ReportActivities {
  reportTeardown(input: {
    policy: PodTerminationPolicy;
    lifecycle: string;
    teardownMs?: number;
    recoveryMs?: number;
  }): Promise<void>;
}

export type AllActivities = LwsActivities & GroupWaitActivities & LeaderPodActivities & ReportActivities;

/**
 * Offered by createActivities but not (yet) part of AllActivities: add it there when a workflow needs it, e.g. the
 * reconcile workflow after spec.podTerminationPolicy changed.
 */
export interface LeaderPodActivities {
  /**
   * Record spec.podTerminationPolicy on every live, non-terminating leader pod of the LWS (annotation), so that a
   * policy change applies to the next teardown without rolling any group. Returns how many pods were patched.
   */
  annotateLeaderPods(input: { ref: ObjectKey; podTerminationPolicy: PodTerminationPolicy }): Promise<number>;
  /** Patch the worker-index label onto the pods of this worker StatefulSet (a shared template cannot carry it). */
  labelWorkerPods(input: { lwsName: string; statefulSet: ObjectIdentity }): Promise<number>;
}
