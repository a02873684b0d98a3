// What both reconcile loops share (reconcile.ts, and reconcile-v1.ts for runs started before patch
// upstream-semantics): the input, the trigger's signals, who the LWS is, and one rollout step on the leader StatefulSet.
import { condition, defineSignal, setHandler, sleep } from '@temporalio/workflow';
import {
  applyDefaults,
  EVENT_REASONS,
  type LeaderRollout,
  type LeaderWorkerSet,
  type ObjectKey,
} from '../model/index.js';
import type { KubernetesEvent, LwsActivities } from '../activities/types.js';
import { kube } from './activities.js';

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
export function whoseLws(
  lws: LeaderWorkerSet | null,
  generation: number,
  keptUid: string | undefined,
): LeaderWorkerSet | 'deleted' | 'created-again' | 'superseded' {
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
  lws: LeaderWorkerSet,
  plan: LeaderRollout,
  written: LeaderRollout | undefined,
): Promise<'taken' | 'leaders lost'> {
  if (plan.replicas === written?.replicas && plan.partition === written.partition) return 'taken';
  const step = await kube.ensureLeaderStatefulSet(lws, stepOf(plan), written && stepOf(written));
  // Deleted under the rollout: applied again, as at the start.
  if (typeof step === 'object') return 'leaders lost';
  const replicas = applyDefaults(lws).spec.replicas;
  await kube.recordEvent(eventOf(ref, lws, EVENT_REASONS.rollingUpdateStep, describeStep(replicas, plan)));
  return 'taken';
}

export const stepOf = (plan: LeaderRollout) => ({ replicas: plan.replicas, partition: plan.partition });

export function eventOf(
  ref: ObjectKey,
  lws: LeaderWorkerSet,
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
