// What must hold after every trial of a fault campaign, whatever was killed and when: the end state the lifecycle
// asks for, each torn-down group torn down in its policy's order, and every group rebuilt exactly as often as the
// lifecycle requires. Pure: the campaign feeds it what a watch on the API server recorded.
import type { PodTerminationPolicy } from '../../src/model/index.js';
import type { ChaosLifecycle } from './plan.js';

/** A pod of the trial's LWS as the watch saw it over the trial. */
export interface PodHistory {
  name: string;
  uid: string;
  groupIndex: number;
  leader: boolean;
  seenAt: number;
  terminatingAt?: number;
  goneAt?: number;
  /** Its controller's uid (a worker's StatefulSet) and the field manager that created it: who made an extra pod. */
  ownerUid?: string;
  createdBy?: string;
}

export interface LivePod {
  name: string;
  uid: string;
  groupIndex: number;
  leader: boolean;
  ready: boolean;
  terminating: boolean;
  image: string;
}

export interface LiveStatefulSet {
  name: string;
  /** The worker StatefulSet's group; undefined for the leader StatefulSet. */
  groupIndex?: number;
  ownerUid?: string;
}

export interface TrialShape {
  lifecycle: ChaosLifecycle;
  policy: PodTerminationPolicy;
  lwsName: string;
  replicas: number;
  size: number;
  /** The group a rebuild breaks. */
  groupIndex: number;
  /** The image every pod runs after a rolling update. */
  newImage: string;
  /** Leader uid of each group before the lifecycle. */
  leadersBefore: ReadonlyMap<number, string>;
  podsBefore: ReadonlySet<string>;
}

export interface LiveState {
  lwsExists: boolean;
  pods: LivePod[];
  statefulSets: LiveStatefulSet[];
}

/** The groups a lifecycle tears down. */
export function tornDownGroups(shape: TrialShape): number[] {
  const all = [...Array(shape.replicas).keys()];
  switch (shape.lifecycle) {
    case 'rebuild':
      return [shape.groupIndex];
    case 'scale-down':
      return [shape.replicas - 1];
    case 'rolling-update':
    case 'lws-deletion':
      return all;
  }
}

function replicasAfter(shape: TrialShape): number {
  if (shape.lifecycle === 'lws-deletion') return 0;
  return shape.lifecycle === 'scale-down' ? shape.replicas - 1 : shape.replicas;
}

/** What still differs from the end state the lifecycle asks for (empty: settled). */
export function unsettled(shape: TrialShape, live: LiveState): string[] {
  const out: string[] = [];
  const replicas = replicasAfter(shape);
  if (shape.lifecycle === 'lws-deletion' && live.lwsExists) out.push('the LWS still exists');
  const ready = live.pods.filter((p) => p.ready && !p.terminating);
  if (live.pods.length !== replicas * shape.size || ready.length !== live.pods.length) {
    out.push(`${ready.length} Ready of ${live.pods.length} pods, want ${replicas * shape.size} Ready and no other`);
  }
  const beyond = live.pods.filter((p) => p.groupIndex >= replicas);
  if (beyond.length) out.push(`pods of removed groups: ${beyond.map((p) => p.name).join(', ')}`);
  const replaced = new Set(shape.lifecycle === 'rolling-update' ? tornDownGroups(shape) : []);
  if (shape.lifecycle === 'rebuild') replaced.add(shape.groupIndex);
  for (let g = 0; g < replicas; g++) {
    const leader = live.pods.find((p) => p.leader && p.groupIndex === g);
    if (!leader) continue;
    const before = shape.leadersBefore.get(g);
    if (replaced.has(g) && leader.uid === before) out.push(`group ${g} not replaced yet`);
    if (!replaced.has(g) && leader.uid !== before) out.push(`group ${g} was replaced, and no lifecycle asked for it`);
  }
  if (shape.lifecycle === 'rolling-update') {
    const old = live.pods.filter((p) => p.image !== shape.newImage);
    if (old.length) out.push(`on the old template: ${old.map((p) => p.name).join(', ')}`);
  }
  const leaderUid = new Map(live.pods.filter((p) => p.leader).map((p) => [p.groupIndex, p.uid]));
  const want = new Set<string>();
  if (replicas > 0) want.add(shape.lwsName);
  if (shape.size > 1) for (let g = 0; g < replicas; g++) want.add(`${shape.lwsName}-${g}`);
  const have = new Set(live.statefulSets.map((s) => s.name));
  for (const name of want) if (!have.has(name)) out.push(`StatefulSet ${name} missing`);
  for (const s of live.statefulSets) {
    if (!want.has(s.name)) out.push(`StatefulSet ${s.name} left over`);
    else if (s.groupIndex !== undefined && s.ownerUid !== leaderUid.get(s.groupIndex)) {
      out.push(`StatefulSet ${s.name} not owned by its group's current leader`);
    }
  }
  return out;
}

export interface FaultWindow {
  /** When the kill struck, and when the killed process served again. */
  at: number;
  recoveredAt: number;
}

export interface TrialVerdict {
  violations: string[];
  /** Parallel: the longest leader-terminating -> worker-terminating delay of a torn-down group. */
  parallelLagMs?: number;
  /** Parallel: torn-down groups whose workers all started terminating before their leader was gone. */
  parallelKept?: { kept: number; of: number };
  /**
   * Parallel, when the fault struck before the workers were due: the longest time from the later of the leader's
   * deletion and the killed process serving again to a worker terminating. What the crash cost beyond the restart.
   */
  afterRecoveryMs?: number;
}

