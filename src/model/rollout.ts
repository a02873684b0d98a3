// Rolling-update numbers: maxUnavailable and maxSurge are an absolute count or a percentage of spec.replicas.
import type { DefaultedLeaderWorkerSetSpec, IntOrString } from './types.js';

/**
 * A percentage from 0% to 100% (leading zeros allowed, as Kubernetes' own percent check allows them). The CRD's CEL
 * rule uses this same pattern; a unit test checks that the two match.
 */
export const PERCENT_PATTERN = '^0*(100|[1-9]?[0-9])%$';
/** A percentage that is zero whatever the number of replicas ("0%", "00%"). */
export const ZERO_PERCENT_PATTERN = '^0+%$';

const percentRe = new RegExp(PERCENT_PATTERN);
const zeroPercentRe = new RegExp(ZERO_PERCENT_PATTERN);

/** The number in a valid percentage string ("25%" -> 25), else undefined. */
export function parsePercent(value: string): number | undefined {
  return percentRe.test(value) ? Number(value.slice(0, -1)) : undefined;
}

/** True for a non-negative integer or a percentage string between 0% and 100%. */
export function isValidIntOrPercent(value: unknown): value is IntOrString {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0;
  if (typeof value === 'string') return percentRe.test(value);
  return false;
}

/** True when the value is zero for any replica count: 0 or "0%". */
export function isZeroIntOrPercent(value: IntOrString): boolean {
  return typeof value === 'number' ? value === 0 : zeroPercentRe.test(value);
}

/**
 * An absolute count from a count or a percentage of `total`: maxUnavailable rounds down, maxSurge rounds up
 * (Kubernetes' GetScaledValueFromIntOrPercent). Throws on a value that validation would have rejected.
 */
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

/** maxUnavailable as a count of groups. */
export function effectiveMaxUnavailable(spec: DefaultedLeaderWorkerSetSpec): number {
  return scaleIntOrPercent(spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable, spec.replicas, false);
}

/**
 * maxUnavailable for the leader StatefulSet's own rolling update: surge groups may be replaced too, and at least 1 so
 * that an update can always make progress (a percentage that rounds to 0, or 0 replicas, would otherwise stall it).
 */
export function leaderStatefulSetMaxUnavailable(spec: DefaultedLeaderWorkerSetSpec): number {
  return Math.max(1, effectiveMaxUnavailable(spec) + effectiveMaxSurge(spec));
}
