// A teardown's first round as one local activity: the workers' delete and the reads it judges on, at once. Each local
// activity's result is a turn of the workflow thread, and in a burst those turns queue: the workers' delete went out
// 1.3 s sooner (p50) than with five local activities.
import { leaderStatefulSetName, wantsGroup, workerStatefulSetName } from '../model/index.js';
import { allSettledOrThrow } from '../shared/all-settled.js';
import type { AllActivities, BeginTeardownInput, TeardownStart } from './types.js';

export type FirstRoundCalls = Pick<
  AllActivities,
  'deleteSeenWorkers' | 'getLeaderWorkerSet' | 'getPod' | 'getStatefulSet' | 'listGroupPods'
>;

export async function beginTeardown(calls: FirstRoundCalls, input: BeginTeardownInput): Promise<TeardownStart> {
  const { ref, groupIndex, leader } = input;
  // Every call ends before a failure is thrown: a retry never overlaps a delete still under way.
  const [deleted, { lws, leaderStatefulSet }, leaderPod, workerStatefulSet, groupPods] = await allSettledOrThrow([
    input.deleteWorkers ? calls.deleteSeenWorkers(input.deleteWorkers) : undefined,
    calls.getLeaderWorkerSet(ref).then(async (lws) => ({
      lws,
      // Only for a group the replicas do not cover, after the LWS: a surge group the rollout keeps is rebuilt.
      leaderStatefulSet:
        lws && !lws.metadata.deletionTimestamp && !wantsGroup(lws, groupIndex)
          ? await calls.getStatefulSet({ namespace: ref.namespace, name: leaderStatefulSetName(ref.name) })
          : undefined,
    })),
    calls.getPod(leader),
    calls.getStatefulSet({ namespace: ref.namespace, name: workerStatefulSetName(ref.name, groupIndex) }),
    calls.listGroupPods({ namespace: ref.namespace, lwsName: ref.name, groupIndex }),
  ]);
  return {
    ...(deleted !== undefined && { deleted }),
    lws,
    leaderPod,
    workerStatefulSet,
    groupPods,
    ...(leaderStatefulSet !== undefined && { leaderStatefulSet }),
  };
}
