// Rolling-update numbers (maxUnavailable, maxSurge: a count or a percentage of replicas) and a rollout's steps.
import type { LeaderStatefulSetFacts } from './objects.js';
import type { GroupState } from './status.js';
import type { DefaultedLeaderWorkerSetSpec, IntOrString } from './types.js';

/** What the rollout's numbers are taken from: a defaulted spec, or an LWS's facts (lws-facts.ts). */
export type RolloutSpec = Pick<DefaultedLeaderWorkerSetSpec, 'replicas' | 'rolloutStrategy'>;

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
export function effectiveMaxSurge(spec: RolloutSpec): number {
  const { replicas } = spec;
  return Math.min(
    scaleIntOrPercent(spec.rolloutStrategy.rollingUpdateConfiguration.maxSurge, replicas, true),
    replicas,
  );
}

export function effectiveMaxUnavailable(spec: RolloutSpec): number {
  return scaleIntOrPercent(spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable, spec.replicas, false);
}

/** Surge groups may be replaced too; at least 1, so an update always progresses (a percentage can round to 0). */
export function leaderStatefulSetMaxUnavailable(spec: RolloutSpec): number {
  return Math.max(1, effectiveMaxUnavailable(spec) + effectiveMaxSurge(spec));
}

/** The leader StatefulSet's size and partition for this pass of the reconcile. */
export interface LeaderRollout {
  /** Leader pods wanted: spec.replicas, plus the surge groups while they are needed. */
  replicas: number;
  /** Ordinals from here up run the current template; the StatefulSet replaces those that do not. */
  partition: number;
  /** Not yet at its end (spec.replicas groups, the user's partition): the next pass may move it on. */
  rolling: boolean;
}

/** What the plan reads of the leader StatefulSet as it stands. */
export type LeaderStatefulSetState = Pick<
  LeaderStatefulSetFacts,
  'replicas' | 'partition' | 'revision' | 'lwsReplicas'
>;

/**
 * Upstream's calculateRollingUpdateReplicas: surge groups stay while the groups not yet Ready on the current
 * template exceed maxUnavailable, one fewer for each that is.
 */
export function rollingUpdateReplicas(spec: RolloutSpec, unready: number): number {
  const surge = effectiveMaxSurge(spec);
  if (unready > surge) return spec.replicas + surge;
  return spec.replicas + Math.max(0, unready - effectiveMaxUnavailable(spec));
}

type Step = Pick<GroupState, 'ready' | 'updated'>;

/**
 * Upstream's rollingUpdatePartition: up to `step` groups below the Ready-and-updated tail are replaced at once,
 * more if groups under them are down anyway; the partition only ever comes down.
 */
function nextPartition(states: Step[], step: number, current: number): number {
  const count = states.length;
  let tail = 0;
  for (let i = count - 1; i >= 0 && states[i]!.ready && states[i]!.updated; i--) tail++;
  const stepPartition = Math.max(0, count - tail - step);
  let partition = stepPartition + states.slice(0, stepPartition).filter((s) => !s.ready).length;
  for (let i = Math.min(partition, count - 1); i >= stepPartition; i--) {
    if (states[i]!.ready && !states[i]!.updated) break;
    partition = i;
  }
  return Math.min(partition, current);
}

/**
 * Upstream's rollingUpdateParameters, level-triggered: from the leader StatefulSet as it stands (its revision, size
 * and partition) and the groups, each judged by its own revision. A new template first moves the partition to the
 * top with the surge groups added; each pass then lowers it as groups become Ready, within maxUnavailable.
 */
export function planLeaderRollout(
  spec: RolloutSpec,
  groups: GroupState[],
  sts: LeaderStatefulSetState | undefined,
  revision: string,
): LeaderRollout {
  const { replicas } = spec;
  const userPartition = spec.rolloutStrategy.rollingUpdateConfiguration.partition;
  const done = (partition: number, wanted: number): LeaderRollout => {
    const p = Math.max(partition, userPartition);
    return { replicas: wanted, partition: p, rolling: wanted !== replicas || p !== userPartition };
  };
  if (sts === undefined) return done(0, replicas);
  // A new template: scale first (upstream does too), with every group kept on the template it has.
  if (sts.revision !== revision) {
    const partition = Math.min(replicas, sts.replicas);
    return done(partition, sts.replicas < replicas ? replicas : rollingUpdateReplicas(spec, replicas));
  }
  if (sts.partition === 0 && sts.replicas === replicas) return done(0, replicas);
  if (sts.replicas < replicas) return done(sts.partition, replicas);

  const byIndex = new Map(groups.filter((g) => !g.terminating).map((g) => [g.groupIndex, g]));
  const states: Step[] = Array.from(
    { length: sts.replicas },
    (_, i) => byIndex.get(i) ?? { ready: false, updated: false },
  );
  // Counted over spec.replicas, as upstream, but from the user's partition up: upstream also counts the groups below
  // it, kept on their template on purpose, so with a partition its surge groups never go.
  const unready = states.slice(userPartition, replicas).filter((s) => !s.ready || !s.updated).length;
  const wanted = rollingUpdateReplicas(spec, unready);
  const surge = effectiveMaxSurge(spec);
  if (sts.lwsReplicas !== undefined && sts.lwsReplicas !== replicas) {
    // spec.replicas changed mid-rollout.
    return done(Math.min(sts.partition, replicas + surge), wanted);
  }
  // Surge groups already reclaimed give their share of maxUnavailable back to the step.
  const step = effectiveMaxUnavailable(spec) + surge - (replicas + surge - sts.replicas);
  return done(nextPartition(states, step, sts.partition), wanted);
}
