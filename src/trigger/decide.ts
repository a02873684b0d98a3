// What the trigger does about each change it sees: pure functions from (change, what it knows) to workflow starts.
// Everything here is recomputed from a fresh list after a restart; deterministic workflow IDs make a repeated start
// a no-op, so the trigger never needs to remember what it already started.
import {
  ANNOTATION_RECOVER,
  deletionMadeAt,
  isDeleting,
  LABEL_NAME,
  lifecycleOf,
  lwsFacts,
  parsePodName,
  predatesLws,
  recoverRequested,
  resolvePodTerminationPolicy,
  rolloutUnderWay,
  workflowId,
  workflowSummary,
  workersWaitForLeader,
  type LeaderWorkerSet,
  type Lifecycle,
  type LwsFacts,
  type ObjectKey,
  type PodFacts,
  type PodTerminationPolicy,
  type StatefulSetFacts,
  type WorkflowOp,
} from '../model/index.js';
import type { SeenWorkers } from '../activities/types.js';
import type { ProvisionGroupInput } from '../workflows/provision-group.js';
import type { ReconcileInput } from '../workflows/reconcile.js';
import type { RecreateGroupInput } from '../workflows/recreate-group.js';
import type { TeardownGroupInput } from '../workflows/teardown-group.js';

/** What the trigger currently knows of the cluster (from its watches). */
export interface Knowledge {
  lws(ref: ObjectKey): LeaderWorkerSet | undefined;
  /**
   * The leader pod that owns this worker pod's StatefulSet (through the owner chain, never by name: by the time an
   * old group's workers terminate, a replacement leader of the same name may exist).
   */
  leaderOfWorker(worker: PodFacts): PodFacts | undefined;
  /** Whether the group of this leader uid has been fully ready at least once (RecreateGroupAfterStart). */
  groupStarted(leaderUid: string): boolean;
  /** The worker StatefulSet this leader uid controls and its pods not yet terminating, if the watches showed one. */
  workersOf(leaderUid: string): SeenWorkers | undefined;
  /** The namespace is being deleted: it takes its LWSs with it, whatever order its objects go in. */
  namespaceTerminating(namespace: string): boolean;
  /**
   * spec.replicas of the LWS's leader StatefulSet, if the watches showed it: above the LWS's replicas while a rolling
   * update keeps surge groups.
   */
  leaderReplicas(ref: ObjectKey): number | undefined;
}

/** Each workflow the trigger starts, with the input its start carries. */
interface WorkflowInputs {
  reconcileLeaderWorkerSet: ReconcileInput;
  provisionGroup: ProvisionGroupInput;
  teardownGroup: TeardownGroupInput;
  recreateGroup: RecreateGroupInput;
}

export type WorkflowType = keyof WorkflowInputs;

/** A start of one workflow type, typed by its input. */
export type WorkflowStart = { [T in WorkflowType]: { workflowType: T; args: [WorkflowInputs[T]] } }[WorkflowType];

export type StartAction = WorkflowStart & {
  /** `signal`: only to a run that is open (one that is to end); no start. */
  kind: 'start' | 'signal-with-start' | 'signal';
  workflowId: string;
  summary: string;
  ref: ObjectKey;
  groupIndex?: number;
  lifecycle?: Lifecycle | 'provision' | 'reconcile' | 'recreate';
  /** A teardown's policy as the trigger knows it: set as its search attribute at the start. */
  policy?: PodTerminationPolicy;
  /**
   * A reconcile signal for a change of the LWS's pods or StatefulSets: it goes with the rest of its burst, after the
   * batch window (trigger/starter.ts). Any other signal goes at once.
   */
  batch?: boolean;
  /** Why, for the decision log. */
  reason: string;
};

function start<T extends WorkflowType>(
  cluster: string,
  ref: ObjectKey,
  op: WorkflowOp,
  workflowType: T,
  input: WorkflowInputs[T],
  reason: string,
) {
  const id = workflowId(cluster, ref, op);
  return {
    ref,
    workflowId: id,
    summary: workflowSummary(ref, op),
    workflowType,
    args: [input] as [WorkflowInputs[T]],
    reason,
  };
}

/**
 * An LWS that exists and is not being deleted: keep its current generation reconciled. `cluster` is the name of the
 * cluster the trigger watches (config/cluster.ts), in every workflow ID.
 */
export function reconcileAction(cluster: string, lws: LeaderWorkerSet, reason: string): StartAction | undefined {
  return lws.metadata.deletionTimestamp ? undefined : reconcileOf(cluster, lws, 'signal-with-start', reason);
}

