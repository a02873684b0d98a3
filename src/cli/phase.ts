// The phase of each group of an LWS as `lws-temporal status` shows it: pure, from facts read off the cluster.
import {
  ANNOTATION_GROUP_FAILED,
  ANNOTATION_WORKERS_REFUSED,
  backoffUntil,
  isDeleting,
  LABEL_TEMPLATE_REVISION_HASH,
  parseGroupIndex,
  parsePodName,
  restartCounts,
  restartKey,
  workerStatefulSetName,
  type PodFacts,
  type Recreation,
  type StatefulSetFacts,
} from '../model/index.js';

export const PHASES = ['Ready', 'Provisioning', 'Refused', 'Failed', 'Terminating', 'Rebuilding', 'Missing'] as const;
/**
 * - Ready: the leader and every worker are ready, the workers in the StatefulSet this leader controls.
 * - Provisioning: the leader exists and its group is not complete or not ready yet.
 * - Refused: the leader exists and the API server refused its worker StatefulSet (the LWS's ReplicaFailure says why).
 * - Failed: the group spent its restart budget (maxGroupRestarts) and is kept as it is until the user recovers it.
 * - Terminating: the leader pod is being deleted (its teardown workflow runs).
 * - Rebuilding: the leader is gone (or replaced) while the old group's worker StatefulSet is still there.
 * - Missing: neither a leader nor a worker StatefulSet exists for a group index below spec.replicas.
 */
export type Phase = (typeof PHASES)[number];

export interface GroupFacts {
  /** Pods per group, leader included. */
  size: number;
  leader?: PodFacts;
  /** Its controlling owner is the leader pod it was created for. */
  workerSet?: StatefulSetFacts;
  /** Worker pods of this group index (any incarnation: only those of `workerSet` count). */
  workers: PodFacts[];
}

export function groupPhase(g: GroupFacts): Phase {
  const { leader, workerSet } = g;
  if (!leader) return workerSet ? 'Rebuilding' : 'Missing';
  if (isDeleting(leader)) return 'Terminating';
  if (leader.annotations[ANNOTATION_GROUP_FAILED] !== undefined) return 'Failed';
  // The replacement leader waits while the old group's StatefulSet (same name) still exists or is going.
  if (workerSet && (isDeleting(workerSet) || workerSet.ownerUid !== leader.uid)) return 'Rebuilding';
  if (g.size > 1 && !workerSet) return leader.annotations[ANNOTATION_WORKERS_REFUSED] ? 'Refused' : 'Provisioning';
  return leader.ready && readyWorkers(g) >= g.size - 1 ? 'Ready' : 'Provisioning';
}

const serving = (p: PodFacts) => p.ready && !isDeleting(p);

/**
 * Ready workers of the group's current incarnation: pods of its worker StatefulSet, when that StatefulSet belongs
 * to the current leader (or there is no leader any more). A replacement leader's group has no workers yet while
 * the old StatefulSet is still there.
 */
function readyWorkers(g: GroupFacts): number {
  const set = g.workerSet;
  if (!set || (g.leader && set.ownerUid !== g.leader.uid)) return 0;
  return g.workers.filter((w) => w.ownerUid === set.uid && serving(w)).length;
}

/** Pods of the group's current incarnation that are ready and not terminating, leader included. */
export function readyPods(g: GroupFacts): number {
  return (g.leader && serving(g.leader) ? 1 : 0) + readyWorkers(g);
}

export interface GroupRow {
  group: number;
  /** Name of the leader pod, when one exists. */
  leaderPod?: string;
  phase: Phase;
  readyPods: number;
  size: number;
  /** Name of the worker StatefulSet, when one exists. */
  workerStatefulSet?: string;
  /** Whether the leader was built from the current template; undefined without a leader. */
  revisionUpToDate?: boolean;
  /** Recreations of this incarnation's revision (group-restart-count), and the budget when there is one. */
  restarts?: { count: number; max?: number };
  /** Its recreation waits (groupRestartBackoff) until `at`. */
  backoff?: Recreation;
}