/**
 * Teardown order and rebuild counts over the trial's pod histories. Parallel workers must start terminating within
 * `boundMs` of their leader, or of the killed process serving again when the fault struck before then.
 */
export function checkTrial(shape: TrialShape, pods: PodHistory[], fault: FaultWindow, boundMs: number): TrialVerdict {
  const violations: string[] = [];
  let parallelLagMs: number | undefined;
  const kept = { kept: 0, of: 0 };
  let afterRecoveryMs: number | undefined;
  for (const g of tornDownGroups(shape)) {
    const oldLeader = pods.find((p) => p.uid === shape.leadersBefore.get(g));
    const oldWorkers = pods.filter((p) => p.groupIndex === g && !p.leader && shape.podsBefore.has(p.uid));
    if (!oldLeader?.terminatingAt || oldLeader.goneAt === undefined) {
      violations.push(`group ${g}: its old leader was not seen terminating and gone`);
      continue;
    }
    if (shape.policy === 'Parallel') {
      kept.of++;
      if (oldWorkers.every((w) => w.terminatingAt !== undefined && w.terminatingAt < oldLeader.goneAt!)) kept.kept++;
    }
    for (const w of oldWorkers) {
      if (w.terminatingAt === undefined) {
        violations.push(`${w.name}: not seen terminating`);
        continue;
      }
      if (shape.policy === 'Sequential' && w.terminatingAt < oldLeader.goneAt) {
        violations.push(`${w.name}: terminating ${oldLeader.goneAt - w.terminatingAt} ms before its leader was gone`);
      }
      if (shape.policy === 'Parallel') {
        const lag = w.terminatingAt - oldLeader.terminatingAt;
        parallelLagMs = Math.max(parallelLagMs ?? 0, lag);
        const struckFirst = fault.at <= oldLeader.terminatingAt + boundMs;
        const clock = struckFirst ? Math.max(oldLeader.terminatingAt, fault.recoveredAt) : oldLeader.terminatingAt;
        if (struckFirst) afterRecoveryMs = Math.max(afterRecoveryMs ?? 0, Math.max(0, w.terminatingAt - clock));
        if (w.terminatingAt > clock + boundMs) {
          violations.push(
            `${w.name}: terminating ${w.terminatingAt - clock} ms after the bound's start, over ${boundMs}`,
          );
        }
      }
    }
  }
  // Rebuilt exactly as often as the lifecycle asks: one new leader (and one new set of workers) per replaced group.
  const replaced = new Set(shape.lifecycle === 'rolling-update' ? tornDownGroups(shape) : []);
  if (shape.lifecycle === 'rebuild') replaced.add(shape.groupIndex);
  for (let g = 0; g < shape.replicas; g++) {
    const leaders = pods.filter((p) => p.leader && p.groupIndex === g).length;
    const workers = pods.filter((p) => !p.leader && p.groupIndex === g).length;
    const incarnations = replaced.has(g) ? 2 : 1;
    if (leaders !== incarnations || workers !== incarnations * (shape.size - 1)) {
      violations.push(
        `group ${g}: ${leaders} leaders and ${workers} workers seen, want ${incarnations} and ${incarnations * (shape.size - 1)}` +
          workerOrigins(pods, g, shape.podsBefore),
      );
    }
  }
  if (parallelLagMs === undefined) return { violations };
  return {
    violations,
    parallelLagMs,
    parallelKept: kept,
    ...(afterRecoveryMs === undefined ? {} : { afterRecoveryMs }),
  };
}

/**
 * Where a group's workers came from, by owning StatefulSet: the one torn down (`old`) or a later one, who created
 * them and when they were first seen against the old workers' end. Tells the StatefulSet controller re-making pods
 * of a deleted StatefulSet from a stale cache apart from a StatefulSet made again.
 */
function workerOrigins(pods: PodHistory[], g: number, podsBefore: ReadonlySet<string>): string {
  const workers = pods.filter((p) => !p.leader && p.groupIndex === g);
  const oldOwners = new Set(workers.filter((w) => podsBefore.has(w.uid)).map((w) => w.ownerUid));
  const oldGone = Math.max(...workers.filter((w) => podsBefore.has(w.uid)).map((w) => w.goneAt ?? -Infinity));
  const byOwner = new Map<string, PodHistory[]>();
  for (const w of workers) {
    const key = w.ownerUid ?? 'no owner';
    byOwner.set(key, [...(byOwner.get(key) ?? []), w]);
  }
  if (byOwner.size === 0 || (byOwner.size === 1 && byOwner.has('no owner'))) return '';
  const parts = [...byOwner].map(([owner, ws]) => {
    const fresh = ws.filter((w) => !podsBefore.has(w.uid));
    const first = Math.min(...fresh.map((w) => w.seenAt));
    const makers = [...new Set(fresh.map((w) => w.createdBy ?? '?'))].join(', ');
    const when =
      fresh.length && Number.isFinite(oldGone)
        ? `, new ones first seen ${first - oldGone} ms after the old were gone`
        : '';
    const made = fresh.length ? `, ${fresh.length} made by ${makers}${when}` : '';
    return `${ws.length} of StatefulSet ${owner.slice(0, 8)}${oldOwners.has(owner) ? ' (the old one)' : ''}${made}`;
  });
  return ` (${parts.join('; ')})`;
}
