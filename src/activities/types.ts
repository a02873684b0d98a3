// The contract between workflows and activities: plain JSON in and out (Temporal payloads), no client objects.
// Workflows import this file for types only; src/activities/index.ts implements it against the Kubernetes API.
import type {
  ObjectIdentity,
  ObjectKey,
  PodFacts,
  StatefulSetFacts,
  LeaderFacts,
  LeaderStatefulSetFacts,
  WorkerSetFacts,
  LeaderStatefulSetOptions,
  LeaderStatefulSetStep,
  LeaderWorkerSetStatus,
  LwsFacts,
  LwsTarget,
  PodTerminationPolicy,
  PodTerminationPolicyValue,
  TeardownReads,
} from '../model/index.js';

export type EnsureOutcome = 'created' | 'updated' | 'unchanged';

/**
 * The leader StatefulSet's annotations of group recreations: restart counts (model/restart-budget.ts) and last
 * recreations (model/recreate-backoff.ts), and the version they were read at.
 */
export interface GroupRestarts {
  counts?: string;
  recreations?: string;
  resourceVersion: string;
}

export type EnsureRevisionOutcome = 'created' | 'unchanged' | 'reused';

/** The LWS there is no longer the one decided on (model/lws-facts.ts, LwsTarget): nothing done; read it again. */
export type Stale = 'stale';

/** A reconcile pass's look at the groups: only what its decisions read (leaderFactsOf, workerSetFactsOf). */
export interface Groups {
  leaders: LeaderFacts[];
  workerStatefulSets: WorkerSetFacts[];
  /** Absent before it is created. */
  leaderStatefulSet?: LeaderStatefulSetFacts;
}

export type EnsureLeaderStatefulSetResult =
  | EnsureOutcome
  /** An older incarnation's leader pods (and StatefulSet) hold the names: wait until they are gone, ensure again. */
  | { outcome: 'blocked'; statefulSet?: ObjectIdentity; pods: ObjectIdentity[] }
  /** Another LWS's worker StatefulSet has the name (model/name-conflicts.ts): left alone, `holder` in words. */
  | { outcome: 'name-taken'; holder: string };

export type EnsureWorkerStatefulSetResult =
  | { outcome: 'exists'; uid: string }
  /**
   * `released`: the uid of an older incarnation that only its foreground deletion kept, deleted to make room.
   * `oldPods`: an older incarnation's pods, their StatefulSet gone already, still hold the names: the new pods come
   * once they are gone (waitForNamesFreed with `successor`).
   */
  | { outcome: 'created'; uid: string; released?: string; oldPods?: ObjectIdentity[] }
  /** Another leader's StatefulSet holds the name, or this leader's own being deleted: wait until `uid` is gone. */
  | {
      outcome: 'blocked';
      uid: string;
      ownerUid?: string;
      deleting: boolean;
      /** Old worker pods that still hold the names, their StatefulSet possibly gone already (see pods-of-names.ts). */
      pods?: ObjectIdentity[];
      /** Set when the holder is another LWS's leader StatefulSet, which goes only when that LWS does: in words. */
      takenBy?: string;
    }
  /** Size 1: the group is its leader alone. The leader was labelled (and its group Service made); no StatefulSet. */
  | { outcome: 'not-needed' }
  /**
   * The leader pod of that uid no longer exists, or is terminating: nothing was created (a StatefulSet it owned would
   * be collected).
   */
  | { outcome: 'leader-gone' };

export type DeleteOutcome =
  | 'deleted'
  /** Nothing of that name (or of that uid) exists any more. */
  | 'absent'
  /** It already has a deletionTimestamp: someone else is deleting it. */
  | 'already-deleting'
  /** Refused: its controlling owner is not the one the caller named. */
  | 'not-owned';

/** A group's worker StatefulSet and its not yet terminating pods, as the trigger's watch showed them. */
export interface SeenWorkers {
  statefulSet: ObjectIdentity;
  pods: ObjectIdentity[];
}

