// The LWS status subresource, computed from what the cluster holds, with upstream's semantics (its counts,
// conditions, reasons and messages): pure, so the reconcile workflow can call it.
import { canonicalJson } from './json.js';
import {
  ANNOTATION_GROUP_FAILED,
  ANNOTATION_SIZE,
  ANNOTATION_WORKERS_REFUSED,
  LABEL_TEMPLATE_REVISION_HASH,
} from './labels.js';
import type { LwsFacts } from './lws-facts.js';
import { CONDITION_NAME_CONFLICT } from './name-conflicts.js';
import { parseGroupIndex, workerStatefulSetName } from './names.js';
import { CONDITION_REPLICA_FAILURE, type Refusal } from './refusals.js';
import { CONDITION_FAILED } from './restart-budget.js';
import { isDeleting, selectors, type LeaderStatefulSetFacts, type PodFacts, type StatefulSetFacts } from './objects.js';
import type { Condition, LeaderWorkerSetStatus } from './types.js';

export type LeaderFacts = Pick<
  PodFacts,
  'name' | 'uid' | 'labels' | 'annotations' | 'ready' | 'phase' | 'deletionTimestamp'
>;

export type WorkerSetFacts = Pick<
  StatefulSetFacts,
  | 'name'
  | 'ownerUid'
  | 'labels'
  | 'replicas'
  | 'readyReplicas'
  | 'availableReplicas'
  | 'rolledOut'
  | 'deletionTimestamp'
>;

const only = (from: Record<string, string>, keys: string[]) =>
  Object.fromEntries(keys.filter((k) => from[k] !== undefined).map((k) => [k, from[k]!]));

/**
 * A leader as a reconcile pass records it: only what groupStates, the status and the revisions in use read. Every
 * pass records every group, so each byte here is a thousand at 1,000 groups.
 */
export function leaderFactsOf(p: PodFacts): LeaderFacts {
  return {
    name: p.name,
    uid: p.uid,
    labels: only(p.labels, [LABEL_TEMPLATE_REVISION_HASH]),
    annotations: only(p.annotations, [ANNOTATION_SIZE, ANNOTATION_WORKERS_REFUSED, ANNOTATION_GROUP_FAILED]),
    ready: p.ready,
    ...(p.phase !== undefined && { phase: p.phase }),
    ...(p.deletionTimestamp !== undefined && { deletionTimestamp: p.deletionTimestamp }),
  };
}

/** A worker StatefulSet as a reconcile pass records it (leaderFactsOf). */
export function workerSetFactsOf(s: StatefulSetFacts): WorkerSetFacts {
  return {
    name: s.name,
    ...(s.ownerUid !== undefined && { ownerUid: s.ownerUid }),
    labels: only(s.labels, [LABEL_TEMPLATE_REVISION_HASH]),
    replicas: s.replicas,
    readyReplicas: s.readyReplicas,
    ...(s.availableReplicas !== undefined && { availableReplicas: s.availableReplicas }),
    ...(s.rolledOut !== undefined && { rolledOut: s.rolledOut }),
    ...(s.deletionTimestamp !== undefined && { deletionTimestamp: s.deletionTimestamp }),
  };
}

/** One group, judged by its own revision: a group of an older size is Ready when all of its own pods are. */
export interface GroupState {
  groupIndex: number;
  /** Its leader is Running and Ready and its worker StatefulSet has every replica available and rolled out. */
  ready: boolean;
  /** Leader and worker StatefulSet both carry the current revision. */
  updated: boolean;
  terminating: boolean;
  /** Its worker StatefulSet exists (or none is needed): upstream counts a group in the status only then. */
  formed: boolean;
}

/** Upstream's StatefulsetReady: every replica available, and no pod left on an older StatefulSet revision. */
function workersReady(workers: WorkerSetFacts): boolean {
  return (workers.availableReplicas ?? workers.readyReplicas) === workers.replicas && workers.rolledOut !== false;
}

/** The group's own size: its leader's size annotation (written from its revision), else the spec's. */
function groupSize(leader: LeaderFacts, specSize: number): number {
  const annotated = Number(leader.annotations[ANNOTATION_SIZE]);
  return Number.isInteger(annotated) && annotated >= 1 ? annotated : specSize;
}

