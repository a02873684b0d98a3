// Rolling-update numbers (maxUnavailable, maxSurge: a count or a percentage of replicas) and a rollout's steps.
import type { GroupState } from './status.js';
import type { DefaultedLeaderWorkerSetSpec, IntOrString } from './types.js';

/** 0% to 100%, leading zeros allowed as Kubernetes allows them; the CRD's CEL rule uses it too (a unit test checks). */
export const PERCENT_PATTERN = '^0*(100|[1-9]?[0-9])%$';

const percentRe = new RegExp(PERCENT_PATTERN);

export function parsePercent(value: string): number | undefined {
  return percentRe.test(value) ? Number(value.slice(0, -1)) : undefined;
}

export function isValidIntOrPercent(value: unknown): value is IntOrString {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0;
  if (typeof value === 'string') return percentRe.test(value);
  return false;
}

/** maxUnavailable rounds down, maxSurge up (Kubernetes' GetScaledValueFromIntOrPercent); throws on an invalid value. */
export function scaleIntOrPercent(value: IntOrString, total: number, roundUp: boolean): number {
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0)
      throw new Error(`invalid count ${value}: must be a non-negative integer`);
    return value;
  }
  const percent = parsePercent(value);
  if (percent === undefined) throw new Error(`invalid percentage ${JSON.stringify(value)}: must be 0% to 100%`);
  const scaled = (percent * total) / 100;
  return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
}

/** maxSurge as a count of groups, never more than spec.replicas (as upstream caps it). */
export function effectiveMaxSurge(spec: DefaultedLeaderWorkerSetSpec): number {
  const { replicas } = spec;
  return Math.min(
    scaleIntOrPercent(spec.rolloutStrategy.rollingUpdateConfiguration.maxSurge, replicas, true),
    replicas,
  );
}

export function effectiveMaxUnavailable(spec: DefaultedLeaderWorkerSetSpec): number {
  return scaleIntOrPercent(spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable, spec.replicas, false);
}

/** Surge groups may be replaced too; at least 1, so an update always progresses (a percentage can round to 0). */
export function leaderStatefulSetMaxUnavailable(spec: DefaultedLeaderWorkerSetSpec): number {
  return Math.max(1, effectiveMaxUnavailable(spec) + effectiveMaxSurge(spec));
}

/** The leader StatefulSet's size and partition while the controller steers a rolling update. */
export interface LeaderRollout {
  /** Leader pods wanted: spec.replicas, plus the surge groups while they are needed. */
  replicas: number;
  /** Ordinals from here up run the current template; the StatefulSet replaces those that do not. */
  partition: number;
  /** A rollout is under way: the next plan may keep surge groups while the last groups become ready. */
  rolling: boolean;
}

/**
 * Level-triggered. A group is Ready when its leader and every worker are: a replaced leader is Ready long before its
 * workers. While an old group at or above the user's partition is left, there are `replicas + maxSurge` groups, and
 * the partition comes down over old Ready groups while `replicas - maxUnavailable` stay Ready (surge groups count).
 * Then each surge group goes once the groups in range no longer need it.
 */
export function planLeaderRollout(
  spec: DefaultedLeaderWorkerSetSpec,
  groups: GroupState[],
  rolling: boolean,
): LeaderRollout {
  const { replicas } = spec;
  const userPartition = spec.rolloutStrategy.rollingUpdateConfiguration.partition;
  const minReady = replicas - effectiveMaxUnavailable(spec);
  const surge = effectiveMaxSurge(spec);
  const byIndex = new Map(groups.map((g) => [g.groupIndex, g]));
  const oldLeft = groups.some((g) => g.groupIndex >= userPartition && g.groupIndex < replicas && !g.updated);
  if (oldLeft) {
    // Each old Ready group taken down costs one Ready group; old groups already down, and new ones, cost nothing.
    let spare = groups.filter((g) => g.ready).length - minReady;
    let partition = replicas;
    for (let i = replicas - 1; i >= userPartition; i--) {
      const g = byIndex.get(i);
      const cost = g !== undefined && g.ready && !g.updated ? 1 : 0;
      if (cost > spare) break;
      spare -= cost;
      partition = i;
    }
    return { replicas: replicas + surge, partition, rolling: true };
  }
  const readyInRange = groups.filter((g) => g.groupIndex < replicas && g.ready).length;
  const keep = rolling ? Math.min(surge, Math.max(0, minReady - readyInRange)) : 0;
  return { replicas: replicas + keep, partition: userPartition, rolling: keep > 0 };
}
