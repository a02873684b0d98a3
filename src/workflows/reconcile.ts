// Keeps one generation of an LWS applied: its ControllerRevision, the headless Service and the leader StatefulSet,
// and the status as groups come and go. The trigger signals it on every change of the LWS (but its status), its pods
// and its StatefulSets. It also steers a rolling update as upstream does, one step per pass as groups become Ready
// (model/rollout.ts, planLeaderRollout), and prunes the revisions no group uses once it is done. It decides on the
// LWS's facts; its writes read the templates themselves (lws-io.ts).
import { continueAsNew } from '@temporalio/workflow';
import {
  computeStatus,
  conditionEvent,
  EVENT_REASONS,
  groupStates,
  groupsFailedOf,
  LABEL_TEMPLATE_REVISION_HASH,
  leaderRefusal,
  leaderStatefulSetName,
  nameConflictMessage,
  planLeaderRollout,
  podTerminationPolicyOf,
  refusalTold,
  sameStatus,
  statusCounts,
  workersRefusedOf,
  type LeaderRollout,
  type LeaderStatefulSetFacts,
  type LwsFacts,
  type ObjectKey,
  type Refusal,
  type StatusCounts,
} from '../model/index.js';
import type { Groups, KubernetesEvent } from '../activities/types.js';
import { apiRefusal, isNamespaceTerminating, isNotFoundFailure } from '../shared/failures.js';
import { kube } from './activities.js';
import { shouldContinueAsNew } from './continue-as-new.js';
import { ensureControllerRevision, ensureHeadlessService, ensureLeaderStatefulSet, readLws } from './lws-io.js';
import { waitForOldObjectsGone } from './old-objects-gone.js';
import { ChangeSignals } from './reconcile-signals.js';

export { changedSignal, RECONCILE_RESYNC_MS } from './reconcile-signals.js';

export interface ReconcileInput {
  ref: ObjectKey;
  generation: number;
}

/** Why a run ended: its LWS is gone, a newer generation's run took over, or the spec is one the API would refuse. */
export type ReconcileResult = 'deleted' | 'superseded' | 'invalid';

/** What a pass read of its LWS: still the one this run keeps applied, or why the run ends. */
type LwsCheck =
  | { kind: 'current'; lws: LwsFacts }
  | { kind: 'deleted' }
  /** A newer generation: its own run keeps it applied. */
  | { kind: 'superseded' }
  /** Deleted and created again under the name, at this generation: another LWS, which a fresh run takes over. */
  | { kind: 'created-again' };

/** What a pass's writes came to. */
type PassOutcome =
  /** The generation's objects, or the rollout step, are as planned. */
  | { kind: 'applied' }
  /**
   * As planned, and the leader StatefulSet written mid-rollout: the next pass plans from that write at once, as no
   * signal tells of the reconcile's own writes.
   */
  | { kind: 'stepped' }
  /** A spec the API server's schema would refuse: told, and the run ends. */
  | { kind: 'invalid' }
  /**
   * What the pass decided on no longer holds (the LWS changed under it, an older incarnation held the names, the
   * leader StatefulSet was deleted mid-rollout): the next pass reads again at once and applies the generation anew.
   */
  | { kind: 'start-over' }
  /** Another LWS's StatefulSet has the leader StatefulSet's name. */
  | { kind: 'name-conflict'; message: string }
  /** The API server refuses this generation's leader StatefulSet. */
  | { kind: 'refused'; refusal: Refusal };

