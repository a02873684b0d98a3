// Provisions one incarnation of a group: once its leader pod exists (or is Ready, under LeaderReady), create the
// worker StatefulSet owned by that leader. If an old group's worker StatefulSet still holds the name, wait until it is
// gone first (safe rebuild), then create, exactly once; old pods that outlive their StatefulSet (Sequential) only delay
// the new pods, as under upstream, and the new StatefulSet is nudged the moment they are gone. A worker StatefulSet the API server refuses (a template it finds
// invalid) is told on the LWS and tried again with a capped backoff until it is made or the leader goes: a fixed
// template rolls the leaders, and each new leader's provisioning builds from it.
import { continueAsNew, sleep, workflowInfo } from '@temporalio/workflow';
import {
  ANNOTATION_WORKERS_REFUSED,
  EVENT_REASONS,
  LABEL_TEMPLATE_REVISION_HASH,
  nameConflictMessage,
  workerRefusal,
  workerStatefulSetName,
  type ApiRefusal,
  type LwsFacts,
  type ObjectIdentity,
  type ObjectKey,
  type PodFacts,
} from '../model/index.js';
import { apiRefusal, isNamespaceTerminating } from '../shared/failures.js';
import { kube, readinessWait, wait } from './activities.js';
import { ensureWorkerStatefulSet, readLws, type LwsRead } from './lws-io.js';
import { namesFreed } from './names-freed.js';
import { Timeline, type TimelineEntry } from './timeline.js';

export interface ProvisionGroupInput {
  ref: ObjectKey;
  groupIndex: number;
  leader: ObjectIdentity;
  /**
   * The LWS (without its status) and the leader as the trigger saw them, when the workers wait for nothing
   * (workersWaitForLeader): the run builds on them at once, and the build checks the LWS is still that one.
   */
  seen?: { lws: LwsFacts; leader: PodFacts };
}

export type ProvisionOutcome = 'provisioned' | 'already-provisioned' | 'leader-gone' | 'lws-gone';

export interface ProvisionGroupResult {
  outcome: ProvisionOutcome;
  timeline: TimelineEntry[];
}

/** An end before the group is provisioned, with what the timeline says of it. */
class Skip {
  constructor(
    readonly outcome: Exclude<ProvisionOutcome, 'provisioned'>,
    readonly detail: string = outcome,
  ) {}
}

export async function provisionGroup(input: ProvisionGroupInput): Promise<ProvisionGroupResult> {
  const { ref, groupIndex, leader } = input;
  const timeline = new Timeline(`provision group ${groupIndex} of ${ref.namespace}/${ref.name}`);
  try {
    timeline.add('new leader', undefined, leader.name);
    const { lws, leaderNow } = input.seen
      ? { lws: live(input.seen.lws), leaderNow: input.seen.leader }
      : await firstLook(input);
    const { spec } = lws;
    if (spec.startupPolicy === 'LeaderReady') await leaderReady(leader, timeline);
    const topology = await leaderTopology(lws, leader, timeline);
    // A wait for the leader makes the first look at it old: the build then reads it again.
    const waited = spec.startupPolicy === 'LeaderReady' || topology !== undefined;
    const { workers, oldPods, lwsNow } = await createWorkers(
      input,
      lws,
      topology,
      timeline,
      waited ? undefined : leaderNow,
    );
    if (workers && oldPods) await oldPodsGone(workers, oldPods, timeline);
    await workersReadyOrMadeAgain(input, lwsNow, topology, workers, timeline);
    await kube.recordEvent({
      lws: { ...ref, uid: lwsNow.metadata.uid },
      type: 'Normal',
      reason: EVENT_REASONS.groupProvisioned,
      message: `group ${groupIndex}: leader ${leader.name} (${leader.uid}) with ${spec.leaderWorkerTemplate.size - 1} workers`,
    });
    return { outcome: 'provisioned', timeline: timeline.entries };
  } catch (err) {
    // Deleting a namespace deletes its LWS: the group is going, not failing.
    const skip = isNamespaceTerminating(err) ? new Skip('lws-gone', 'its namespace is being deleted') : err;
    if (!(skip instanceof Skip)) throw err;
    timeline.add('skipped', undefined, skip.detail);
    return { outcome: skip.outcome, timeline: timeline.entries };
  }
}

async function liveLws(ref: ObjectKey): Promise<LwsRead> {
  return live(await readLws(ref));
}

function live(lws: LwsRead | null): LwsRead {
  if (lws === null || lws.metadata.deletionTimestamp) throw new Skip('lws-gone');
  return lws;
}

