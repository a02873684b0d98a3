// The phase of each group of an LWS as `lws-temporal status` shows it: pure, from facts read off the cluster.
import { parseGroupIndex, parsePodName, workerStatefulSetName } from '../model/index.js';

export const PHASES = ['Ready', 'Provisioning', 'Terminating', 'Rebuilding', 'Missing'] as const;
/**
 * - Ready: the leader and every worker are ready, the workers in the StatefulSet this leader controls.
 * - Provisioning: the leader exists and its group is not complete or not ready yet.
 * - Terminating: the leader pod is being deleted (its teardown workflow runs).
 * - Rebuilding: the leader is gone (or replaced) while the old group's worker StatefulSet is still there.
 * - Missing: neither a leader nor a worker StatefulSet exists for a group index below spec.replicas.
 */
export type Phase = (typeof PHASES)[number];

/** What the phase needs of a pod (leader or worker). */
export interface PodFacts {
  name: string;
  uid: string;
  ready: boolean;
  deleting: boolean;
  /** Template revision hash label (leaders). */
  revision?: string;
  /** uid of its controlling owner (a worker's StatefulSet). */
  ownerUid?: string;
}

/** What the phase needs of a worker StatefulSet. */
export interface WorkerSetFacts {
  name: string;
  uid: string;
  /** uid of its controlling owner: the leader pod it was created for. */
  ownerUid?: string;
  deleting: boolean;
}

export interface GroupFacts {
  /** Pods per group, leader included. */
  size: number;
  leader?: PodFacts;
  workerSet?: WorkerSetFacts;
  /** Worker pods of this group index (any incarnation: only those of `workerSet` count). */
  workers: PodFacts[];
}

export function groupPhase(g: GroupFacts): Phase {
  const { leader, workerSet } = g;
  if (!leader) return workerSet ? 'Rebuilding' : 'Missing';
  if (leader.deleting) return 'Terminating';
  // The replacement leader waits while the old group's StatefulSet (same name) still exists or is going.
  if (workerSet && (workerSet.deleting || workerSet.ownerUid !== leader.uid)) return 'Rebuilding';
  if (g.size > 1 && !workerSet) return 'Provisioning';
  return leader.ready && readyWorkers(g) >= g.size - 1 ? 'Ready' : 'Provisioning';
}

const serving = (p: PodFacts) => p.ready && !p.deleting;

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
}

export function groupRow(groupIndex: number, g: GroupFacts, currentRevision: string): GroupRow {
  return {
    group: groupIndex,
    leaderPod: g.leader?.name,
    phase: groupPhase(g),
    readyPods: readyPods(g),
    size: g.size,
    workerStatefulSet: g.workerSet?.name,
    revisionUpToDate: g.leader ? g.leader.revision === currentRevision : undefined,
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
  workerSets: WorkerSetFacts[];
  /** Worker pods of the LWS, named `<lws>-<i>-<j>`. */
  workers: PodFacts[];
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
    if (!leaders.has(i) || leaders.get(i)?.deleting) leaders.set(i, p);
    indices.add(i);
  }
  const sets = new Map<number, WorkerSetFacts>();
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
      ),
    );
}