export interface GoneResult {
  /** When the activity saw it gone (RFC 3339 with milliseconds). */
  goneAt: string;
}

export interface NamesFreedInput {
  statefulSet?: ObjectIdentity;
  pods: ObjectIdentity[];
  successor?: ObjectIdentity;
}

export type NamesFreedResult = GoneResult | { releasable: ObjectIdentity };

/** `failed`: the API server refused or failed (logged); the garbage collector still removes it. */
export type ReleaseOutcome = 'released' | 'absent' | 'not-foreground' | 'pods-left' | 'failed';

export type ReadyResult = { readyAt: string } | { goneAt: string };
/** The node a pod was scheduled onto, or when it went before that. */
export type ScheduledResult = { node: string } | { goneAt: string };

export interface KubernetesEvent {
  /** The LWS the event is about (involvedObject). */
  lws: ObjectIdentity;
  type: 'Normal' | 'Warning';
  /** One of EVENT_REASONS. */
  reason: string;
  message: string;
}

export interface BeginTeardownInput {
  ref: ObjectKey;
  groupIndex: number;
  /** The terminating leader pod. */
  leader: ObjectIdentity;
  /** Under Parallel: deleted in the same round as the reads (deleteSeenWorkers). */
  deleteWorkers?: SeenWorkers;
}

/** What judgeTeardown judges on. */
export interface TeardownStart extends TeardownReads {
  /** Absent when no delete was asked for. */
  deleted?: DeleteOutcome;
}

/** `lws`: the target the activity reads the LWS by; the LWS it read, in the functions behind the activity. */
export interface WorkerStatefulSetInput<L> {
  lws: L;
  groupIndex: number;
  leader: ObjectIdentity;
  /** Exclusive placement: the leader node's value of the topology key, which the workers are pinned to. */
  topology?: { key: string; value: string };
  /** The leader's template-revision-hash: the workers are built from that revision. */
  revision?: string;
  /**
   * The target's policy and size as the workflow read them: the leader is then patched along with the LWS's read, not
   * after it. A read that finds another LWS makes the call stale, and the next one patches the leader again.
   */
  expected?: { podTerminationPolicy: PodTerminationPolicyValue; size: number };
  /**
   * The workflow decided before a wait (for an old group's names): the LWS is read along with the leader's round, never
   * taken from this worker's recent reads, so a change made during the wait is seen (stale).
   */
  afterWait?: boolean;
}

/**
 * No call takes or returns a whole LWS (its templates, env values, managedFields): the reads give its facts, and the
 * writes that build from its templates take its target and read it themselves.
 */
export interface LwsActivities {
  /** What the workflows decide on (model/lws-facts.ts); null when there is no LWS of that name. */
  getLeaderWorkerSet(ref: ObjectKey): Promise<LwsFacts | null>;
  getPod(key: ObjectKey): Promise<PodFacts | null>;
  getStatefulSet(key: ObjectKey): Promise<StatefulSetFacts | null>;
  /** Leader pods and worker StatefulSets that carry the LWS's name label, and the leader StatefulSet. */
  listGroups(ref: ObjectKey): Promise<Groups>;
  /** The revision of the LWS's current spec (model/controller-revisions.ts). */
  ensureControllerRevisionOf(target: LwsTarget): Promise<EnsureRevisionOutcome | Stale>;
  /** Deletes the revisions no group uses: all but `current` and `inUse`. Returns how many went. */
  pruneControllerRevisions(input: { ref: ObjectKey; uid: string; current: string; inUse: string[] }): Promise<number>;

