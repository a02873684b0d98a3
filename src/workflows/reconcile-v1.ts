// The reconcile loop of runs that started before patch upstream-semantics (issue 26): its own rollout plan and status
// (model/legacy-reconcile-v1.ts), no ControllerRevisions. Such a run keeps this loop to its end, so that its replay
// sees the same commands; it continues as new on the current loop. Delete with the patch (docs/operations.md, "For
// developers: changing workflow code").
import { continueAsNew, workflowInfo } from '@temporalio/workflow';
import {
  applyDefaults,
  computeStatusV1,
  groupStatesV1,
  planLeaderRolloutV1,
  rollingUpdateRecordedV1,
  sameStatus,
  type LeaderRolloutV1 as LeaderRollout,
  type LeaderWorkerSet,
  type ObjectKey,
} from '../model/index.js';
import { kube } from './activities.js';
import { readLws, type LwsRead } from './lws-io.js';
import {
  applyLeaderObjects,
  Changes,
  refusedAsInvalid,
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
    const [read, groups] = await Promise.all([readLws(ref), kube.listGroups(ref)]);
    // Read as facts, not as the whole object its history recorded: the run is on a build since issue 28 (lws-io.ts),
    // and the current loop takes over, deciding on facts.
    if (read !== null && read.object === undefined) {
      return continueAsNew<typeof reconcileLeaderWorkerSet>({ ref, generation });
    }
    const live = whoseLws(read?.object ?? null, generation, run.uid);
    if (live === 'created-again') return continueAsNew<typeof reconcileLeaderWorkerSet>({ ref, generation });
    if (typeof live === 'string') return live;
    run.uid = live.metadata.uid ?? '';
    if (run.step === undefined) run.carried ||= rollingUpdateRecordedV1(live);

    const groupsNow = groupStatesV1(live, groups.leaders, groups.workerStatefulSets);
    const plan = planLeaderRolloutV1(applyDefaults(live).spec, groupsNow, isRolling(run));
    // Its writes take the whole object, as this loop's histories recorded them.
    const outcome = run.applied
      ? await takeRolloutStep(ref, read!, plan, run.step)
      : await applyGeneration(ref, read!, generation, plan);
    if (outcome === 'invalid') return 'invalid';
    if (outcome === 'names held' || outcome === 'leaders lost' || outcome === 'stale') {
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
  lws: LwsRead,
  generation: number,
  plan: LeaderRollout,
): Promise<'applied' | 'invalid' | 'names held' | 'stale' | { nameConflict: string }> {
  if (await refusedAsInvalid(ref, lws)) return 'invalid';
  return applyLeaderObjects(ref, lws, generation, plan);
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
