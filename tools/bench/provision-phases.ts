// Where a provisioning from nothing spends its time, from the pods' own arrival times in the bench's watch: the
// leaders (the LWS's controller and the StatefulSet controller), the workers after their leader (the group's own
// provisioning, the part a controller decides), and Ready after the group's last pod (the kubelet, KWOK here).
import { percentile } from './results.js';

/** One pod as the bench's watch saw it. */
export interface SeenPod {
  groupIndex: number;
  leader: boolean;
  seenAt: number;
  readyAt?: number;
}

/** Each phase as p50 / max over the groups, in ms. */
export interface ProvisionPhases {
  /** The LWS created -> each group's leader pod seen. */
  leaderSeenMs: Spread;
  /** A group's leader seen -> its first worker pod seen. */
  workersAfterLeaderMs: Spread;
  /** A group's last pod seen -> its last pod Ready. */
  readyAfterLastPodMs: Spread;
}

export interface Spread {
  p50: number;
  max: number;
}

/** The phases of the groups whose pods were all seen Ready (none: undefined); size 1 has a 0 worker phase. */
export function provisionPhases(pods: SeenPod[], createdAt: number): ProvisionPhases | undefined {
  const groups = new Map<number, SeenPod[]>();
  for (const p of pods) groups.set(p.groupIndex, [...(groups.get(p.groupIndex) ?? []), p]);
  const leaderSeen: number[] = [];
  const workersAfter: number[] = [];
  const readyAfter: number[] = [];
  for (const group of groups.values()) {
    const leader = group.find((p) => p.leader);
    const workers = group.filter((p) => !p.leader);
    if (!leader || group.some((p) => p.readyAt === undefined)) continue;
    leaderSeen.push(leader.seenAt - createdAt);
    if (workers.length > 0) workersAfter.push(Math.min(...workers.map((w) => w.seenAt)) - leader.seenAt);
    readyAfter.push(Math.max(...group.map((p) => p.readyAt ?? 0)) - Math.max(...group.map((p) => p.seenAt)));
  }
  if (leaderSeen.length === 0) return undefined;
  const spread = (values: number[]): Spread =>
    values.length ? { p50: percentile(values, 50), max: Math.max(...values) } : { p50: 0, max: 0 };
  return {
    leaderSeenMs: spread(leaderSeen),
    workersAfterLeaderMs: spread(workersAfter),
    readyAfterLastPodMs: spread(readyAfter),
  };
}

/** `leaders 0.31 s (max 0.52 s), workers +0.40 s (max 0.61 s), Ready +0.10 s (max 0.12 s)`: p50 and max. */
export function formatPhases(phases: ProvisionPhases): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const one = (label: string, { p50, max }: Spread) => `${label}${s(p50)} (max ${s(max)})`;
  return [
    one('leaders ', phases.leaderSeenMs),
    one('workers +', phases.workersAfterLeaderMs),
    one('Ready +', phases.readyAfterLastPodMs),
  ].join(', ');
}
