// Keeps one generation of an LWS applied: its ControllerRevision, the headless Service and the leader StatefulSet,
// and the status as groups come and go. The trigger signals it on every change of the LWS, its pods and its
// StatefulSets. It also steers a rolling update as upstream does, one step per pass as groups become Ready
// (model/rollout.ts, planLeaderRollout), and prunes the revisions no group uses once it is done. It decides on the
// LWS's facts, and its writes read the templates themselves (lws-io.ts).
import { continueAsNew, patched, workflowInfo } from '@temporalio/workflow';
import {
  computeStatus,
  conditionEvent,
  EVENT_REASONS,
  groupStates,
  LABEL_TEMPLATE_REVISION_HASH,
  planLeaderRollout,
  refusalTold,
  sameStatus,
  statusCounts,
  workersRefusedOf,
  groupsFailedOf,
  type LeaderRollout,
  type LeaderStatefulSetFacts,
  type LwsFacts,
  type ObjectKey,
  type Refusal,
  type StatusCounts,
} from '../model/index.js';
import { isNamespaceTerminating, isNotFound } from '../shared/failures.js';
import { kube } from './activities.js';
import { ensureControllerRevision, readLws, type LwsRead } from './lws-io.js';
import {
  applyLeaderObjects,
  Changes,
  eventOf,
  refusedAsInvalid,
  takeRolloutStep,
  whoseLws,
  type Groups,
  type ReconcileInput,
  type ReconcileResult,
} from './reconcile-parts.js';
import { reconcileV1 } from './reconcile-v1.js';

export { changedSignal, type Change, type ReconcileInput, type ReconcileResult } from './reconcile-parts.js';

/** Upstream's rollout sizing, status and ControllerRevisions (issue 26); runs started before it keep reconcile-v1. */
export const UPSTREAM_SEMANTICS_PATCH = 'upstream-semantics';

/** What this run has done so far. */
interface Run {
  /** The uid of the LWS this run keeps applied: the first it read. */
  uid?: string;
  applied: boolean;
  /** The rollout step last written to the leader StatefulSet. */
  step?: LeaderRollout;
  /** The revisions no group uses were deleted (once per run, when the rollout is done). */
  pruned: boolean;
}

export async function reconcileLeaderWorkerSet(input: ReconcileInput): Promise<ReconcileResult> {
  try {
    return patched(UPSTREAM_SEMANTICS_PATCH) ? await reconcile(input) : await reconcileV1(input);
  } catch (err) {
    // Deleting a namespace deletes its LWS: nothing is left to keep applied.
    if (isNamespaceTerminating(err)) return 'deleted';
    throw err;
  }
}

async function reconcile({ ref, generation }: ReconcileInput): Promise<ReconcileResult> {
  const changes = new Changes();
  const run: Run = { applied: false, pruned: false };
  for (;;) {
    await changes.gathered(run.applied, run.step?.rolling ?? false);
    const [lws, groups] = await Promise.all([readLws(ref), kube.listGroups(ref)]);
    const live = whoseLws(lws, generation, run.uid);
    if (live === 'created-again') return continueAsNew<typeof reconcileLeaderWorkerSet>({ ref, generation });
    if (typeof live === 'string') return live;
    run.uid = live.metadata.uid;

    const groupsNow = groupStates(live, groups.leaders, groups.workerStatefulSets);
    const plan = planLeaderRollout(live.spec, groupsNow, leaderStatefulSetOf(live, groups), live.revision);
    const outcome = run.applied
      ? await takeRolloutStep(ref, live, plan, run.step)
      : await applyGeneration(ref, live, generation, plan);
    if (outcome === 'invalid') return 'invalid';
    // Stale: the LWS changed under the pass (a new generation, say); read again, it tells what to do.
    if (outcome === 'names held' || outcome === 'leaders lost' || outcome === 'stale') {
      run.applied = false;
      changes.again();
      continue;
    }
    const counts = statusCounts(live, groupsNow);
    if (typeof outcome === 'object' && 'refused' in outcome) {
      // The API server refuses this generation's leader StatefulSet: told until a new generation (or a resync that
      // finds it accepted) ends it; the run waits for that instead of failing.
      if (!refusalTold(live.status, outcome.refused)) {
        await kube.recordEvent(eventOf(ref, live, outcome.refused.reason, outcome.refused.message, 'Warning'));
      }
      if ((await writeStatus(ref, live, groups, counts, undefined, outcome.refused)) === 'gone') return 'deleted';
      continue;
    }
    if (typeof outcome === 'object') {
      // Another LWS's StatefulSet has the name: told on the status until it is gone (looked at again at each resync).
      if ((await writeStatus(ref, live, groups, counts, outcome.nameConflict)) === 'gone') return 'deleted';
      continue;
    }
    run.applied = true;
    run.step = plan;
    if ((await writeStatus(ref, live, groups, counts)) === 'gone') return 'deleted';
    if (counts.updateDone && !run.pruned) {
      const inUse = revisionsInUse(groups);
      await kube.pruneControllerRevisions({ ref, uid: run.uid, current: live.revision, inUse });
      run.pruned = true;
    }

    // Keep the history short for an LWS that lives for months.
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 2000) {
      await continueAsNew<typeof reconcileLeaderWorkerSet>({ ref, generation });
    }
  }
}