/** What this run has done so far. */
interface Run {
  /** The uid of the LWS this run keeps applied: the first it read. */
  uid?: string;
  /** The generation's objects are applied: the next passes only take rollout steps. */
  applied: boolean;
  /** The rollout step last written to the leader StatefulSet. */
  step?: LeaderRollout;
  /** The revisions no group uses were deleted (once per run, when the rollout is done). */
  pruned: boolean;
}

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
  const changes = new ChangeSignals();
  const run: Run = { applied: false, pruned: false };
  for (;;) {
    await changes.nextPass();

    // Read the LWS with its groups, and end the run once the LWS is no longer its own.
    const [read, groups] = await Promise.all([readLws(ref), kube.listGroups(ref)]);
    const checked = checkLws(read, generation, run.uid);
    switch (checked.kind) {
      case 'deleted':
      case 'superseded':
        return checked.kind;
      case 'created-again':
        return continueAsNew<typeof reconcileLeaderWorkerSet>({ ref, generation });
      case 'current':
        break;
    }
    const { lws } = checked;
    run.uid = lws.metadata.uid;

    // Plan the rollout from the groups, then write: the whole generation first, one rollout step per pass after.
    const groupsNow = groupStates(lws, groups.leaders, groups.workerStatefulSets);
    const plan = planLeaderRollout(lws.spec, groupsNow, leaderStatefulSetOf(lws, groups), lws.revision);
    const outcome = run.applied
      ? await takeRolloutStep(ref, lws, plan, run.step)
      : await applyGeneration(ref, lws, generation, plan);

    // Write the status, which also tells what kept the generation from being applied.
    const counts = statusCounts(lws, groupsNow);
    switch (outcome.kind) {
      case 'invalid':
        return 'invalid';
      case 'start-over':
        run.applied = false;
        changes.passNow();
        continue;
      case 'refused':
        // Told until a new generation (or a resync that finds it accepted) ends it; the run waits instead of failing.
        if (!refusalTold(lws.status, outcome.refusal)) {
          const { reason, message } = outcome.refusal;
          await kube.recordEvent(lwsEvent(ref, lws, reason, message, 'Warning'));
        }
        if ((await writeStatus(ref, lws, groups, counts, { leaderRefused: outcome.refusal })) === 'gone') {
          return 'deleted';
        }
        continue;
      case 'name-conflict':
        // Told until the other StatefulSet is gone, which each resync looks for.
        if ((await writeStatus(ref, lws, groups, counts, { nameConflict: outcome.message })) === 'gone') {
          return 'deleted';
        }
        continue;
      case 'stepped':
        changes.passNow();
        break;
      case 'applied':
        break;
    }
    run.applied = true;
    run.step = plan;
    if ((await writeStatus(ref, lws, groups, counts)) === 'gone') return 'deleted';

    // Once the rollout is done, no group is built from the older revisions any more.
    if (counts.updateDone && !run.pruned) {
      const inUse = revisionsInUse(groups);
      await kube.pruneControllerRevisions({ ref, uid: run.uid, current: lws.revision, inUse });
      run.pruned = true;
    }

    // Keep the history short for an LWS that lives for months.
    if (shouldContinueAsNew()) await continueAsNew<typeof reconcileLeaderWorkerSet>({ ref, generation });
  }
}

/**
 * An LWS deleted and created again under the name (another uid) is another LWS: at this generation the trigger's
 * signals still come to this workflow ID, so a fresh run takes it over; at another they go to that generation's run.
 */
function checkLws(lws: LwsFacts | null, generation: number, keptUid: string | undefined): LwsCheck {
  if (lws === null || lws.metadata.deletionTimestamp) return { kind: 'deleted' };
  if (keptUid !== undefined && lws.metadata.uid !== keptUid) {
    return lws.metadata.generation === generation ? { kind: 'created-again' } : { kind: 'deleted' };
  }
  return lws.metadata.generation > generation ? { kind: 'superseded' } : { kind: 'current', lws };
}

/** The generation's objects: its revision, the headless Service, the leader StatefulSet, the policy on each leader. */
async function applyGeneration(
  ref: ObjectKey,
  lws: LwsFacts,
  generation: number,
  plan: LeaderRollout,
): Promise<PassOutcome> {
  if (lws.invalid !== undefined) {
    // The API server's schema normally stops these; objects written around it end here, loudly.
    await kube.recordEvent(lwsEvent(ref, lws, EVENT_REASONS.invalidSpec, lws.invalid.join('; '), 'Warning'));
    return { kind: 'invalid' };
  }
  // Before any leader of this revision exists: its workers are built from it.
  const revision = await ensureControllerRevision(lws);
  if (revision === 'stale') return { kind: 'start-over' };
  if (revision !== 'unchanged') {
    const verb = revision === 'created' ? 'created' : 'current again';
    const message = `revision ${lws.revision} ${verb} for generation ${generation}`;
    await kube.recordEvent(lwsEvent(ref, lws, EVENT_REASONS.creatingRevision, message));
  }
  if ((await ensureHeadlessService(lws)) === 'stale') return { kind: 'start-over' };
  const leaders = await applyLeaderStatefulSet(ref, lws, generation, plan);
  if (leaders.kind !== 'applied' && leaders.kind !== 'stepped') return leaders;
  // The policy lives on each leader pod, so a switch applies to the next teardown without rolling any group.
  await kube.annotateLeaderPods({ ref, podTerminationPolicy: podTerminationPolicyOf(lws.spec) });
  return leaders;
}

