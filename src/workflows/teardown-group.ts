// Tears down one group whose leader pod is terminating (deleted, evicted, recreated after a restart, scaled down,
// rolled, or its LWS deleted), as spec.podTerminationPolicy says:
//   Sequential: observe only. The leader terminates; once it is gone the garbage collector removes the workers.
//   Parallel:   foreground-delete the worker StatefulSet at once, so leader and workers terminate together.
// Then it follows the group until its pods are gone and, for a rebuild, until the replacement group is ready.
import type { SearchAttributePair } from '@temporalio/common';
import { CancellationScope, isCancellation, patched, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import {
  applyDefaults,
  decideWorkerTeardown,
  leaderPodName,
  lifecycleOf,
  predatesLws,
  resolvePodTerminationPolicy,
  workerStatefulSetName,
  type Lifecycle,
  type ObjectKey,
  type PodTerminationPolicy,
  type ObjectIdentity,
  type PodFacts,
  type StatefulSetFacts,
} from '../model/index.js';
import type { KubernetesEvent, SeenWorkers } from '../activities/types.js';
import { cancellableWait, kube, wait } from './activities.js';
import { allSettledOrThrow } from './calls.js';
import {
  LIFECYCLE_FROM_FIRST_READS,
  POLICY_OF_ITS_OWN_LWS,
  REPLACEMENT_WAIT_ENDS_FIRST,
  TEARDOWN_FIRST_ROUND_IN_ONE_CALL,
} from './patches.js';
import { Lifecycle as LifecycleAttribute, TerminationPolicy } from './search-attributes.js';
import { teardownFirstRound } from './teardown-first-round.js';
import { Timeline, type TimelineEntry, type TimelineEvent } from './timeline.js';

export interface TeardownGroupInput {
  ref: ObjectKey;
  groupIndex: number;
  /** The terminating leader pod (this incarnation of the group). */
  leader: ObjectIdentity;
  lifecycle: Lifecycle;
  /** Whether the server has this project's search attributes registered (the trigger checks at start). */
  searchAttributes?: boolean;
  /**
   * The policy as the trigger knew it when it saw the leader terminating. Parallel: delete the workers before
   * anything else (the activity still refuses a StatefulSet this leader does not control).
   */
  policy?: PodTerminationPolicy;
  /**
   * Parallel: the worker StatefulSet this leader controlled and its pods, as the trigger saw them. The workflow's
   * first call then deletes them without reading anything first; without it, the delete reads and checks first.
   */
  workers?: SeenWorkers;
  /**
   * When the leader's deletion was made, as the trigger knows it (RFC 3339): the timeline, teardownMs and recoveryMs
   * count from it. Unset (older starts, starts by other workflows): from this workflow's start.
   */
  leaderDeletedAt?: string;
}

export interface TeardownGroupResult {
  policy: PodTerminationPolicy;
  lifecycle: Lifecycle;
  /** Leader terminating -> last old pod gone, in ms. */
  teardownMs?: number;
  /** Leader terminating -> replacement group ready, in ms (rebuilds only). */
  recoveryMs?: number;
  timeline: TimelineEntry[];
}

/** How long a rebuild waits for its replacement group before it reports without one. */
const replacementTimeout = '30 minutes';

const asState = (o: PodFacts | StatefulSetFacts | null) =>
  o === null
    ? undefined
    : {
        metadata: {
          name: o.name,
          uid: o.uid,
          deletionTimestamp: o.deletionTimestamp,
          annotations: 'annotations' in o ? o.annotations : {},
          ownerReferences: o.ownerUid ? [{ uid: o.ownerUid, controller: true }] : [],
        },
      };

/** CamelCase Event reasons for timeline steps, e.g. "workers gone" -> GroupWorkersGone. */
function eventReason(event: TimelineEvent): string {
  return 'Group' + event.replace(/(^|\s)(\w)/g, (_m, _s: string, c: string) => c.toUpperCase());
}

export async function teardownGroup(input: TeardownGroupInput): Promise<TeardownGroupResult> {
  const { ref, groupIndex, leader } = input;
  const title = (lifecycle: Lifecycle) => `${lifecycle} of group ${groupIndex} of ${ref.namespace}/${ref.name}`;
  const timeline = new Timeline(title(input.lifecycle));
  const workflowStarted = Date.now();
  const deletedAt = input.leaderDeletedAt ? Date.parse(input.leaderDeletedAt) : NaN;
  // Never after the workflow's own start: the trigger's clock may be a little ahead of the worker's.
  const started = new Date(deletedAt < workflowStarted ? deletedAt : workflowStarted).toISOString();
  const workerKey = { namespace: ref.namespace, name: workerStatefulSetName(ref.name, groupIndex) };
  let workersDeletedAt: string | undefined;
  const deleteWorkers = async (uid?: string) => {
    const outcome = await kube.deleteWorkerStatefulSet({
      ...workerKey,
      uid,
      ownerUid: leader.uid,
      propagationPolicy: 'Foreground',
    });
    if (outcome === 'deleted') workersDeletedAt = new Date().toISOString();
  };
  // Under Parallel every millisecond before the delete is teardown time, so it goes out first, in the same round as
  // the reads: a workflow task holds its slot while its local activities run, and in a burst of teardowns each round
  // is a second that other workflows wait. With the workers the trigger saw, the delete reads nothing (uid
  // preconditions keep it to those incarnations); without, it re-checks the policy and that the leader is terminating.
  const oneCall = patched(TEARDOWN_FIRST_ROUND_IN_ONE_CALL);
  const {
    deleted,
    lws,
    leaderPod,
    workerStatefulSet: sts,
    groupPods,
    leaderStatefulSet,
  } = oneCall
    ? await kube.beginTeardown({ ref, groupIndex, leader, policy: input.policy, workers: input.workers })
    : // Runs started before it: the same round as separate local activities, as their histories recorded it.
      await teardownFirstRound(kube, input, false);
  if (deleted === 'deleted') workersDeletedAt = new Date().toISOString();
  // Once the LWS is gone the policy is still on the terminating leader pod's annotation, and so it is for a leader of
  // an older LWS of that name (deleted and created again): the new one's spec is not its. Runs recorded before this
  // took the new LWS as the group's; only such a leader costs a patch marker.
  const olderLws =
    lws !== null &&
    leaderPod?.uid === leader.uid &&
    predatesLws(lws, leaderPod.createdAt) &&
    patched(POLICY_OF_ITS_OWN_LWS);
  const { policy, source } = resolvePodTerminationPolicy({
    lws: olderLws ? null : lws,
    leaderPod: asState(leaderPod),
  });
  // The trigger judged the lifecycle from its watches, which may not have shown the new spec yet (a scale-down or a
  // template change a moment before the leader went); these reads come after the leader's deletion. Only a different
  // judgement costs a patch marker, and runs recorded before it keep the trigger's. Only this leader's labels count
  // (a pod of its name may be its replacement), and a delete stays one (an LWS of that name may be a new one). A
  // group above the LWS's replicas that its leader StatefulSet still wants is a surge group, rebuilt.
  const leaderReplicas =
    leaderStatefulSet && leaderStatefulSet.ownerUid === lws?.metadata.uid ? leaderStatefulSet.replicas : undefined;
  const seen =
    leaderPod?.uid !== leader.uid || input.lifecycle === 'delete'
      ? input.lifecycle
      : lifecycleOf(lws, groupIndex, leaderPod, leaderReplicas);
  const lifecycle = seen !== input.lifecycle && patched(LIFECYCLE_FROM_FIRST_READS) ? seen : input.lifecycle;
  if (lifecycle !== input.lifecycle) timeline.title = title(lifecycle);
  // The trigger sets the policy and lifecycle it saw at the start; only a different one (the spec changed meanwhile,
  // or a start without them) costs an upsert. Deterministic: the start's attributes are in the history.
  if (input.searchAttributes) {
    const changed: SearchAttributePair[] = [];
    if (workflowInfo().typedSearchAttributes.get(TerminationPolicy) !== policy) {
      changed.push({ key: TerminationPolicy, value: policy });
    }
    if (lifecycle !== input.lifecycle) changed.push({ key: LifecycleAttribute, value: lifecycle });
    if (changed.length > 0) upsertSearchAttributes(changed);
  }
  // Only this leader's workers are ours to follow; a replacement group's StatefulSet is never touched.
  const ownSts = sts !== null && sts.ownerUid === leader.uid ? sts : null;
  const workerPods = ownSts ? groupPods.filter((p) => p.ownerUid === ownSts.uid) : [];

  if (ownSts && !workersDeletedAt) {
    const decision = decideWorkerTeardown({
      policy,
      leaderUid: leader.uid,
      leaderPod: asState(leaderPod),
      workerStatefulSet: asState(ownSts),
    });
    if (decision.action === 'delete') await deleteWorkers(decision.preconditionUid);
  }

  // An LWS created again under the group's name is not the group's: its Events would tell of groups it never had.
  const lwsUid = olderLws ? undefined : lws?.metadata.uid;
  const eventOf = (event: TimelineEvent, detail?: string): KubernetesEvent => ({
    lws: { ...ref, uid: lwsUid ?? '' },
    type: 'Normal',
    reason: eventReason(event),
    message: `group ${groupIndex} (${lifecycle}, ${policy}): ${event}${detail ? `: ${detail}` : ''}`,
  });
  /** A timeline entry, told as a Kubernetes Event on the LWS too, so `kubectl describe lws` tells the same story. */
  const step = async (event: TimelineEvent, at?: string, detail?: string) => {
    timeline.add(event, at, detail);
    if (!lwsUid) return; // the LWS is gone: there is nothing to attach an Event to
    await kube.recordEvent(eventOf(event, detail));
  };
  // The first entries: the leader terminating and, if the delete went out, the workers.
  const firstSteps: [TimelineEvent, string, string][] = [
    ['leader terminating', started, `${leader.name}; policy ${policy} from ${source}`],
  ];
  if (workersDeletedAt) {
    firstSteps.push([
      'workers terminating',
      workersDeletedAt,
      input.workers
        ? `foreground delete of the worker StatefulSet and its ${input.workers.pods.length} pods, as the trigger saw them`
        : 'foreground delete of the worker StatefulSet',
    ]);
  }
  if (oneCall) {
    for (const [event, at, detail] of firstSteps) timeline.add(event, at, detail);
    if (lwsUid) await kube.recordEvents(firstSteps.map(([event, , detail]) => eventOf(event, detail)));
  } else {
    await allSettledOrThrow(firstSteps.map(([event, at, detail]) => step(event, at, detail)));
  }
  await Promise.all([
    wait.waitForPodGone(leader).then((r) => step('leader gone', r.goneAt)),
    workerPods.length > 0
      ? wait.waitForPodsGone({ namespace: ref.namespace, pods: workerPods }).then(async (r) => {
          if (r.terminatingAt && !workersDeletedAt)
            await step('workers terminating', r.terminatingAt, 'garbage collector');
          await step('workers gone', r.goneAt);
        })
      : undefined,
    ownSts ? wait.waitForStatefulSetGone(ownSts).then((r) => step('old StatefulSet gone', r.goneAt)) : undefined,
  ]);
  const lastGone = [timeline.at('leader gone'), timeline.at('workers gone'), timeline.at('old StatefulSet gone')]
    .filter((t): t is string => t !== undefined)
    .sort()
    .pop();
  const result: TeardownGroupResult = {
    policy,
    lifecycle,
    teardownMs: lastGone ? Date.parse(lastGone) - Date.parse(started) : undefined,
    timeline: timeline.entries,
  };

  if (lifecycle === 'rebuild' && lws) {
    const size = applyDefaults(lws).spec.leaderWorkerTemplate.size;
    const replacementWait = patched(REPLACEMENT_WAIT_ENDS_FIRST) ? cancellableWait : wait;
    try {
      // Bounded: the LWS may be scaled down or deleted meanwhile, and then no replacement ever comes.
      const replacement = await CancellationScope.withTimeout(replacementTimeout, () =>
        replacementWait.waitForReplacementGroupReady({
          namespace: ref.namespace,
          leaderName: leaderPodName(ref.name, groupIndex),
          workerStatefulSetName: workerKey.name,
          previousLeaderUid: leader.uid,
          size,
          group: { lwsName: ref.name, groupIndex },
        }),
      );
      if ('notWanted' in replacement) {
        // Deleted (with its namespace, say) or scaled down while its group was torn down.
        timeline.add('skipped', undefined, `no replacement group: ${replacement.notWanted}`);
      } else {
        // creationTimestamp has whole seconds; the new leader (same name) cannot predate the old one's removal.
        const newLeaderAt = [replacement.leaderCreatedAt, timeline.at('leader gone') ?? ''].sort().pop();
        await step('new leader', newLeaderAt, replacement.leader.uid);
        result.recoveryMs = Date.parse(replacement.readyAt) - Date.parse(started);
        await step(
          'new group ready',
          replacement.readyAt,
          `teardown ${result.teardownMs} ms, recovery ${result.recoveryMs} ms`,
        );
      }
    } catch (err) {
      if (!isCancellation(err)) throw err;
      timeline.add('skipped', undefined, `no replacement group within ${replacementTimeout}`);
    }
  }
  result.timeline = timeline.entries;
  await kube.reportTeardown({ policy, lifecycle, teardownMs: result.teardownMs, recoveryMs: result.recoveryMs });
  return result;
}