  ensureHeadlessServiceOf(target: LwsTarget): Promise<EnsureOutcome | Stale>;
  /** `options` (replicas with surge, partition, revision hash) default to the spec's; `from`: the step last written. */
  ensureLeaderStatefulSetOf(
    target: LwsTarget,
    options?: LeaderStatefulSetOptions,
    from?: LeaderStatefulSetStep,
  ): Promise<EnsureLeaderStatefulSetResult | Stale>;
  /** Patches the leader first; a StatefulSet owned by anyone else, or being deleted, is `blocked`, left untouched. */
  ensureWorkerStatefulSetOf(input: WorkerStatefulSetInput<LwsTarget>): Promise<EnsureWorkerStatefulSetResult | Stale>;
  /** null when the node, or that label on it, does not exist. */
  getNodeLabel(input: { node: string; label: string }): Promise<string | null>;

  /** With `preconditions.uid`, only when `ownerUid` controls it: never another incarnation, nor another leader's. */
  deleteWorkerStatefulSet(
    input: ObjectKey & {
      /** The incarnation; omitted: the one that exists now, if `ownerUid` controls it. */
      uid?: string;
      ownerUid: string;
      propagationPolicy: 'Foreground' | 'Background';
    },
  ): Promise<DeleteOutcome>;
  /** Parallel, as the trigger saw the group: no read, the StatefulSet (foreground) and its pods at once, by uid. */
  deleteSeenWorkers(input: SeenWorkers): Promise<DeleteOutcome>;
  /** The delete and the reads in one call; fails only once every call has ended; a retry deletes nothing twice. */
  beginTeardown(input: BeginTeardownInput): Promise<TeardownStart>;
  /** Delete a pod with `preconditions.uid`. */
  deletePod(input: ObjectIdentity): Promise<DeleteOutcome>;
  /**
   * Deletes these pods at once (grace period 0), each with `preconditions.uid`: those a pod wait found stuck on a dead
   * node. A pod gone or of another uid (404, 409) is left out of `deleted`.
   */
  forceDeletePods(input: { pods: StuckPod[] }): Promise<ForceDeleteResult>;

  /**
   * Resolves once no pod of this uid exists (watch + heartbeats; safe to retry), or with `stuck` once it is past its
   * grace period on a dead node (model/dead-node.ts); its Events are recorded only when it is gone.
   */
  waitForPodGone(input: ObjectIdentity & TellsWhenDone & DeadNodeOptions): Promise<GoneResult | StuckResult>;
  waitForStatefulSetGone(input: ObjectIdentity & TellsWhenDone): Promise<GoneResult>;
  /**
   * None of `pods` nor the StatefulSet left. One only its foreground deletion keeps is released once the pods are gone
   * (as releaseForegroundDeletion); `releasable` when that release was refused. `successor`: the StatefulSet
   * created over the names already, marked once they are free (ANNOTATION_OLD_PODS_GONE).
   */
  waitForNamesFreed(input: NamesFreedInput): Promise<NamesFreedResult>;
  /**
   * Deletes again, in the background, a StatefulSet only its foreground deletion keeps: it goes at once. Only that uid,
   * only one already deleting in the foreground, only with none of its pods left. Best effort: logged, not thrown.
   */
  releaseForegroundDeletion(input: { statefulSet: ObjectIdentity; pods: ObjectIdentity[] }): Promise<ReleaseOutcome>;
  /** Resolves once the pod of this uid is Ready, or gone. */
  waitForPodReady(input: ObjectIdentity): Promise<ReadyResult>;
  /** Resolves once the pod of this uid has a node, or is gone. */
  waitForPodScheduled(input: ObjectIdentity): Promise<ScheduledResult>;
  /** Resolves once the StatefulSet of this uid is ready, or is gone; its Events are told only when it is ready. */
  waitForStatefulSetReady(input: ObjectIdentity & TellsWhenDone): Promise<ReadyResult>;

  updateLeaderWorkerSetStatus(input: { ref: ObjectKey; status: LeaderWorkerSetStatus }): Promise<void>;
  /** false: refused for good (the namespace is being deleted, say), logged and dropped. */
  recordEvent(event: KubernetesEvent): Promise<boolean>;
  /** A retry records none twice. */
  recordEvents(events: KubernetesEvent[]): Promise<boolean[]>;
}