/**
 * The LWS is being deleted or gone: its reconcile run ends at its next look, instead of at its 5-minute resync (and
 * the Web UI stops showing it running). A plain signal: a run that has ended already is not started again.
 */
export function reconcileEndAction(cluster: string, lws: LeaderWorkerSet, reason: string): StartAction | undefined {
  return reconcileOf(cluster, lws, 'signal', reason);
}

/** The reconcile workflow of the LWS's current generation, told of a change. */
function reconcileOf(
  cluster: string,
  lws: LeaderWorkerSet,
  kind: 'signal-with-start' | 'signal',
  reason: string,
): StartAction | undefined {
  const { namespace, name, generation } = lws.metadata;
  if (!namespace || !name) return undefined;
  const ref = { namespace, name };
  const gen = generation ?? 1;
  const op: WorkflowOp = { kind: 'reconcile', generation: gen };
  return {
    kind,
    lifecycle: 'reconcile',
    ...start(cluster, ref, op, 'reconcileLeaderWorkerSet', { ref, generation: gen }, reason),
  };
}

/**
 * A change of the LWS's pods or StatefulSets, batched with the rest of its burst. A group that became Ready while the
 * LWS's status says a rolling update is under way goes at once: the rollout's next step waits for exactly that.
 */
export function groupChangeAction(
  cluster: string,
  lws: LeaderWorkerSet,
  reason: string,
  groupReady: boolean,
): StartAction | undefined {
  const action = reconcileAction(cluster, lws, reason);
  return action && { ...action, batch: !(groupReady && rolloutUnderWay(lws)) };
}

/**
 * Whether a change of the LWS is one its reconcile acts on: not a write of its status alone (the reconcile's own,
 * mostly), which would only set off one more pass.
 */
export function lwsChangeMatters(before: LeaderWorkerSet | undefined, after: LeaderWorkerSet): boolean {
  if (before === undefined) return true;
  const [b, a] = [before.metadata, after.metadata];
  return (
    b.uid !== a.uid ||
    b.generation !== a.generation ||
    Boolean(b.deletionTimestamp) !== Boolean(a.deletionTimestamp) ||
    !sameStrings(b.annotations, a.annotations) ||
    !sameStrings(b.labels, a.labels)
  );
}

/**
 * Whether a change of a StatefulSet of the LWS's is one the reconcile's status reads: its readiness as upstream judges
 * it (ready, available and rolled-out replicas), or its deletion.
 */
export function statefulSetChangeMatters(before: StatefulSetFacts | undefined, after: StatefulSetFacts): boolean {
  return (
    before === undefined ||
    before.replicas !== after.replicas ||
    before.readyReplicas !== after.readyReplicas ||
    before.availableReplicas !== after.availableReplicas ||
    before.rolledOut !== after.rolledOut ||
    isDeleting(before) !== isDeleting(after)
  );
}

function sameStrings(a: Record<string, string> = {}, b: Record<string, string> = {}): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

/**
 * When a leader's deletion was made, for its teardown's timeline and teardownMs: when the trigger saw it (`observedAt`),
 * unless the pod's own record says it was earlier (the trigger was down, or saw it only in a resync). That record has
 * whole seconds, so its latest possible moment is taken: a late start is then reported at most 1 s short, never long.
 */
export function leaderDeletedAt(pod: PodFacts, observedAt: number | undefined): string | undefined {
  const madeAt = deletionMadeAt(pod);
  const bounds = [observedAt, madeAt === undefined ? undefined : madeAt + 999].filter(
    (t): t is number => t !== undefined && Number.isFinite(t),
  );
  return bounds.length > 0 ? new Date(Math.min(...bounds)).toISOString() : undefined;
}

/**
 * Workflow starts for a pod that carries the LWS name label (added, updated or seen in a list), `observedAt` being
 * when the trigger saw it so.
 */