export function groupStates(lws: LwsFacts, leaders: LeaderFacts[], workerSets: WorkerSetFacts[]): GroupState[] {
  const { name } = lws.metadata;
  const { revision } = lws;
  const states: GroupState[] = [];
  // By owner: a scan of every StatefulSet per leader is a million comparisons a pass at 1,000 groups.
  const liveByOwner = new Map<string, WorkerSetFacts[]>();
  for (const s of workerSets) {
    if (s.ownerUid === undefined || isDeleting(s)) continue;
    liveByOwner.set(s.ownerUid, [...(liveByOwner.get(s.ownerUid) ?? []), s]);
  }
  for (const leader of leaders) {
    const groupIndex = parseGroupIndex(name, leader.name);
    if (groupIndex === undefined) continue;
    const solo = groupSize(leader, lws.spec.leaderWorkerTemplate.size) === 1;
    const workers = liveByOwner.get(leader.uid)?.find((s) => s.name === workerStatefulSetName(name, groupIndex));
    const terminating = isDeleting(leader);
    const leaderReady = leader.ready && (leader.phase ?? 'Running') === 'Running' && !terminating;
    const leaderUpdated = leader.labels[LABEL_TEMPLATE_REVISION_HASH] === revision;
    states.push({
      groupIndex,
      terminating,
      formed: solo || workers !== undefined,
      ready: leaderReady && (solo || (workers !== undefined && workersReady(workers))),
      updated: leaderUpdated && (solo || workers?.labels[LABEL_TEMPLATE_REVISION_HASH] === revision),
    });
  }
  return states.sort((a, b) => a.groupIndex - b.groupIndex);
}

export const CONDITION_AVAILABLE = 'Available';
export const CONDITION_PROGRESSING = 'Progressing';
export const CONDITION_UPDATE_IN_PROGRESS = 'UpdateInProgress';

/** Upstream's three conditions, each only ever added as True, with its reason and message. */
const CONDITIONS = {
  [CONDITION_AVAILABLE]: { reason: 'AllGroupsReady', message: 'All replicas are ready' },
  [CONDITION_PROGRESSING]: { reason: 'GroupsProgressing', message: 'Replicas are progressing' },
  [CONDITION_UPDATE_IN_PROGRESS]: { reason: 'GroupsUpdating', message: 'Rolling Upgrade is in progress' },
} as const;

type UpstreamCondition = keyof typeof CONDITIONS;

/** Available excludes the other two: setting it True turns them False, and each of them turns it False. */
function exclusive(a: string, b: string): boolean {
  const pair = new Set([a, b]);
  return pair.has(CONDITION_AVAILABLE) && (pair.has(CONDITION_PROGRESSING) || pair.has(CONDITION_UPDATE_IN_PROGRESS));
}

/**
 * Upstream's setConditions: each wanted condition is set True, its exclusive partners False, the others stay as they
 * were. Better than upstream: lastTransitionTime moves only when a status flips (upstream also moves it on a new
 * generation), as the Kubernetes API conventions ask.
 */
function setConditions(
  previous: readonly Condition[],
  wanted: readonly UpstreamCondition[],
  generation: number | undefined,
  now: string,
): Condition[] {
  const out = previous.map((c) => ({ ...c }));
  for (const type of wanted) {
    const at = out.findIndex((c) => c.type === type);
    const set: Condition = { type, status: 'True', ...CONDITIONS[type], lastTransitionTime: now };
    if (at === -1) out.push(set);
    else if (out[at]!.status !== 'True') out[at] = set;
    else out[at] = { ...out[at]!, ...CONDITIONS[type] };
    for (let i = 0; i < out.length; i++) {
      const c = out[i]!;
      if (exclusive(c.type, type) && c.status === 'True') out[i] = { ...c, status: 'False', lastTransitionTime: now };
    }
  }
  return out.map((c) => ({ ...c, observedGeneration: generation }));
}

/** The counts behind the status and the conditions, as upstream's updateConditions computes them. */
export interface StatusCounts {
  /** Groups Ready, surge groups included. */
  ready: number;
  /** Groups on the current revision, leader and workers, surge groups included. */
  updated: number;
  /** Which conditions are set True. */
  conditions: UpstreamCondition[];
  /** Every group at or above the partition is updated and Ready, and the partition is 0: old revisions may go. */
  updateDone: boolean;
}

