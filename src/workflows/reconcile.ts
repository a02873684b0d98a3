// Keeps one generation of an LWS applied: the headless Service and the leader StatefulSet, and the status as groups
// come and go. The trigger signals it on every change of the LWS, its pods and its StatefulSets. It also steers a
// rolling update, step by step as groups become ready (model/rollout.ts, planLeaderRollout).
import { condition, continueAsNew, defineSignal, patched, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import {
  applyDefaults,
  computeStatus,
  groupStates,
  planLeaderRollout,
  rollingUpdateRecorded,
  sameStatus,
  validateLeaderWorkerSet,
  type LeaderRollout,
  type ObjectKey,
  type ObjectIdentity,
} from '../model/index.js';
import { kube, wait } from './activities.js';
import { isNamespaceTerminating } from './failures.js';
import {
  RECONCILE_KEEPS_ONE_LWS,
  RECONCILE_READS_AT_ONCE,
  ROLLING_UPDATE_IN_STATUS,
  ROLLOUT_STEERED_BY_GROUPS,
  ROLLOUT_STEP_AT_GROUP_READY,
} from './patches.js';

export interface ReconcileInput {
  ref: ObjectKey;
  generation: number;
  /** Carried over continue-as-new: this generation's rollout is under way (see LeaderRollout.rolling). */
  rolling?: boolean;
}

export type ReconcileResult = 'deleted' | 'superseded' | 'invalid';

/** What the trigger says of a change, beyond that there was one. */
export interface Change {
  /**
   * A group of this LWS became Ready while the status says a rolling update is under way: the rollout's next step
   * waits for it, so the pass that takes it comes at once instead of after the batch window.
   */
  groupReady?: boolean;
}

/** Something about this LWS changed; look again. Signals coalesce: many changes, one pass. */
export const changedSignal = defineSignal<[Change?]>('changed');

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

async function reconcile({
  ref,
  generation,
  rolling: rollingBefore = false,
}: ReconcileInput): Promise<ReconcileResult> {
  let dirty = true;
  let groupReady = false;
  setHandler(changedSignal, (change?: Change) => {
    dirty = true;
    if (change?.groupReady) groupReady = true;
  });
  let applied = false;
  /** The uid of the LWS this run keeps applied (the first it read). */
  let kept: string | undefined;
  /** The rollout step this run last applied to the leader StatefulSet (none yet: the one carried over, if any). */
  let written: LeaderRollout | undefined;
  /**
   * Before this run's first step: carried over continue-as-new, or recorded in the status by the generation before
   * (a spec change while surge groups are kept after the last old group must not drop them at once).
   */
  let carried = rollingBefore;
  const rolling = () => written?.rolling ?? carried;
  for (;;) {
    const signalled = await condition(() => dirty, resyncInterval);
    // A group change is a burst of pod events: gather it into one pass (one list, one status write). While rolling,
    // a group turned Ready ends the gathering: the next step waits for it.
    if (signalled && applied) {
      if (rolling() && patched(ROLLOUT_STEP_AT_GROUP_READY)) await condition(() => groupReady, batchWindow);
      else await sleep(batchWindow);
    }
    groupReady = false;
    dirty = false;
    // A rollout's step waits for this pass: the groups are listed with the LWS, not after it.
    const atOnce = patched(RECONCILE_READS_AT_ONCE) && patched(ROLLOUT_STEERED_BY_GROUPS);
    const [lws, listed] = await Promise.all([kube.getLeaderWorkerSet(ref), atOnce ? kube.listGroups(ref) : undefined]);
    if (lws === null || lws.metadata.deletionTimestamp) return 'deleted';
    const lwsUid = lws.metadata.uid ?? '';
    if (kept !== undefined && lwsUid !== kept && patched(RECONCILE_KEEPS_ONE_LWS)) {
      // Deleted and created again under the same name (`kubectl delete` then `apply`): nothing this run applied
      // holds for the new one. At this generation the trigger's signals come to this workflow ID: a fresh run
      // applies it. At another generation they go to that generation's reconcile.
      if ((lws.metadata.generation ?? 0) === generation) {
        await continueAsNew<typeof reconcileLeaderWorkerSet>({ ref, generation });
      }
      return 'deleted';
    }
    kept = lwsUid;
    if ((lws.metadata.generation ?? 0) > generation) return 'superseded';
    const spec = applyDefaults(lws).spec;
    if (written === undefined) carried ||= rollingUpdateRecorded(lws);

    if (!applied) {
      const errors = validateLeaderWorkerSet(lws);
      if (errors.length > 0) {
        // The API server's schema normally stops these; objects written around it end here, loudly.
        await kube.recordEvent({
          lws: { ...ref, uid: lwsUid },
          type: 'Warning',
          reason: 'InvalidSpec',
          message: errors.map((e) => e.message).join('; '),
        });
        return 'invalid';
      }
    }

    // The StatefulSet cannot roll groups by itself (it sees leaders, not workers, and never adds surge pods): each pass
    // plans the step from the groups, so they are listed before the leader StatefulSet is written.
    const steering = patched(ROLLOUT_STEERED_BY_GROUPS);
    let groups = steering ? (listed ?? (await kube.listGroups(ref))) : undefined;
    const plan =
      groups && planLeaderRollout(spec, groupStates(lws, groups.leaders, groups.workerStatefulSets), rolling());
    const planned = plan && { replicas: plan.replicas, partition: plan.partition };

    if (!applied) {
      await kube.ensureHeadlessService(lws);
      const leaders = await kube.ensureLeaderStatefulSet(lws, planned);
      if (typeof leaders === 'object') {
        // An older incarnation of this LWS still holds the names, going away. A StatefulSet created over its pods
        // would get its own only after a backoff that grows to minutes: wait for them instead, then look again.
        await namesFreed(ref, leaders);
        dirty = true;
        continue;
      }
      if (leaders !== 'unchanged') {
        await kube.recordEvent({
          lws: { ...ref, uid: lwsUid },
          type: 'Normal',
          reason: leaders === 'created' ? 'LeaderStatefulSetCreated' : 'LeaderStatefulSetUpdated',
          message: `leader StatefulSet ${ref.name} ${leaders} for generation ${generation}${plan?.rolling ? `; ${rolloutStep(spec.replicas, plan)}` : ''}`,
        });
      }
      // The policy lives on each leader pod, so a switch applies to the next teardown without rolling any group.
      await kube.annotateLeaderPods({ ref, podTerminationPolicy: spec.podTerminationPolicy });
      applied = true;
    } else if (plan && (plan.replicas !== written?.replicas || plan.partition !== written.partition)) {
      // From the step before: while the StatefulSet is still as written then, one patch moves it on.
      const step = await kube.ensureLeaderStatefulSet(
        lws,
        planned,
        written && { replicas: written.replicas, partition: written.partition },
      );
      if (typeof step === 'object') {
        // The leader StatefulSet was deleted under the rollout: apply it again, as at the start.
        applied = false;
        dirty = true;
        continue;
      }
      await kube.recordEvent({
        lws: { ...ref, uid: lwsUid },
        type: 'Normal',
        reason: 'RollingUpdateStep',
        message: rolloutStep(spec.replicas, plan),
      });
    }
    if (plan) written = plan;

    groups ??= await kube.listGroups(ref);
    // Only while rolling does the status differ from what runs recorded before it: only then the marker.
    const rollingShown = plan?.rolling === true && patched(ROLLING_UPDATE_IN_STATUS);
    const status = computeStatus(
      lws,
      groups.leaders,
      groups.workerStatefulSets,
      new Date().toISOString(),
      rollingShown,
    );
    if (!sameStatus(lws.status, status)) await kube.updateLeaderWorkerSetStatus({ ref, status });

    // Keep the history short for an LWS that lives for months.
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 2000) {
      await continueAsNew<typeof reconcileLeaderWorkerSet>({
        ref,
        generation,
        ...(rolling() ? { rolling: true } : {}),
      });
    }
  }
}

/** Waits until an older incarnation's leader StatefulSet, if named, and its leader pods are gone. */
async function namesFreed(ref: ObjectKey, blocked: { statefulSet?: ObjectIdentity; pods: ObjectIdentity[] }) {
  if (blocked.statefulSet) await wait.waitForStatefulSetGone({ ...blocked.statefulSet, pods: blocked.pods });
  else await wait.waitForPodsGone({ namespace: ref.namespace, pods: blocked.pods });
}

/** A rollout step for people: "rolling update: 4 groups (1 surge), the new template from group 2 up". */
function rolloutStep(replicas: number, plan: LeaderRollout): string {
  const surge = plan.replicas - replicas;
  const from = `the new template from group ${plan.partition} up`;
  if (!plan.rolling) return `rolling update done: ${plan.replicas} groups, ${from}`;
  return `rolling update: ${surge > 0 ? `${plan.replicas} groups (${surge} surge), ` : ''}${from}`;
}
