// A teardown's first round as one local activity. Under Parallel the workers' delete goes out at once, and together
// with it the reads the workflow decides on. As five local activities, each result came back to the workflow as a
// turn of its own on the SDK's single workflow thread; in a burst of teardowns those turns queue in front of the next
// workflows' first turns, and with them those workflows' deletes.
import { workerStatefulSetName } from '../model/index.js';
import { allSettledOrThrow } from '../workflows/calls.js';
import type { KubeClients } from './clients.js';
import { deleteSeenWorkers, deleteWorkersIfParallel } from './deletes.js';
import { getLeaderWorkerSet, getPod, getStatefulSet, listGroupPods } from './reads.js';
import type { BeginTeardownInput, TeardownStart } from './types.js';

export async function beginTeardown(c: KubeClients, input: BeginTeardownInput): Promise<TeardownStart> {
  const { ref, groupIndex, leader } = input;
  const parallelDelete =
    input.policy !== 'Parallel'
      ? undefined
      : input.workers
        ? deleteSeenWorkers(c, input.workers)
        : deleteWorkersIfParallel(c, { ref, groupIndex, leader });
  // Every call ends before a failure is thrown: a retry then never overlaps a delete still under way.
  const [deleted, lws, leaderPod, workerStatefulSet, groupPods] = await allSettledOrThrow([
    parallelDelete,
    getLeaderWorkerSet(c, ref),
    getPod(c, leader),
    getStatefulSet(c, { namespace: ref.namespace, name: workerStatefulSetName(ref.name, groupIndex) }),
    listGroupPods(c, { namespace: ref.namespace, lwsName: ref.name, groupIndex }),
  ]);
  return { ...(deleted === undefined ? {} : { deleted }), lws, leaderPod, workerStatefulSet, groupPods };
}