/** The LWS and the leader, read at once: one round trip before the build instead of two. */
async function firstLook({ ref, leader }: ProvisionGroupInput): Promise<{ lws: LwsRead; leaderNow: PodFacts | null }> {
  const [lws, leaderNow] = await Promise.all([readLws(ref), kube.getPod(leader)]);
  return { lws: live(lws), leaderNow };
}

async function leaderReady(leader: ObjectIdentity, timeline: Timeline): Promise<void> {
  const ready = await wait.waitForPodReady(leader);
  if ('goneAt' in ready) throw new Skip('leader-gone');
  timeline.add('leader ready', ready.readyAt);
}

type Topology = { key: string; value: string };

/** Exclusive placement: the workers follow the leader onto its topology domain, so they wait for it to be scheduled. */
async function leaderTopology(lws: LwsRead, leader: ObjectIdentity, timeline: Timeline): Promise<Topology | undefined> {
  const key = lws.exclusiveTopologyKey;
  if (key === undefined) return undefined;
  const scheduled = await wait.waitForPodScheduled(leader);
  if ('goneAt' in scheduled) throw new Skip('leader-gone');
  const value = await kube.getNodeLabel({ node: scheduled.node, label: key });
  // The scheduler places a leader only on a node with the label (its pod affinity names it), so this is a race.
  if (value === null) throw new Error(`node ${scheduled.node} of leader ${leader.name} has no label ${key}`);
  timeline.add('leader scheduled', undefined, `${scheduled.node}, ${key}=${value}`);
  return { key, value };
}

/**
 * The worker StatefulSet, created once the names are free. Resolves with the one created (none for size 1) and the
 * LWS it was built from: a wait for the names can last a grace period or more, and the build takes the LWS as it is
 * after it (a policy switch, a new template), as it does when the LWS changed since it was read (stale).
 */
async function createWorkers(
  input: ProvisionGroupInput,
  lws: LwsRead,
  topology: Topology | undefined,
  timeline: Timeline,
  leaderRead?: PodFacts | null,
): Promise<{ workers?: ObjectIdentity; oldPods?: ObjectIdentity[]; lwsNow: LwsRead }> {
  const { ref, groupIndex, leader } = input;
  const name = workerStatefulSetName(ref.name, groupIndex);
  const backoff = new RefusalBackoff();
  // What the next pass builds on without reading the leader: the read made at the start, and the same read after the
  // old group's names are freed (its revision is fixed for its uid, and the build's patch answers leader-gone for one
  // gone or terminating since). A pass after a refusal or a stale LWS reads the leader again.
  let carried: { pod: PodFacts | null; afterWait: boolean } | undefined =
    leaderRead === undefined ? undefined : { pod: leaderRead, afterWait: false };
  for (;;) {
    const { pod, afterWait } = carried ?? { pod: await kube.getPod(leader), afterWait: false };
    carried = undefined;
    if (pod === null || pod.uid !== leader.uid || pod.deletionTimestamp) throw new Skip('leader-gone');
    // Built from the leader's own revision: a leader kept on an older template gets workers of that template.
    const revision = pod.labels[LABEL_TEMPLATE_REVISION_HASH];
    const build = {
      groupIndex,
      leader,
      ...(topology && { topology }),
      ...(revision !== undefined && { revision }),
      ...(afterWait && { afterWait }),
    };
    let result: Awaited<ReturnType<typeof ensureWorkerStatefulSet>>;
    try {
      result = await ensureWorkerStatefulSet(lws, build);
    } catch (err) {
      const refusal = apiRefusal(err);
      if (refusal === undefined) throw err;
      await tellRefused(input, lws, pod, refusal, timeline);
      await backoff.sleep(input);
      lws = await liveLws(ref);
      continue;
    }
    // Made after a refusal (the cause went away): the leader no longer says it.
    if (typeof result === 'object' && result.outcome === 'created' && pod.annotations[ANNOTATION_WORKERS_REFUSED]) {
      await kube.markWorkersRefused({ leader });
    }
    if (result === 'stale') {
      lws = await liveLws(ref);
      continue;
    }
    switch (result.outcome) {
      case 'leader-gone':
        throw new Skip('leader-gone');
      case 'exists':
        throw new Skip('already-provisioned', 'this leader already has its workers');
      case 'not-needed':
        timeline.add('workers created', undefined, 'size 1: no workers');
        return { lwsNow: lws };
      case 'created':
        if (result.released)
          timeline.add('old StatefulSet gone', undefined, `${result.released}: released, no pod left`);
        timeline.add('workers created', undefined, name);
        return {
          workers: { namespace: ref.namespace, name, uid: result.uid },
          ...(result.oldPods?.length && { oldPods: result.oldPods }),
          lwsNow: lws,
        };
      case 'blocked': {
        // Another LWS's leader StatefulSet goes only with that LWS: the user is told, and the group waits for it.
        if (result.takenBy !== undefined) {
          await kube.recordEvent({
            lws: { ...ref, uid: lws.metadata.uid },
            type: 'Warning',
            reason: EVENT_REASONS.nameConflict,
            message: `group ${groupIndex}: ${nameConflictMessage(`${ref.namespace}/${name}`, result.takenBy)}`,
          });
        }
        const pods = result.pods ?? [];
        const left = pods.length > 0 ? `; ${pods.length} of its pods still terminating` : '';
        timeline.add('waiting for old StatefulSet', undefined, `owned by ${result.ownerUid ?? 'unknown'}${left}`);
        const goneAt = await namesFreed({ statefulSet: { namespace: ref.namespace, name, uid: result.uid }, pods });
        timeline.add('old StatefulSet gone', goneAt);
        // The next build reads the LWS itself, along with the leader's patch: a change made during the wait comes
        // back stale and is read then, so the names freed cost no round trip before the create.
        carried = { pod, afterWait: true };
      }
    }
  }
}