/**
 * Events a wait records on the LWS itself once it ends, before it returns: the workflow task its result starts then
 * makes no call, and on a saturated API server no such call outlasts that task (docs/architecture.md, "Design
 * rationale").
 */
export interface TellsWhenDone {
  tell?: KubernetesEvent[];
}

export interface PodsGoneResult extends GoneResult {
  /** When the first of the pods was seen with a deletionTimestamp (undefined if none was seen terminating). */
  terminatingAt?: string;
}

/** A pod past its grace period whose node will never finish it (model/dead-node.ts). */
export interface StuckPod {
  pod: ObjectIdentity;
  node: string;
  /** Why, in words: `node gone`, `node tainted out-of-service`, `node NotReady for N s (...)`. */
  signal: string;
}

/** A pod wait ended early: these pods are stuck on dead nodes. The teardown force-deletes them and waits again. */
export interface StuckResult {
  stuck: StuckPod[];
  /** waitForPodsGone: as PodsGoneResult's, for the rounds after this one. */
  terminatingAt?: string;
}

/** What the pod waits of a teardown need to judge a dead node. */
export interface DeadNodeOptions {
  /** The LWS's opt-in to force deletes on NotReady alone; unset: never on NotReady alone. */
  forceDeleteOnNodeNotReadySeconds?: number;
}

export interface ForceDeleteResult {
  /** When the deletes went out. */
  at: string;
  deleted: StuckPod[];
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
  /** The wait also ends once the LWS no longer wants this group. */
  group: { lwsName: string; groupIndex: number };
}

export interface GroupWaitActivities {
  /**
   * Resolves once none of these pods (by uid) exists; reports when the first started terminating. Ends with `stuck`, as
   * waitForPodGone, naming every one of them then past its grace period on a dead node.
   */
  waitForPodsGone(
    input: { namespace: string; pods: ObjectIdentity[] } & TellsWhenDone & DeadNodeOptions,
  ): Promise<PodsGoneResult | StuckResult>;
  /** The pods of one group (leader and workers) that carry the LWS's name and group-index labels. */
  listGroupPods(input: { namespace: string; lwsName: string; groupIndex: number }): Promise<PodFacts[]>;
  /** A new leader Ready with size - 1 ready workers; or, with `group`, `notWanted` once the LWS no longer wants it. */
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

export interface LeaderPodActivities {
  /** Annotates live leader pods with the policy: a change applies to the next teardown without rolling any group. */
  annotateLeaderPods(input: { ref: ObjectKey; podTerminationPolicy: PodTerminationPolicyValue }): Promise<number>;
  /**
   * Writes on the leader pod why its group's worker StatefulSet was refused (model/refusals.ts), or takes it off
   * (`message` absent). False when the pod of this uid is gone.
   */
  markWorkersRefused(input: { leader: ObjectIdentity; message?: string }): Promise<boolean>;
  /** Writes on the leader pod why its group is no longer recreated (model/restart-budget.ts). False when it is gone. */
  markGroupFailed(input: { leader: ObjectIdentity; message: string }): Promise<boolean>;
  /** Writes on the leader pod why the restart policy recreates its group, for the teardown. False when it is gone. */
  markGroupRecreated(input: { leader: ObjectIdentity; reason: string }): Promise<boolean>;
  /** The groups' restart counts and last recreations on the leader StatefulSet; null when it is gone. */
  readGroupRestarts(leaderStatefulSet: ObjectKey): Promise<GroupRestarts | null>;
  /** Writes those given at that resourceVersion: `conflict` when it changed since (read again). */
  writeGroupRestarts(input: {
    leaderStatefulSet: ObjectKey;
    counts?: string;
    recreations?: string;
    resourceVersion: string;
  }): Promise<'written' | 'conflict' | 'gone'>;
}
