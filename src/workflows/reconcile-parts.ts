// What both reconcile loops share (reconcile.ts, and reconcile-v1.ts for runs started before patch
// upstream-semantics): the input, the trigger's signals, who the LWS is, the generation's leader objects, and one
// rollout step on the leader StatefulSet.
import { condition, defineSignal, patched, setHandler, sleep } from '@temporalio/workflow';
import {
  DEFAULT_POD_TERMINATION_POLICY,
  EVENT_REASONS,
  leaderRefusal,
  leaderStatefulSetName,
  nameConflictMessage,
  type Refusal,
  type LeaderRollout,
  type LwsFacts,
  type ObjectKey,
} from '../model/index.js';
import type { KubernetesEvent, LwsActivities } from '../activities/types.js';
import { apiRefusal } from '../shared/failures.js';
import { kube } from './activities.js';
import { ensureHeadlessService, ensureLeaderStatefulSet, type LwsRead } from './lws-io.js';
import { namesFreed } from './names-freed.js';

export interface ReconcileInput {
  ref: ObjectKey;
  generation: number;
  /** Runs before patch upstream-semantics only: this generation's rollout is under way (reconcile-v1.ts). */
  rolling?: boolean;
}

export type ReconcileResult = 'deleted' | 'superseded' | 'invalid';

/** What the trigger says of a change, beyond that there was one. */
export interface Change {
  /** A group became Ready while a rolling update is under way: its next step waits for exactly this. */
  groupReady?: boolean;
}

/** Something about this LWS changed; look again. Signals coalesce: many changes, one pass. */
export const changedSignal = defineSignal<[Change?]>('changed');

export type Groups = Awaited<ReturnType<LwsActivities['listGroups']>>;

/** A quiet LWS is still looked at this often, in case an event was missed. */
const resyncInterval = '5 minutes';
/** How long changes are gathered before a pass; status lags by at most this much. */
const batchWindow = '1 second';

/** The trigger's signals, gathered: a group change is a burst of pod events, taken in one pass. */
export class Changes {
  private dirty = true;
  private groupReady = false;

  constructor() {
    setHandler(changedSignal, (change?: Change) => {
      this.dirty = true;
      if (change?.groupReady) this.groupReady = true;
    });
  }

  /** Until a change (or the resync), then the batch window; while rolling, a group turned Ready ends it early. */
  async gathered(applied: boolean, rolling: boolean): Promise<void> {
    const signalled = await condition(() => this.dirty, resyncInterval);
    if (signalled && applied) {
      if (rolling) await condition(() => this.groupReady, batchWindow);
      else await sleep(batchWindow);
    }
    this.dirty = false;
    this.groupReady = false;
  }

  /** Look again at once. */
  again(): void {
    this.dirty = true;
  }
}

/**
 * The LWS this run keeps applied, or why there is none. One deleted and created again under the name (another uid)
 * is another LWS: at this generation the trigger's signals still come to this workflow ID, so a fresh run takes it
 * over; at another generation they go to that generation's run.
 */
export function whoseLws<L extends { metadata: { uid?: string; generation?: number; deletionTimestamp?: unknown } }>(
  lws: L | null,
  generation: number,
  keptUid: string | undefined,
): L | 'deleted' | 'created-again' | 'superseded' {
  if (lws === null || lws.metadata.deletionTimestamp) return 'deleted';
  const lwsGeneration = lws.metadata.generation ?? 0;
  if (keptUid !== undefined && lws.metadata.uid !== keptUid) {
    return lwsGeneration === generation ? 'created-again' : 'deleted';
  }
  return lwsGeneration > generation ? 'superseded' : lws;
}

/**
 * The StatefulSet cannot roll groups by itself (it sees leaders, not workers, and never adds surge pods): each pass
 * plans the step from the groups. From the step before, while the StatefulSet is still as written then, one patch
 * moves it on.
 */
