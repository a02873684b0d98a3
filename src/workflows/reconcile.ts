// Keeps one generation of an LWS applied: the headless Service and the leader StatefulSet, and the status as groups
// come and go. The trigger signals it on every change of the LWS, its pods and its StatefulSets.
import { condition, continueAsNew, defineSignal, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import { applyDefaults, computeStatus, sameStatus, validateLeaderWorkerSet, type LwsRef } from '../model/index.js';
import { kube } from './activities.js';
import { isNamespaceTerminating } from './failures.js';

export interface ReconcileInput {
  ref: LwsRef;
  generation: number;
}

export type ReconcileResult = 'deleted' | 'superseded' | 'invalid';

/** Something about this LWS changed; look again. Signals coalesce: many changes, one pass. */
export const changedSignal = defineSignal('changed');

/** A quiet LWS is still looked at this often, in case an event was missed. */
const resyncInterval = '5 minutes';
/** How long changes are gathered before a pass; status lags by at most this much. */
const batchWindow = '1 second';

export async function reconcileLeaderWorkerSet(input: ReconcileInput): Promise<ReconcileResult> {
  try {
    return await reconcile(input);
  } catch (err) {
    // Deleting a namespace deletes its LWS: nothing is left to keep applied.
    if (isNamespaceTerminating(err)) return 'deleted';
    throw err;
  }
}

async function reconcile({ ref, generation }: ReconcileInput): Promise<ReconcileResult> {
  let dirty = true;
  setHandler(changedSignal, () => {
    dirty = true;
  });
  let applied = false;
  for (;;) {
    const signalled = await condition(() => dirty, resyncInterval);
    // A group change is a burst of pod events: gather it into one pass (one list, one status write).
    if (signalled && applied) await sleep(batchWindow);
    dirty = false;
    const lws = await kube.getLeaderWorkerSet(ref);
    if (lws === null || lws.metadata.deletionTimestamp) return 'deleted';
    if ((lws.metadata.generation ?? 0) > generation) return 'superseded';

    if (!applied) {
      const errors = validateLeaderWorkerSet(lws);
      if (errors.length > 0) {
        // The API server's schema normally stops these; objects written around it end here, loudly.
        await kube.recordEvent({
          lws: { ...ref, uid: lws.metadata.uid ?? '' },
          type: 'Warning',
          reason: 'InvalidSpec',
          message: errors.map((e) => e.message).join('; '),
        });
        return 'invalid';
      }
      await kube.ensureHeadlessService(lws);
      const leaders = await kube.ensureLeaderStatefulSet(lws);
      if (leaders !== 'unchanged') {
        await kube.recordEvent({
          lws: { ...ref, uid: lws.metadata.uid ?? '' },
          type: 'Normal',
          reason: leaders === 'created' ? 'LeaderStatefulSetCreated' : 'LeaderStatefulSetUpdated',
          message: `leader StatefulSet ${ref.name} ${leaders} for generation ${generation}`,
        });
      }
      // The policy lives on each leader pod, so a switch applies to the next teardown without rolling any group.
      const d = applyDefaults(lws);
      await kube.annotateLeaderPods({ ref, podTerminationPolicy: d.spec.podTerminationPolicy });
      applied = true;
    }

    const { leaders, workerStatefulSets } = await kube.listGroups(ref);
    const status = computeStatus(lws, leaders, workerStatefulSets, new Date().toISOString());
    if (!sameStatus(lws.status, status)) await kube.updateLeaderWorkerSetStatus({ ref, status });

    // Keep the history short for an LWS that lives for months.
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 2000) {
      await continueAsNew<typeof reconcileLeaderWorkerSet>({ ref, generation });
    }
  }
}
