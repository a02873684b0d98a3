// How the workflows read an LWS and write what its templates make. The reads return its facts (model/lws-facts.ts) and
// the writes take its target, so no template reaches a history: each write reads the LWS itself and answers `stale`
// when it is no longer the one decided on.
import {
  podTerminationPolicyOf,
  targetOf,
  type LeaderStatefulSetOptions,
  type LeaderStatefulSetStep,
  type LwsFacts,
  type ObjectKey,
} from '../model/index.js';
import type { WorkerStatefulSetInput } from '../activities/types.js';
import { kube } from './activities.js';

export async function readLws(ref: ObjectKey): Promise<LwsFacts | null> {
  return await kube.getLeaderWorkerSet(ref);
}

export function ensureControllerRevision(lws: LwsFacts) {
  return kube.ensureControllerRevisionOf(targetOf(lws));
}

export function ensureHeadlessService(lws: LwsFacts) {
  return kube.ensureHeadlessServiceOf(targetOf(lws));
}

export function ensureLeaderStatefulSet(
  lws: LwsFacts,
  options?: LeaderStatefulSetOptions,
  from?: LeaderStatefulSetStep,
) {
  return kube.ensureLeaderStatefulSetOf(targetOf(lws), options, from);
}

export function ensureWorkerStatefulSet(lws: LwsFacts, input: Omit<WorkerStatefulSetInput<unknown>, 'lws'>) {
  return kube.ensureWorkerStatefulSetOf({ ...input, lws: targetOf(lws), expected: expectedOf(lws) });
}

/** What the leader's patch needs of the LWS, so that the build sends it along with its read of the LWS. */
function expectedOf({ spec }: LwsFacts): WorkerStatefulSetInput<unknown>['expected'] {
  return { podTerminationPolicy: podTerminationPolicyOf(spec), size: spec.leaderWorkerTemplate.size };
}
