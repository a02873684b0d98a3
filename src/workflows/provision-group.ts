// Provisions one incarnation of a group: once its leader pod exists (or is Ready, under LeaderReady), create the
// worker StatefulSet owned by that leader. If an old group's worker StatefulSet still holds the name, wait until it is
// gone first (safe rebuild), then create, exactly once; old pods that outlive their StatefulSet (Sequential) only delay
// the new pods, as under upstream, and the new StatefulSet is nudged the moment they are gone. A worker StatefulSet the
// API server refuses (a template it finds invalid) is reported on the LWS and tried again with a capped backoff until
// it is made or the leader goes: a fixed template rolls the leaders, and each new leader's provisioning builds from it.
import { continueAsNew, sleep } from '@temporalio/workflow';
import {
  ANNOTATION_WORKERS_REFUSED,
  EVENT_REASONS,
  isLiveIncarnation,
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
import type { EnsureWorkerStatefulSetResult, KubernetesEvent } from '../activities/types.js';
import { apiRefusal, isNamespaceTerminating } from '../shared/failures.js';
import { kube, reportWait, wait } from './activities.js';
import { ensureWorkerStatefulSet, readLws } from './lws-io.js';
import { waitForOldObjectsGone } from './old-objects-gone.js';
import { shouldContinueAsNew } from './continue-as-new.js';
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
interface Skipped {
  kind: 'skipped';
  outcome: Exclude<ProvisionOutcome, 'provisioned'>;
  detail: string;
}

function skipped(outcome: Skipped['outcome'], detail: string = outcome): Skipped {
  return { kind: 'skipped', outcome, detail };
}

export async function provisionGroup(input: ProvisionGroupInput): Promise<ProvisionGroupResult> {
  const { ref, groupIndex, leader } = input;
  const timeline = new Timeline(`provision group ${groupIndex} of ${ref.namespace}/${ref.name}`);
  const skip = ({ outcome, detail }: Skipped): ProvisionGroupResult => {
    timeline.add('skipped', undefined, detail);
    return { outcome, timeline: timeline.entries };
  };
  try {
    timeline.add('new leader', undefined, leader.name);
    const look = input.seen ? seenByTrigger(input.seen) : await firstLook(input);
    if (look.kind === 'skipped') return skip(look);
    const { lws, leaderNow } = look;
    const { spec } = lws;

    if (spec.startupPolicy === 'LeaderReady') {
      const ready = await leaderReady(leader, timeline);
      if (ready.kind === 'skipped') return skip(ready);
    }
    const key = lws.exclusiveTopologyKey;
    const scheduled = key === undefined ? undefined : await leaderScheduled(key, leader, timeline);
    if (scheduled?.kind === 'skipped') return skip(scheduled);
    const topology = scheduled?.topology;

    // A wait for the leader makes the first look at it old: the build then reads it again.
    const waited = spec.startupPolicy === 'LeaderReady' || topology !== undefined;
    const made = await createWorkers(input, lws, topology, timeline, waited ? undefined : leaderNow);
    if (made.kind === 'skipped') return skip(made);
    if (made.workers && made.oldPods) await oldPodsGone(made.workers, made.oldPods, timeline);
    const provisioned: KubernetesEvent = {
      lws: { ...ref, uid: made.lws.metadata.uid },
      type: 'Normal',
      reason: EVENT_REASONS.groupProvisioned,
      message: `group ${groupIndex}: leader ${leader.name} (${leader.uid}) with ${spec.leaderWorkerTemplate.size - 1} workers`,
    };
    const ended = await workersReadyOrMadeAgain(input, made.lws, topology, made.workers, timeline, provisioned);
    if (ended?.kind === 'skipped') return skip(ended);
    // The readiness wait told it as the group turned Ready: the task its end starts makes no call.
    if (ended?.kind !== 'told') await kube.recordEvent(provisioned);
    return { outcome: 'provisioned', timeline: timeline.entries };
  } catch (err) {
    // Deleting a namespace deletes its LWS: the group is going, not failing.
    if (!isNamespaceTerminating(err)) throw err;
    return skip(skipped('lws-gone', 'its namespace is being deleted'));
  }
}

/** What the run builds on: the LWS, and the leader as last read (null: no pod of its name). */
interface Look {
  kind: 'look';
  lws: LwsFacts;
  leaderNow: PodFacts | null;
}

/** An LWS the group can be built for: there, and not being deleted. */
function isLive(lws: LwsFacts | null): lws is LwsFacts {
  return lws !== null && !lws.metadata.deletionTimestamp;
}

/** What the trigger saw, when the workers wait for nothing (workersWaitForLeader): nothing to read before the build. */
function seenByTrigger({ lws, leader }: NonNullable<ProvisionGroupInput['seen']>): Look | Skipped {
  return isLive(lws) ? { kind: 'look', lws, leaderNow: leader } : skipped('lws-gone');
}

/** The LWS and the leader, read at once: one round trip before the build instead of two. */
async function firstLook({ ref, leader }: ProvisionGroupInput): Promise<Look | Skipped> {
  const [lws, leaderNow] = await Promise.all([readLws(ref), kube.getPod(leader)]);
  return isLive(lws) ? { kind: 'look', lws, leaderNow } : skipped('lws-gone');
}

async function leaderReady(leader: ObjectIdentity, timeline: Timeline): Promise<{ kind: 'ready' } | Skipped> {
  const ready = await wait.waitForPodReady(leader);
  if ('goneAt' in ready) return skipped('leader-gone');
  timeline.add('leader ready', ready.readyAt);
  return { kind: 'ready' };
}

type Topology = { key: string; value: string };

/** Exclusive placement: the workers follow the leader onto its topology domain, so they wait for it to be scheduled. */
async function leaderScheduled(
  key: string,
  leader: ObjectIdentity,
  timeline: Timeline,
): Promise<{ kind: 'scheduled'; topology: Topology } | Skipped> {
  const scheduled = await wait.waitForPodScheduled(leader);
  if ('goneAt' in scheduled) return skipped('leader-gone');
  const value = await kube.getNodeLabel({ node: scheduled.node, label: key });
  // The scheduler places a leader only on a node with the label (its pod affinity names it), so this is a race.
  if (value === null) throw new Error(`node ${scheduled.node} of leader ${leader.name} has no label ${key}`);
  timeline.add('leader scheduled', undefined, `${scheduled.node}, ${key}=${value}`);
  return { kind: 'scheduled', topology: { key, value } };
}

/** The worker StatefulSet made (none for size 1), and the LWS it was built from. */
interface Made {
  kind: 'made';
  lws: LwsFacts;
  workers?: ObjectIdentity;
  /** An older incarnation's pods, their StatefulSet gone already, that still hold the new pods' names. */
  oldPods?: ObjectIdentity[];
}

/**
 * The next build: on this LWS, and on the leader as read when that read still holds (else it is read first). It holds
 * at the start, and after the old group's names are freed: its revision is fixed for its uid, and the build's patch
 * answers leader-gone for one gone or terminating since. After a refusal or a stale LWS the leader is read again.
 */
interface Attempt {
  kind: 'attempt';
  lws: LwsFacts;
  leader?: PodFacts | null;
  /** After the wait for the old group's names: the build reads the LWS itself, along with the leader's patch. */
  afterWait?: true;
}

/**
 * The worker StatefulSet, created once the names are free: built until it is made or the provisioning ends. A wait for
 * the names can last a grace period or more, and the build takes the LWS as it is after it (a policy switch, a new
 * template), as it does when the LWS changed since it was read (stale).
 */
async function createWorkers(
  input: ProvisionGroupInput,
  lws: LwsFacts,
  topology: Topology | undefined,
  timeline: Timeline,
  leaderRead?: PodFacts | null,
): Promise<Made | Skipped> {
  const backoff = new RefusalBackoff();
  let next: Attempt | Made | Skipped = { kind: 'attempt', lws, leader: leaderRead };
  while (next.kind === 'attempt') next = await buildOnce(input, next, topology, timeline, backoff);
  return next;
}

/** One build of the worker StatefulSet, and where its answer leads: the workers made, an end, or the next build. */
async function buildOnce(
  input: ProvisionGroupInput,
  { lws, leader: leaderRead, afterWait }: Attempt,
  topology: Topology | undefined,
  timeline: Timeline,
  backoff: RefusalBackoff,
): Promise<Attempt | Made | Skipped> {
  const { ref, groupIndex, leader } = input;
  const pod = leaderRead !== undefined ? leaderRead : await kube.getPod(leader);
  if (!isLiveIncarnation(pod, leader)) return skipped('leader-gone');
  // Built from the leader's own revision: a leader kept on an older template gets workers of that template.
  const revision = pod.labels[LABEL_TEMPLATE_REVISION_HASH];
  const answer = await build(lws, {
    groupIndex,
    leader,
    ...(topology && { topology }),
    ...(revision !== undefined && { revision }),
    ...(afterWait && { afterWait }),
  });
  switch (answer.outcome) {
    case 'refused':
      await reportRefusal(input, lws, pod, answer.refusal, timeline);
      await backoff.sleep(input);
      return readLwsAgain(ref);
    case 'stale':
      return readLwsAgain(ref);
    case 'leader-gone':
      return skipped('leader-gone');
    case 'exists':
      return skipped('already-provisioned', 'this leader already has its workers');
    case 'not-needed':
      timeline.add('workers created', undefined, 'size 1: no workers');
      return { kind: 'made', lws };
    case 'created':
      return workersCreated(input, lws, pod, answer, timeline);
    case 'blocked':
      await oldStatefulSetGone(input, lws, answer, timeline);
      // The next build reads the LWS itself, along with the leader's patch: a change made during the wait comes
      // back stale and is read then, so the names freed cost no round trip before the create.
      return { kind: 'attempt', lws, leader: pod, afterWait: true };
  }
}

type BuildAnswer = EnsureWorkerStatefulSetResult | { outcome: 'stale' } | { outcome: 'refused'; refusal: ApiRefusal };

/** What the build answered; the API server's refusal of the StatefulSet (a template it finds invalid) is an answer too. */
async function build(lws: LwsFacts, spec: Parameters<typeof ensureWorkerStatefulSet>[1]): Promise<BuildAnswer> {
  try {
    const answer = await ensureWorkerStatefulSet(lws, spec);
    return answer === 'stale' ? { outcome: 'stale' } : answer;
  } catch (err) {
    const refusal = apiRefusal(err);
    if (refusal === undefined) throw err;
    return { outcome: 'refused', refusal };
  }
}

/** The LWS read again for the next build: after a refusal's backoff, or once the build found it changed (stale). */
async function readLwsAgain(ref: ObjectKey): Promise<Attempt | Skipped> {
  const lws = await readLws(ref);
  return isLive(lws) ? { kind: 'attempt', lws } : skipped('lws-gone');
}

/** Made: on the timeline, with the old StatefulSet the build released to make room. */
async function workersCreated(
  { ref, groupIndex, leader }: ProvisionGroupInput,
  lws: LwsFacts,
  pod: PodFacts,
  created: Extract<EnsureWorkerStatefulSetResult, { outcome: 'created' }>,
  timeline: Timeline,
): Promise<Made> {
  // Made after a refusal (the cause went away): the leader no longer says it.
  if (pod.annotations[ANNOTATION_WORKERS_REFUSED]) await kube.markWorkersRefused({ leader });
  if (created.released) timeline.add('old StatefulSet gone', undefined, `${created.released}: released, no pod left`);
  const name = workerStatefulSetName(ref.name, groupIndex);
  timeline.add('workers created', undefined, name);
  return {
    kind: 'made',
    lws,
    workers: { namespace: ref.namespace, name, uid: created.uid },
    ...(created.oldPods?.length && { oldPods: created.oldPods }),
  };
}

/** Another StatefulSet holds the workers' name (an old group's, or this leader's own being deleted): until it is gone. */
async function oldStatefulSetGone(
  { ref, groupIndex }: ProvisionGroupInput,
  lws: LwsFacts,
  blocked: Extract<EnsureWorkerStatefulSetResult, { outcome: 'blocked' }>,
  timeline: Timeline,
): Promise<void> {
  const name = workerStatefulSetName(ref.name, groupIndex);
  // Another LWS's leader StatefulSet goes only with that LWS: the user is warned, and the group waits for it.
  if (blocked.takenBy !== undefined) {
    await kube.recordEvent({
      lws: { ...ref, uid: lws.metadata.uid },
      type: 'Warning',
      reason: EVENT_REASONS.nameConflict,
      message: `group ${groupIndex}: ${nameConflictMessage(`${ref.namespace}/${name}`, blocked.takenBy)}`,
    });
  }
  const pods = blocked.pods ?? [];
  const left = pods.length > 0 ? `; ${pods.length} of its pods still terminating` : '';
  timeline.add('waiting for old StatefulSet', undefined, `owned by ${blocked.ownerUid ?? 'unknown'}${left}`);
  const goneAt = await waitForOldObjectsGone({
    statefulSet: { namespace: ref.namespace, name, uid: blocked.uid },
    pods,
  });
  timeline.add('old StatefulSet gone', goneAt);
}

/**
 * Once per refusal (the leader pod keeps the last one reported, so a retry or a run continued as new reports it again
 * only when the API server's answer changed): a Warning Event at once, and the refusal on the leader pod, whose change
 * the trigger signals to the reconcile, which writes it on the status.
 */
async function reportRefusal(
  { ref, groupIndex, leader }: ProvisionGroupInput,
  lws: LwsFacts,
  pod: PodFacts,
  refusal: ApiRefusal,
  timeline: Timeline,
): Promise<void> {
  const warning = workerRefusal(groupIndex, `${ref.namespace}/${workerStatefulSetName(ref.name, groupIndex)}`, refusal);
  if (pod.annotations[ANNOTATION_WORKERS_REFUSED] === warning.message) return;
  timeline.add('workers refused', undefined, warning.message);
  await Promise.all([
    kube.recordEvent({ lws: { ...ref, uid: lws.metadata.uid }, type: 'Warning', ...warning }),
    kube.markWorkersRefused({ leader, message: warning.message }),
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
    if (shouldContinueAsNew()) {
      // What the trigger saw at the start is old by now: the next run looks for itself.
      const { seen: _seen, ...looking } = input;
      await continueAsNew<typeof provisionGroup>(looking);
    }
  }
}

/** The old group's pods hold the new pods' names until they are gone: the new StatefulSet is marked then. */
async function oldPodsGone(workers: ObjectIdentity, oldPods: ObjectIdentity[], timeline: Timeline): Promise<void> {
  timeline.add('waiting for old pods', undefined, `${oldPods.length} still terminating`);
  const freed = await wait.waitForNamesFreed({ pods: oldPods, successor: workers });
  if ('goneAt' in freed) timeline.add('old pods gone', freed.goneAt);
}

/**
 * Until the group is Ready (each worker has its worker-index label from its creation: the admission webhook), when the
 * wait tells `provisioned`. A new StatefulSet gone while its leader lives is made again, three times at most: one can
 * be deleted right after its create in a Parallel rebuild on Kubernetes 1.32, which would leave the group without
 * workers. A leader gone or going ends it: its teardown decides. Resolves with an end only when a build made again
 * ends the provisioning.
 */
async function workersReadyOrMadeAgain(
  input: ProvisionGroupInput,
  lws: LwsFacts,
  topology: Topology | undefined,
  workers: ObjectIdentity | undefined,
  timeline: Timeline,
  provisioned: KubernetesEvent,
): Promise<Skipped | { kind: 'told' } | undefined> {
  for (let made = workers, again = 0; made !== undefined; again++) {
    const ready = await reportWait.waitForStatefulSetReady({ ...made, tell: [provisioned] });
    if ('readyAt' in ready) {
      timeline.add('new group ready', ready.readyAt);
      return { kind: 'told' };
    }
    if (again === 3) return undefined;
    const leader = await kube.getPod(input.leader);
    if (!isLiveIncarnation(leader, input.leader)) return undefined;
    timeline.add('workers gone', ready.goneAt, `${made.name} deleted while its leader lives: made again`);
    const remade = await createWorkers(input, lws, topology, timeline, leader);
    if (remade.kind === 'skipped') return remade;
    made = remade.workers;
  }
  return undefined;
}