export function statusCounts(lws: LwsFacts, groups: GroupState[]): StatusCounts {
  const { spec } = lws;
  const { replicas } = spec;
  const partition = spec.rolloutStrategy.rollingUpdateConfiguration.partition;
  const counted = groups.filter((g) => g.formed && !g.terminating);
  const inRange = counted.filter((g) => g.groupIndex < replicas && g.groupIndex >= partition);
  const readyInSpec = counted.filter((g) => g.groupIndex < replicas && g.ready).length;
  const updatedInRange = inRange.filter((g) => g.updated).length;
  const updatedAndReady = inRange.filter((g) => g.updated && g.ready).length;
  const conditions: UpstreamCondition[] =
    updatedInRange < inRange.length
      ? [CONDITION_UPDATE_IN_PROGRESS, CONDITION_PROGRESSING]
      : readyInSpec === replicas && updatedAndReady === inRange.length
        ? [CONDITION_AVAILABLE]
        : [CONDITION_PROGRESSING];
  return {
    ready: counted.filter((g) => g.ready).length,
    updated: counted.filter((g) => g.updated).length,
    conditions,
    updateDone: partition === 0 && updatedAndReady === replicas,
  };
}

/**
 * `now`: the caller's clock (workflow time); `leaderStatefulSet`: its status.replicas is the LWS's; `nameConflict`:
 * why the leader StatefulSet cannot be made; `refusal`: why the API server refused a StatefulSet built from the
 * templates (model/refusals.ts); `failed`: groups whose restart budget is spent (model/restart-budget.ts, upstream's
 * KEP-820 condition). Each is present only while it lasts.
 */
export function computeStatus(
  lws: LwsFacts,
  counts: StatusCounts,
  leaderStatefulSet: Pick<LeaderStatefulSetFacts, 'statusReplicas'> | undefined,
  now: string,
  nameConflict?: string,
  refusal?: Refusal,
  failed?: { reason: string; message: string },
): LeaderWorkerSetStatus {
  const { generation } = lws.metadata;
  const ours = [CONDITION_NAME_CONFLICT, CONDITION_REPLICA_FAILURE, CONDITION_FAILED];
  const previous = (lws.status?.conditions ?? []).filter((c) => !ours.includes(c.type));
  const conditions = setConditions(previous, counts.conditions, generation, now);
  const lasting = (type: string, reason: string, message: string): Condition => {
    const before = lws.status?.conditions?.find((c) => c.type === type);
    const since = before?.status === 'True' ? before.lastTransitionTime : now;
    return { type, status: 'True', reason, message, lastTransitionTime: since, observedGeneration: generation };
  };
  if (nameConflict !== undefined) conditions.push(lasting(CONDITION_NAME_CONFLICT, 'NameTaken', nameConflict));
  if (refusal !== undefined) conditions.push(lasting(CONDITION_REPLICA_FAILURE, refusal.reason, refusal.message));
  if (failed !== undefined) conditions.push(lasting(CONDITION_FAILED, failed.reason, failed.message));
  return {
    replicas: leaderStatefulSet?.statusReplicas ?? 0,
    readyReplicas: counts.ready,
    updatedReplicas: counts.updated,
    // The scale subresource's selector, for an HPA: the leader pods.
    hpaPodSelector: selectors.leadersOf(lws.metadata.name),
    observedGeneration: generation,
    conditions,
  };
}

/**
 * The Event upstream records when the first condition of the pass was not True before: its reason, and its message
 * with the count of Ready groups.
 */
export function conditionEvent(lws: LwsFacts, counts: StatusCounts): { reason: string; message: string } | undefined {
  const [first] = counts.conditions;
  if (first === undefined || conditionIsTrue(lws, first)) return undefined;
  const { reason, message } = CONDITIONS[first];
  return { reason, message: `${message}, with ${counts.ready} groups ready of total ${lws.spec.replicas} groups` };
}

/** A rolling update is under way, as the status says (this build's or an earlier one's): group Ready signals hurry. */
export function rolloutUnderWay(lws: { status?: LeaderWorkerSetStatus }): boolean {
  return conditionIsTrue(lws, CONDITION_UPDATE_IN_PROGRESS);
}

export function conditionIsTrue(lws: { status?: LeaderWorkerSetStatus }, type: string): boolean {
  return lws.status?.conditions?.some((c) => c.type === type && c.status === 'True') ?? false;
}

export function sameStatus(current: LeaderWorkerSetStatus | undefined, next: LeaderWorkerSetStatus): boolean {
  return current !== undefined && canonicalJson(current) === canonicalJson(next);
}