export async function takeRolloutStep(
  ref: ObjectKey,
  lws: LwsRead,
  plan: LeaderRollout,
  written: LeaderRollout | undefined,
): Promise<'taken' | 'leaders lost' | 'stale'> {
  if (plan.replicas === written?.replicas && plan.partition === written.partition) return 'taken';
  const step = await ensureLeaderStatefulSet(lws, stepOf(plan), written && stepOf(written));
  if (step === 'stale') return step;
  // Deleted under the rollout: applied again, as at the start.
  if (typeof step === 'object') return 'leaders lost';
  await kube.recordEvent(eventOf(ref, lws, EVENT_REASONS.rollingUpdateStep, describeStep(lws.spec.replicas, plan)));
  return 'taken';
}

export const stepOf = (plan: LeaderRollout) => ({ replicas: plan.replicas, partition: plan.partition });

export function eventOf(
  ref: ObjectKey,
  lws: { metadata: { uid?: string } },
  reason: string,
  message: string,
  type: KubernetesEvent['type'] = 'Normal',
): KubernetesEvent {
  return { lws: { ...ref, uid: lws.metadata.uid ?? '' }, type, reason, message };
}

/** A rollout step for people: "rolling update: 4 groups (1 surge), the new template from group 2 up". */
export function describeStep(replicas: number, plan: LeaderRollout): string {
  const surge = plan.replicas - replicas;
  const from = `the new template from group ${plan.partition} up`;
  if (!plan.rolling) return `rolling update done: ${plan.replicas} groups, ${from}`;
  return `rolling update: ${surge > 0 ? `${plan.replicas} groups (${surge} surge), ` : ''}${from}`;
}

/** A spec the API server's schema would refuse, written around it: told as a Warning Event. True when so. */
export async function refusedAsInvalid(ref: ObjectKey, lws: LwsFacts): Promise<boolean> {
  if (lws.invalid === undefined) return false;
  // The API server's schema normally stops these; objects written around it end here, loudly.
  await kube.recordEvent(eventOf(ref, lws, EVENT_REASONS.invalidSpec, lws.invalid.join('; '), 'Warning'));
  return true;
}

type LeaderObjectsOutcome = 'applied' | 'names held' | 'stale' | { nameConflict: string };

/**
 * A marker in a reconcile run that met a leader StatefulSet the API server refused: from it on, the run tells it and
 * waits for a fix instead of failing (runs recorded before it failed there, and replay so).
 */
export const TELL_REFUSALS_PATCH = 'tell-refused-templates';

/**
 * The generation's headless Service, its leader StatefulSet at this step, and the policy on each leader pod.
 * `tellRefusals`: a leader StatefulSet the API server refuses is a `refused` outcome, not a failure.
 */
export function applyLeaderObjects(
  ref: ObjectKey,
  lws: LwsRead,
  generation: number,
  plan: LeaderRollout,
): Promise<LeaderObjectsOutcome>;
export function applyLeaderObjects(
  ref: ObjectKey,
  lws: LwsRead,
  generation: number,
  plan: LeaderRollout,
  tellRefusals: true,
): Promise<LeaderObjectsOutcome | { refused: Refusal }>;
export async function applyLeaderObjects(
  ref: ObjectKey,
  lws: LwsRead,
  generation: number,
  plan: LeaderRollout,
  tellRefusals = false,
): Promise<LeaderObjectsOutcome | { refused: Refusal }> {
  const { spec } = lws;
  if ((await ensureHeadlessService(lws)) === 'stale') return 'stale';
  let leaders: Awaited<ReturnType<typeof ensureLeaderStatefulSet>>;
  try {
    leaders = await ensureLeaderStatefulSet(lws, stepOf(plan));
  } catch (err) {
    const refusal = apiRefusal(err);
    if (!tellRefusals || refusal === undefined || !patched(TELL_REFUSALS_PATCH)) throw err;
    const statefulSet = `${ref.namespace}/${leaderStatefulSetName(ref.name)}`;
    return { refused: leaderRefusal(statefulSet, refusal) };
  }
  if (leaders === 'stale') return leaders;
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
  const podTerminationPolicy = spec.podTerminationPolicy ?? DEFAULT_POD_TERMINATION_POLICY;
  await kube.annotateLeaderPods({ ref, podTerminationPolicy });
  return 'applied';
}
