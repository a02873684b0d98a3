// The reconcile loop of runs that started before patch upstream-semantics (issue 26): its own rollout plan and
// status (model/legacy-reconcile-v1.ts), no ControllerRevisions. Such a run keeps this loop to its end, so that its
// replay sees the same commands; it continues as new on the current loop. Delete with the patch (README, Versioning).
import { continueAsNew, workflowInfo } from '@temporalio/workflow';
import {
  applyDefaults,
  computeStatusV1,
  EVENT_REASONS,
  groupStatesV1,
  nameConflictMessage,
  planLeaderRolloutV1,
  rollingUpdateRecordedV1,
  sameStatus,
  validateLeaderWorkerSet,
  type LeaderRolloutV1 as LeaderRollout,
  type LeaderWorkerSet,
  type ObjectKey,
} from '../model/index.js';
import { kube } from './activities.js';
import { namesFreed } from './names-freed.js';
import {
  Changes,
  describeStep,
  eventOf,
  stepOf,
  takeRolloutStep,
  whoseLws,
  type Groups,
  type ReconcileInput,
  type ReconcileResult,
} from './reconcile-parts.js';
import type { reconcileLeaderWorkerSet } from './reconcile.js';

/** What this run has done so far. */
interface Run {
  /** The uid of the LWS this run keeps applied: the first it read. */
  uid?: string;
  applied: boolean;
  /** The rollout step last written to the leader StatefulSet. */
  step?: LeaderRollout;
  /** Before the first step: a rollout carried over continue-as-new, or recorded in the status by the generation before. */
  carried: boolean;
}

export async function reconcileV1({ ref, generation, rolling = false }: ReconcileInput): Promise<ReconcileResult> {
  const changes = new Changes();
  const run: Run = { applied: false, carried: rolling };
  for (;;) {
    await changes.gathered(run.applied, isRolling(run));
    const [lws, groups] = await Promise.all([kube.getLeaderWorkerSet(ref), kube.listGroups(ref)]);
    const live = whoseLws(lws, generation, run.uid);
    if (live === 'created-again') return continueAsNew<typeof reconcileLeaderWorkerSet>({ ref, generation });
    if (typeof live === 'string') return live;
    run.uid = live.metadata.uid ?? '';
    if (run.step === undefined) run.carried ||= rollingUpdateRecordedV1(live);

    const groupsNow = groupStatesV1(live, groups.leaders, groups.workerStatefulSets);
    const plan = planLeaderRolloutV1(applyDefaults(live).spec, groupsNow, isRolling(run));
    const outcome = run.applied
      ? await takeRolloutStep(ref, live, plan, run.step)
      : await applyGeneration(ref, live, generation, plan);
    if (outcome === 'invalid') return 'invalid';
    if (outcome === 'names held' || outcome === 'leaders lost') {
      run.applied = false;
      changes.again();
      continue;
    }
    if (typeof outcome === 'object') {
      // Another LWS's StatefulSet has the name: told on the status until it is gone (looked at again at each resync).
      await writeStatus(ref, live, groups, plan, outcome.nameConflict);
      continue;
    }
    run.applied = true;
    run.step = plan;
    await writeStatus(ref, live, groups, plan);

    // Keep the history short for an LWS that lives for months.
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 2000) {
      await continueAsNew<typeof reconcileLeaderWorkerSet>({
        ref,
        generation,
        ...(isRolling(run) && { rolling: true }),
      });
    }
  }
}

/** The generation's objects: the headless Service, the leader StatefulSet, the policy on each leader pod. */
async function applyGeneration(
  ref: ObjectKey,
  lws: LeaderWorkerSet,
  generation: number,
  plan: LeaderRollout,
): Promise<'applied' | 'invalid' | 'names held' | { nameConflict: string }> {
  const errors = validateLeaderWorkerSet(lws);
  if (errors.length > 0) {
    // The API server's schema normally stops these; objects written around it end here, loudly.
    await kube.recordEvent(
      eventOf(ref, lws, EVENT_REASONS.invalidSpec, errors.map((e) => e.message).join('; '), 'Warning'),
    );
    return 'invalid';
  }
  const { spec } = applyDefaults(lws);
  await kube.ensureHeadlessService(lws);
  const leaders = await kube.ensureLeaderStatefulSet(lws, stepOf(plan));
  if (typeof leaders === 'object' && leaders.outcome === 'name-taken') {
    const nameConflict = nameConflictMessage(`${ref.namespace}/${ref.name}`, leaders.holder);
    await kube.recordEvent(eventOf(ref, lws, EVENT_REASONS.nameConflict, nameConflict, 'Warning'));
    return { nameConflict };
  }
  if (typeof leaders === 'object') {
    // An older incarnation of this LWS still holds the names. A StatefulSet created over its pods would get its own
    // only after a backoff that grows to minutes: wait for them instead.
    await namesFreed(leaders);
    return 'names held';
  }
  if (leaders !== 'unchanged') {
    const reason =
      leaders === 'created' ? EVENT_REASONS.leaderStatefulSetCreated : EVENT_REASONS.leaderStatefulSetUpdated;
    const step = plan.rolling ? `; ${describeStep(spec.replicas, plan)}` : '';
    await kube.recordEvent(
      eventOf(ref, lws, reason, `leader StatefulSet ${ref.name} ${leaders} for generation ${generation}${step}`),
    );
  }
  // The policy lives on each leader pod, so a switch applies to the next teardown without rolling any group.
  await kube.annotateLeaderPods({ ref, podTerminationPolicy: spec.podTerminationPolicy });
  return 'applied';
}

async function writeStatus(
  ref: ObjectKey,
  lws: LeaderWorkerSet,
  groups: Groups,
  plan: LeaderRollout,
  nameConflict?: string,
): Promise<void> {
  const now = new Date().toISOString();
  const status = computeStatusV1(lws, groups.leaders, groups.workerStatefulSets, now, plan.rolling, nameConflict);
  if (!sameStatus(lws.status, status)) await kube.updateLeaderWorkerSetStatus({ ref, status });
}

const isRolling = (run: Run) => run.step?.rolling ?? run.carried;