export function podActions(
  cluster: string,
  pod: PodFacts,
  know: Knowledge,
  searchAttributes: boolean,
  observedAt?: number,
): StartAction[] {
  const lwsName = pod.labels[LABEL_NAME];
  if (!lwsName) return [];
  const parsed = parsePodName(lwsName, pod.name);
  if (!parsed) return [];
  const ref = { namespace: pod.namespace, name: lwsName };
  const { groupIndex, workerIndex } = parsed;
  const lws = know.lws(ref);
  // The LWS as something that still wants this pod's group: not being deleted, nor in a namespace being deleted (the
  // namespace controller deletes pods, StatefulSets and the LWS in no set order: a leader it deletes first is no
  // rebuild), nor created after the pod (the pod is an older LWS's of that name, deleted and created again).
  const wanting =
    lws &&
    !lws.metadata.deletionTimestamp &&
    !know.namespaceTerminating(pod.namespace) &&
    !predatesLws(lws, pod.createdAt)
      ? lws
      : undefined;
  const actions: StartAction[] = [];
  const identity = { namespace: pod.namespace, name: pod.name, uid: pod.uid };

  if (workerIndex === 0) {
    if (isDeleting(pod)) {
      const lifecycle = wanting ? lifecycleOf(wanting, groupIndex, pod, know.leaderReplicas(ref)) : 'delete';
      // The policy as known now, so that under Parallel the workflow's first call is the delete; with the workers
      // as seen, that delete needs no read first.
      const { policy } = resolvePodTerminationPolicy({ lws, leaderPod: pod });
      const workers = policy === 'Parallel' ? know.workersOf(pod.uid) : undefined;
      const deletedAt = leaderDeletedAt(pod, observedAt);
      actions.push({
        kind: 'start',
        groupIndex,
        lifecycle,
        policy,
        ...start(
          cluster,
          ref,
          { kind: 'teardown', groupIndex, oldLeaderUid: pod.uid, lifecycle },
          'teardownGroup',
          {
            ref,
            groupIndex,
            leader: identity,
            lifecycle,
            searchAttributes,
            policy,
            ...(workers ? { workers } : {}),
            ...(deletedAt ? { leaderDeletedAt: deletedAt } : {}),
          },
          `leader ${pod.name} is terminating (${lifecycle})`,
        ),
      });
      return actions;
    }
    if (wanting) {
      actions.push({
        kind: 'start',
        groupIndex,
        lifecycle: 'provision',
        ...start(
          cluster,
          ref,
          { kind: 'provision', groupIndex, leaderUid: pod.uid },
          'provisionGroup',
          { ref, groupIndex, leader: identity, ...seenAtStart(wanting, pod) },
          `leader ${pod.name} exists`,
        ),
      });
    }
  }

  const recreate = (
    leader: PodFacts,
    input: Pick<RecreateGroupInput, 'cause' | 'pod' | 'reason' | 'groupHadStarted' | 'recover'>,
  ) => {
    const { reason, groupHadStarted, recover } = input;
    const op = { kind: 'recreate' as const, groupIndex, leaderUid: leader.uid, beforeStart: !groupHadStarted, recover };
    const identityOfLeader = { namespace: leader.namespace, name: leader.name, uid: leader.uid };
    actions.push({
      kind: 'start',
      groupIndex,
      lifecycle: 'recreate',
      ...start(cluster, ref, op, 'recreateGroup', { ref, groupIndex, leader: identityOfLeader, ...input }, reason),
    });
  };

  // A failed group (its restart budget spent) that the user asked to recover: rebuilt, its count started again.
  if (wanting && workerIndex === 0 && recoverRequested(pod)) {
    const reason = `the user asked to recover group ${groupIndex} (${ANNOTATION_RECOVER}=true on ${pod.name})`;
    recreate(pod, { cause: 'recover', pod: pod.name, reason, groupHadStarted: true, recover: true });
    return actions;
  }

  // Restart policy: a restarted container, or a deleted worker of a group whose leader is not terminating.
  const leader = workerIndex === 0 ? pod : know.leaderOfWorker(pod);
  const restarted = pod.restartCount > 0 && !isDeleting(pod);
  const workerDeleted = workerIndex > 0 && isDeleting(pod);
  if (wanting && leader && !isDeleting(leader) && (restarted || workerDeleted)) {
    const reason = restarted ? `a container of ${pod.name} restarted` : `worker pod ${pod.name} was deleted`;
    const cause = restarted ? 'container-restart' : 'pod-deletion';
    recreate(leader, { cause, pod: pod.name, reason, groupHadStarted: know.groupStarted(leader.uid) });
  }
  return actions;
}

/** What a provisioning that waits for nothing builds on at once, saving its first look (ProvisionGroupInput.seen). */
export function seenAtStart(lws: LeaderWorkerSet, leader: PodFacts): Pick<ProvisionGroupInput, 'seen'> {
  const facts = specFactsOf(lws);
  return workersWaitForLeader(facts) ? {} : { seen: { lws: facts, leader } };
}

// The informer hands over a new object for each change of the LWS, so its facts are worked out once per change, not
// once per event of each of its leaders (hashing and validating the templates each time).
const specFacts = new WeakMap<LeaderWorkerSet, Omit<LwsFacts, 'status'>>();

function specFactsOf(lws: LeaderWorkerSet): Omit<LwsFacts, 'status'> {
  let facts = specFacts.get(lws);
  if (facts === undefined) {
    const { status: _status, ...rest } = lwsFacts(lws);
    facts = rest;
    specFacts.set(lws, facts);
  }
  return facts;
}