/** The leader StatefulSet's records of group recreations (model/restart-budget.ts, model/recreate-backoff.ts). */
export interface RecreationRecords {
  counts?: string;
  recreations?: string;
  maxGroupRestarts?: number;
  /** The clock the backoff is read against (ms). */
  now: number;
}

export function groupRow(
  groupIndex: number,
  g: GroupFacts,
  currentRevision: string,
  records?: RecreationRecords,
): GroupRow {
  const revision = g.leader?.labels[LABEL_TEMPLATE_REVISION_HASH];
  const count = revision === undefined ? undefined : restartCounts(records?.counts)[restartKey(revision, groupIndex)];
  const max = records?.maxGroupRestarts;
  const backoff =
    revision === undefined || records === undefined
      ? undefined
      : backoffUntil(records.recreations, revision, groupIndex, records.now);
  return {
    ...(count !== undefined || max !== undefined
      ? { restarts: { count: count ?? 0, ...(max !== undefined && { max }) } }
      : {}),
    ...(backoff && { backoff }),
    group: groupIndex,
    leaderPod: g.leader?.name,
    phase: groupPhase(g),
    readyPods: readyPods(g),
    size: g.size,
    workerStatefulSet: g.workerSet?.name,
    revisionUpToDate: g.leader ? g.leader.labels[LABEL_TEMPLATE_REVISION_HASH] === currentRevision : undefined,
  };
}

export interface LwsFacts {
  name: string;
  /** spec.replicas, defaulted. */
  replicas: number;
  /** spec.leaderWorkerTemplate.size, defaulted. */
  size: number;
  /** templateRevisionHash of the current spec. */
  revision: string;
  /** Leader pods of the LWS (worker-index 0), named `<lws>-<i>`. */
  leaders: PodFacts[];
  /** Worker StatefulSets of the LWS (not the leader StatefulSet), named `<lws>-<i>`. */
  workerSets: StatefulSetFacts[];
  /** Worker pods of the LWS, named `<lws>-<i>-<j>`. */
  workers: PodFacts[];
  records?: RecreationRecords;
}

/**
 * One row per group index: every index below spec.replicas (Missing when nothing exists), plus any higher index
 * that still has a leader or a worker StatefulSet (a scale-down in progress). Sorted by index.
 */
export function groupRows(lws: LwsFacts): GroupRow[] {
  const indices = new Set<number>();
  for (let i = 0; i < lws.replicas; i++) indices.add(i);
  const leaders = new Map<number, PodFacts>();
  for (const p of lws.leaders) {
    const i = parseGroupIndex(lws.name, p.name);
    if (i === undefined) continue;
    // Two pods of one name cannot exist at once; prefer the live one should a stale read show both.
    const known = leaders.get(i);
    if (!known || isDeleting(known)) leaders.set(i, p);
    indices.add(i);
  }
  const sets = new Map<number, StatefulSetFacts>();
  for (const s of lws.workerSets) {
    const i = parseGroupIndex(lws.name, s.name);
    if (i === undefined || s.name !== workerStatefulSetName(lws.name, i)) continue;
    sets.set(i, s);
    indices.add(i);
  }
  const workers = new Map<number, PodFacts[]>();
  for (const p of lws.workers) {
    const parsed = parsePodName(lws.name, p.name);
    if (parsed === undefined || parsed.workerIndex === 0) continue;
    workers.set(parsed.groupIndex, [...(workers.get(parsed.groupIndex) ?? []), p]);
  }
  return [...indices]
    .sort((a, b) => a - b)
    .map((i) =>
      groupRow(
        i,
        { size: lws.size, leader: leaders.get(i), workerSet: sets.get(i), workers: workers.get(i) ?? [] },
        lws.revision,
        lws.records,
      ),
    );
}
