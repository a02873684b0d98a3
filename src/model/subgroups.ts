// Which subgroup (spec.leaderWorkerTemplate.subGroupPolicy) each pod of a group belongs to, as upstream's pod webhook
// labels it. The subgroup key is hashed in src/admission: workflow code imports this module and has no node:crypto.
import type { SubGroupPolicyType } from './types.js';

/** The subgroup a leader joins when it joins one. */
export const LEADER_SUBGROUP_INDEX = 0;

const LEADER_EXCLUDED: SubGroupPolicyType = 'LeaderExcluded';

/**
 * Subgroup of worker `workerIndex` (1..size-1). When size-1 divides into subgroups but size does not, the leader is
 * the extra pod of subgroup 0 and the workers fill subgroups from 1; otherwise the leader takes worker 0's place.
 */
export function subGroupIndex(size: number, subGroupSize: number, workerIndex: number): number {
  const leaderIsExtra = (size - 1) % subGroupSize === 0 && size % subGroupSize !== 0;
  return Math.trunc((leaderIsExtra ? workerIndex - 1 : workerIndex) / subGroupSize);
}

/** The policy type as the pod annotation carries it: anything but LeaderExcluded (absent too) puts the leader in 0. */
export function leaderInSubGroup(policyType: string | undefined): boolean {
  return policyType !== LEADER_EXCLUDED;
}

/** The text whose sha1 hex is a subgroup's subgroup-key label: `<leaderPodName>/<subGroupIndex>` (as upstream). */
export function subGroupKeyInput(leaderPodName: string, index: number): string {
  return `${leaderPodName}/${index}`;
}
