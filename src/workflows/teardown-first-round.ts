// A teardown's first round: under Parallel (as the trigger saw it) the workers' delete, and with it the reads the
// workflow decides on. One definition for both ways it runs: inside the beginTeardown activity, and as separate local
// activities in runs started before that activity existed (and in the fake cluster of the workflow tests).
import type { AllActivities, BeginTeardownInput, TeardownStart } from '../activities/types.js';
import { applyDefaults, leaderStatefulSetName, workerStatefulSetName, type LeaderWorkerSet } from '../model/index.js';
import { allSettledOrThrow } from './calls.js';

export type FirstRoundCalls = Pick<
  AllActivities,
  'deleteSeenWorkers' | 'deleteWorkersIfParallel' | 'getLeaderWorkerSet' | 'getPod' | 'getStatefulSet' | 'listGroupPods'
>;

/** A group at or above the replicas of an LWS that still exists: scaled down, or a surge group. */
function aboveReplicas(lws: LeaderWorkerSet | null, groupIndex: number): boolean {
  return lws !== null && !lws.metadata.deletionTimestamp && groupIndex >= applyDefaults(lws).spec.replicas;
}

/**
 * `readLeaderStatefulSet`: read the leader StatefulSet too when the group is above the LWS's replicas (after the LWS,
 * so only then). Off for the separate local activities of older runs, whose histories have no such call.
 */
export async function teardownFirstRound(
  calls: FirstRoundCalls,
  input: BeginTeardownInput,
  readLeaderStatefulSet: boolean,
): Promise<TeardownStart> {
  const { ref, groupIndex, leader } = input;
  const parallelDelete =
    input.policy !== 'Parallel'
      ? undefined
      : input.workers
        ? calls.deleteSeenWorkers(input.workers)
        : calls.deleteWorkersIfParallel({ ref, groupIndex, leader });
  // Every call ends before a failure is thrown: a retry then never overlaps a delete still under way.
  const [deleted, { lws, leaderStatefulSet }, leaderPod, workerStatefulSet, groupPods] = await allSettledOrThrow([
    parallelDelete,
    calls.getLeaderWorkerSet(ref).then(async (lws) => ({
      lws,
      leaderStatefulSet:
        readLeaderStatefulSet && aboveReplicas(lws, groupIndex)
          ? await calls.getStatefulSet({ namespace: ref.namespace, name: leaderStatefulSetName(ref.name) })
          : undefined,
    })),
    calls.getPod(leader),
    calls.getStatefulSet({ namespace: ref.namespace, name: workerStatefulSetName(ref.name, groupIndex) }),
    calls.listGroupPods({ namespace: ref.namespace, lwsName: ref.name, groupIndex }),
  ]);
  return {
    ...(deleted === undefined ? {} : { deleted }),
    lws,
    leaderPod,
    workerStatefulSet,
    groupPods,
    ...(leaderStatefulSet === undefined ? {} : { leaderStatefulSet }),
  };
}