/** The leader StatefulSet at the plan's step, told in an Event when it was created or changed. */
async function applyLeaderStatefulSet(
  ref: ObjectKey,
  lws: LwsFacts,
  generation: number,
  plan: LeaderRollout,
): Promise<PassOutcome> {
  let leaders: Awaited<ReturnType<typeof ensureLeaderStatefulSet>>;
  try {
    leaders = await ensureLeaderStatefulSet(lws, stepOf(plan));
  } catch (err) {
    const refusal = apiRefusal(err);
    if (refusal === undefined) throw err;
    const statefulSet = `${ref.namespace}/${leaderStatefulSetName(ref.name)}`;
    return { kind: 'refused', refusal: leaderRefusal(statefulSet, refusal) };
  }
  if (leaders === 'stale') return { kind: 'start-over' };
  if (typeof leaders === 'object') {
    switch (leaders.outcome) {
      case 'name-taken': {
        const message = nameConflictMessage(`${ref.namespace}/${ref.name}`, leaders.holder);
        await kube.recordEvent(lwsEvent(ref, lws, EVENT_REASONS.nameConflict, message, 'Warning'));
        return { kind: 'name-conflict', message };
      }
      case 'blocked':
        // An older incarnation of this LWS still holds the names. A StatefulSet created over its pods would get its
        // own only after a backoff that grows to minutes: wait for them instead.
        await waitForOldObjectsGone(leaders);
        return { kind: 'start-over' };
    }
  }
  if (leaders !== 'unchanged') {
    const reason =
      leaders === 'created' ? EVENT_REASONS.leaderStatefulSetCreated : EVENT_REASONS.leaderStatefulSetUpdated;
    const step = plan.rolling ? `; ${describeStep(lws.spec.replicas, plan)}` : '';
    const message = `leader StatefulSet ${ref.name} ${leaders} for generation ${generation}${step}`;
    await kube.recordEvent(lwsEvent(ref, lws, reason, message));
    if (plan.rolling) return { kind: 'stepped' };
  }
  return { kind: 'applied' };
}

/**
 * The StatefulSet cannot roll groups by itself (it sees leaders, not workers, and never adds surge pods): each pass
 * plans the step from the groups. From the step before, while the StatefulSet is still as written then, one patch
 * moves it on.
 */
async function takeRolloutStep(
  ref: ObjectKey,
  lws: LwsFacts,
  plan: LeaderRollout,
  written: LeaderRollout | undefined,
): Promise<PassOutcome> {
  if (plan.replicas === written?.replicas && plan.partition === written.partition) return { kind: 'applied' };
  const step = await ensureLeaderStatefulSet(lws, stepOf(plan), written && stepOf(written));
  // Changed or deleted under the rollout: applied again, as at the start.
  if (step === 'stale' || typeof step === 'object') return { kind: 'start-over' };
  await kube.recordEvent(lwsEvent(ref, lws, EVENT_REASONS.rollingUpdateStep, describeStep(lws.spec.replicas, plan)));
  return { kind: plan.rolling ? 'stepped' : 'applied' };
}

/** What the status tells of the leader StatefulSet beyond the groups: its name taken, or the API server's refusal. */
interface LeaderProblem {
  nameConflict?: string;
  leaderRefused?: Refusal;
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
  { nameConflict, leaderRefused }: LeaderProblem = {},
): Promise<'written' | 'unchanged' | 'gone'> {
  const now = new Date().toISOString();
  const owners = new Set(
    groups.workerStatefulSets.filter((s) => s.deletionTimestamp === undefined).map((s) => s.ownerUid),
  );
  const formed = (leader: { uid: string }) => owners.has(leader.uid);
  const refusal = leaderRefused ?? workersRefusedOf(groups.leaders, formed);
  const failed = groupsFailedOf(groups.leaders);
  const status = computeStatus(lws, counts, leaderStatefulSetOf(lws, groups), now, nameConflict, refusal, failed);
  if (sameStatus(lws.status, status)) return 'unchanged';
  try {
    await kube.updateLeaderWorkerSetStatus({ ref, status });
  } catch (err) {
    if (isNotFoundFailure(err)) return 'gone';
    throw err;
  }
  const told = conditionEvent(lws, counts);
  if (told !== undefined) await kube.recordEvent(lwsEvent(ref, lws, told.reason, told.message));
  return 'written';
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

const stepOf = (plan: LeaderRollout) => ({ replicas: plan.replicas, partition: plan.partition });

/** A rollout step for people: "rolling update: 4 groups (1 surge), the new template from group 2 up". */
function describeStep(replicas: number, plan: LeaderRollout): string {
  const surge = plan.replicas - replicas;
  const from = `the new template from group ${plan.partition} up`;
  if (!plan.rolling) return `rolling update done: ${plan.replicas} groups, ${from}`;
  return `rolling update: ${surge > 0 ? `${plan.replicas} groups (${surge} surge), ` : ''}${from}`;
}

function lwsEvent(
  ref: ObjectKey,
  lws: LwsFacts,
  reason: string,
  message: string,
  type: KubernetesEvent['type'] = 'Normal',
): KubernetesEvent {
  return { lws: { ...ref, uid: lws.metadata.uid }, type, reason, message };
}