/** The leader StatefulSet the plan steers: this LWS's own, not one of another incarnation or another LWS. */
function leaderStatefulSetOf(lws: LwsFacts, groups: Groups): LeaderStatefulSetFacts | undefined {
  const sts = groups.leaderStatefulSet;
  return sts !== undefined && sts.ownerUid === lws.metadata.uid && sts.deletionTimestamp === undefined
    ? sts
    : undefined;
}

/** The revisions on a leader pod or a worker StatefulSet: a group still built from them (one being torn down, say). */
function revisionsInUse(groups: Groups): string[] {
  const hashes = [...groups.leaders, ...groups.workerStatefulSets].map((o) => o.labels[LABEL_TEMPLATE_REVISION_HASH]);
  return [...new Set(hashes.filter((h): h is string => h !== undefined))];
}

/** The generation's objects: its revision, the headless Service, the leader StatefulSet, the policy on each leader. */
async function applyGeneration(
  ref: ObjectKey,
  lws: LwsRead,
  generation: number,
  plan: LeaderRollout,
): Promise<'applied' | 'invalid' | 'names held' | 'stale' | { nameConflict: string } | { refused: Refusal }> {
  if (await refusedAsInvalid(ref, lws)) return 'invalid';
  // Before any leader of this revision exists: its workers are built from it.
  const revision = await ensureControllerRevision(lws);
  if (revision === 'stale') return revision;
  if (revision !== 'unchanged') {
    const verb = revision === 'created' ? 'created' : 'current again';
    await kube.recordEvent(
      eventOf(
        ref,
        lws,
        EVENT_REASONS.creatingRevision,
        `revision ${lws.revision} ${verb} for generation ${generation}`,
      ),
    );
  }
  return applyLeaderObjects(ref, lws, generation, plan, true);
}

/**
 * As upstream: the status, and an Event when the pass's first condition turns True. Ours too: a name taken, a
 * StatefulSet the API server refused (the leader's, else the workers' of a group as its provisioning wrote it), and
 * groups whose restart budget is spent (as their recreate wrote it on their leaders).
 * `gone`: the LWS was deleted since the pass read it (its status answered 404).
 */
async function writeStatus(
  ref: ObjectKey,
  lws: LwsFacts,
  groups: Groups,
  counts: StatusCounts,
  nameConflict?: string,
  leaderRefused?: Refusal,
): Promise<'gone' | undefined> {
  const now = new Date().toISOString();
  const owners = new Set(
    groups.workerStatefulSets.filter((s) => s.deletionTimestamp === undefined).map((s) => s.ownerUid),
  );
  const formed = (leader: { uid: string }) => owners.has(leader.uid);
  const refusal = leaderRefused ?? workersRefusedOf(groups.leaders, formed);
  const failed = groupsFailedOf(groups.leaders);
  const status = computeStatus(lws, counts, leaderStatefulSetOf(lws, groups), now, nameConflict, refusal, failed);
  if (sameStatus(lws.status, status)) return undefined;
  try {
    await kube.updateLeaderWorkerSetStatus({ ref, status });
  } catch (err) {
    if (isNotFound(err)) return 'gone';
    throw err;
  }
  const told = conditionEvent(lws, counts);
  if (told !== undefined) await kube.recordEvent(eventOf(ref, lws, told.reason, told.message));
  return undefined;
}
