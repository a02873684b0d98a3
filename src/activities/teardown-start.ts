// A teardown's first round as one local activity (see src/workflows/teardown-first-round.ts for what it does). As five
// local activities, each result came back to the workflow as a turn of its own on the SDK's single workflow thread;
// in a burst of teardowns those turns queue in front of the next workflows' first turns, and with them their deletes.
import { teardownFirstRound } from '../workflows/teardown-first-round.js';
import type { KubeClients } from './clients.js';
import { deleteSeenWorkers, deleteWorkersIfParallel } from './deletes.js';
import { getLeaderWorkerSet, getPod, getStatefulSet, listGroupPods } from './reads.js';
import type { BeginTeardownInput, TeardownStart } from './types.js';

export function beginTeardown(c: KubeClients, input: BeginTeardownInput): Promise<TeardownStart> {
  return teardownFirstRound(
    {
      deleteSeenWorkers: (workers) => deleteSeenWorkers(c, workers),
      deleteWorkersIfParallel: (group) => deleteWorkersIfParallel(c, group),
      getLeaderWorkerSet: (ref) => getLeaderWorkerSet(c, ref),
      getPod: (key) => getPod(c, key),
      getStatefulSet: (key) => getStatefulSet(c, key),
      listGroupPods: (group) => listGroupPods(c, group),
    },
    input,
    true,
  );
}