/**
 * Once per refusal (the leader pod keeps what was told, so a retry or a run continued as new tells it again only when
 * the API server's answer changed): a Warning Event at once, and the refusal on the leader pod, whose change the
 * trigger signals to the reconcile, which writes it on the status.
 */
async function tellRefused(
  { ref, groupIndex, leader }: ProvisionGroupInput,
  lws: LwsRead,
  pod: PodFacts,
  refusal: ApiRefusal,
  timeline: Timeline,
): Promise<void> {
  const told = workerRefusal(groupIndex, `${ref.namespace}/${workerStatefulSetName(ref.name, groupIndex)}`, refusal);
  if (pod.annotations[ANNOTATION_WORKERS_REFUSED] === told.message) return;
  timeline.add('workers refused', undefined, told.message);
  await Promise.all([
    kube.recordEvent({ lws: { ...ref, uid: lws.metadata.uid }, type: 'Warning', ...told }),
    kube.markWorkersRefused({ leader, message: told.message }),
  ]);
}

/**
 * 5 s, doubling to 1 min: a refusal caused outside the template (an admission policy, say) clears by itself, and a
 * leader gone is seen within a minute. A group left refused for days continues as new before its history grows long.
 */
class RefusalBackoff {
  private delayMs = 5_000;

  async sleep(input: ProvisionGroupInput): Promise<void> {
    await sleep(this.delayMs);
    this.delayMs = Math.min(this.delayMs * 2, 60_000);
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 2000) {
      // What the trigger saw at the start is old by now: the next run looks for itself.
      const { seen: _seen, ...looking } = input;
      await continueAsNew<typeof provisionGroup>(looking);
    }
  }
}

/** The old group's pods hold the new pods' names until they are gone: the new StatefulSet is told then. */
async function oldPodsGone(workers: ObjectIdentity, oldPods: ObjectIdentity[], timeline: Timeline): Promise<void> {
  timeline.add('waiting for old pods', undefined, `${oldPods.length} still terminating`);
  const freed = await wait.waitForNamesFreed({ pods: oldPods, successor: workers });
  if ('goneAt' in freed) timeline.add('old pods gone', freed.goneAt);
}

/**
 * Until the group is Ready (each worker has its worker-index label from its creation: the admission webhook). A new
 * StatefulSet gone while its leader lives is made again, three times at most: one can be deleted right after its
 * create in a Parallel rebuild on Kubernetes 1.32, which would leave the group without workers. A leader gone or going
 * ends it: its teardown decides.
 */
async function workersReadyOrMadeAgain(
  input: ProvisionGroupInput,
  lws: LwsRead,
  topology: Topology | undefined,
  workers: ObjectIdentity | undefined,
  timeline: Timeline,
): Promise<void> {
  for (let made = workers, again = 0; made !== undefined; again++) {
    const ready = await readinessWait.waitForStatefulSetReady(made);
    if ('readyAt' in ready) {
      timeline.add('new group ready', ready.readyAt);
      return;
    }
    if (again === 3) return;
    const leader = await kube.getPod(input.leader);
    if (leader === null || leader.uid !== input.leader.uid || leader.deletionTimestamp) return;
    timeline.add('workers gone', ready.goneAt, `${made.name} deleted while its leader lives: made again`);
    made = (await createWorkers(input, lws, topology, timeline, leader)).workers;
  }
}
