// Tears down one group whose leader pod is terminating (deleted, recreated after a restart, scaled down, rolled, or
// its LWS deleted), as spec.podTerminationPolicy says:
//   Sequential: observe only. The leader terminates; once it is gone the garbage collector removes the workers.
//   Parallel:   foreground-delete the worker StatefulSet at once, so leader and workers terminate together.
// Then it follows the group until its pods are gone and, for a rebuild, until the replacement group is ready. A pod
// stuck Terminating on a dead node is force-deleted once its grace period is over (model/dead-node.ts).
import type { SearchAttributePair } from '@temporalio/common';
import { ActivityFailure, TimeoutFailure, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import {
  judgeTeardown,
  leaderPodName,
  workerStatefulSetName,
  type Lifecycle,
  type LwsFacts,
  type ObjectIdentity,
  type ObjectKey,
  type PodTerminationPolicy,
  type TeardownJudgement,
} from '../model/index.js';
import type { SeenWorkers, StuckResult } from '../activities/types.js';
import { kube, REPLACEMENT_TIMEOUT, replacementWait, reportWait } from './activities.js';
import { Lifecycle as LifecycleAttribute, TerminationPolicy } from './search-attributes.js';
import { TeardownTimeline, type Step } from './teardown-timeline.js';
import { latestOf } from '../shared/instants.js';
import type { TimelineEntry } from './timeline.js';

export interface TeardownGroupInput {
  ref: ObjectKey;
  groupIndex: number;
  /** The terminating leader pod (this incarnation of the group). */
  leader: ObjectIdentity;
  /** As the trigger judged it from its watches; judged again from the first reads. */
  lifecycle: Lifecycle;
  /** Whether the server has this project's search attributes registered (the trigger checks at start). */
  searchAttributes?: boolean;
  /** The policy as the trigger knew it when it saw the leader terminating. */
  policy?: PodTerminationPolicy;
  /** Parallel: the worker StatefulSet this leader controlled and its pods, as the trigger saw them. */
  workers?: SeenWorkers;
  /** When the leader's deletion was made (RFC 3339), as the trigger knows it; else the workflow's start. */
  leaderDeletedAt?: string;
}

export interface TeardownGroupResult {
  policy: PodTerminationPolicy;
  lifecycle: Lifecycle;
  /** Leader terminating -> last old pod gone, in ms. */
  teardownMs?: number;
  /** Leader terminating -> replacement group ready, in ms (rebuilds only). */
  recoveryMs?: number;
  /** Pods stuck on a dead node that the teardown force-deleted, each with its node and why; absent when none. */
  forceDeleted?: ForceDeletedPod[];
  timeline: TimelineEntry[];
}

export interface ForceDeletedPod {
  pod: string;
  node: string;
  /** `node gone`, `node tainted out-of-service` or `node NotReady for N s (...)`. */
  signal: string;
}

export async function teardownGroup(input: TeardownGroupInput): Promise<TeardownGroupResult> {
  const { ref, groupIndex, leader } = input;
  const started = startOf(input);
  const timeline = new TeardownTimeline(ref, groupIndex, input.lifecycle);

  // Under Parallel every millisecond before the delete is teardown time: the workers the trigger saw go in the same
  // round as the reads.
  const seen = input.policy === 'Parallel' ? input.workers : undefined;
  const first = await kube.beginTeardown({ ref, groupIndex, leader, ...(seen && { deleteWorkers: seen }) });
  let workersDeletedAt = first.deleted === 'deleted' ? new Date().toISOString() : undefined;
  const judged = judgeTeardown(input, first, workersDeletedAt !== undefined);
  timeline.setJudgement(judged);
  if (input.searchAttributes) recordJudgement(input, judged);
  if (judged.deleteWorkers && (await deleteWorkers(judged.deleteWorkers, leader)) === 'deleted') {
    workersDeletedAt = new Date().toISOString();
  }
  await timeline.record(...firstSteps(started, leader, judged, workersDeletedAt, seen));

  const forceDeleted: ForceDeletedPod[] = [];
  const workersDeleted = workersDeletedAt !== undefined;
  const teardownMs = await oldGroupGone(timeline, leader, judged, workersDeleted, started, forceDeleted);
  const recoveryMs =
    judged.lifecycle === 'rebuild' && first.lws
      ? await replacementReady(timeline, input, first.lws, started, teardownMs)
      : undefined;

  await kube.reportTeardown({ policy: judged.policy, lifecycle: judged.lifecycle, teardownMs, recoveryMs });
  return {
    policy: judged.policy,
    lifecycle: judged.lifecycle,
    teardownMs,
    recoveryMs,
    ...(forceDeleted.length > 0 && { forceDeleted }),
    timeline: timeline.entries,
  };
}

/** The leader's deletion as the trigger passed it, never after the workflow's start (its clock may run ahead). */
function startOf(input: TeardownGroupInput): string {
  const workflowStarted = Date.now();
  const deletedAt = input.leaderDeletedAt ? Date.parse(input.leaderDeletedAt) : NaN;
  return new Date(deletedAt < workflowStarted ? deletedAt : workflowStarted).toISOString();
}

/** The trigger started the run with the policy and lifecycle it saw: only a different judgement costs an upsert. */
function recordJudgement(input: TeardownGroupInput, judged: TeardownJudgement): void {
  const changed: SearchAttributePair[] = [];
  if (workflowInfo().typedSearchAttributes.get(TerminationPolicy) !== judged.policy) {
    changed.push({ key: TerminationPolicy, value: judged.policy });
  }
  if (judged.lifecycle !== input.lifecycle) changed.push({ key: LifecycleAttribute, value: judged.lifecycle });
  if (changed.length > 0) upsertSearchAttributes(changed);
}

function deleteWorkers(statefulSet: ObjectIdentity, leader: ObjectIdentity) {
  return kube.deleteWorkerStatefulSet({ ...statefulSet, ownerUid: leader.uid, propagationPolicy: 'Foreground' });
}

/** The leader terminating and, if the delete went out, its workers: the teardown's first steps. */
function firstSteps(
  started: string,
  leader: ObjectIdentity,
  judged: TeardownJudgement,
  workersDeletedAt: string | undefined,
  seen: SeenWorkers | undefined,
): Step[] {
  const steps: Step[] = [
    {
      step: 'leader terminating',
      at: started,
      detail:
        `${leader.name}; policy ${judged.policy} from ${judged.source}` +
        (judged.recreatedBecause ? `; recreated by the restart policy: ${judged.recreatedBecause}` : ''),
    },
  ];
  if (workersDeletedAt) {
    const detail = seen
      ? `foreground delete of the worker StatefulSet and its ${seen.pods.length} pods, as the trigger saw them`
      : 'foreground delete of the worker StatefulSet';
    steps.push({ step: 'workers terminating', at: workersDeletedAt, detail });
  }
  return steps;
}

/**
 * Old group gone: the leader, this leader's worker pods and its StatefulSet, each recorded as it goes. Resolves with
 * the teardown's length, from the leader's deletion to the last of them.
 */
async function oldGroupGone(
  timeline: TeardownTimeline,
  leader: ObjectIdentity,
  { ownWorkers, forceDeleteOnNodeNotReadySeconds }: TeardownJudgement,
  workersDeleted: boolean,
  started: string,
  forceDeleted: ForceDeletedPod[],
): Promise<number | undefined> {
  const workerPods = ownWorkers?.pods ?? [];
  // Whether NotReady alone lets the pod waits name a pod stuck (model/dead-node.ts): only where the LWS opted in.
  const deadNodes = forceDeleteOnNodeNotReadySeconds === undefined ? {} : { forceDeleteOnNodeNotReadySeconds };
  const untilGone = goneOrForceDeleted(timeline, forceDeleted);
  // Each wait records its steps' Events as it ends: the task its result starts makes no call.
  const byCollector: Step = { step: 'workers terminating', detail: 'garbage collector' };
  const workersGone: Step = { step: 'workers gone' };
  let workersTerminatingAt: string | undefined;
  await Promise.all([
    untilGone(() =>
      reportWait.waitForPodGone({ ...leader, ...deadNodes, ...timeline.eventsForWait({ step: 'leader gone' }) }),
    ).then((r) => timeline.add({ step: 'leader gone', at: r.goneAt })),
    workerPods.length > 0 &&
      untilGone(async () => {
        const r = await reportWait.waitForPodsGone({
          namespace: leader.namespace,
          pods: workerPods,
          ...deadNodes,
          ...timeline.eventsForWait(...(workersDeleted ? [workersGone] : [byCollector, workersGone])),
        });
        workersTerminatingAt ??= r.terminatingAt;
        return r;
      }).then((r) => {
        if (workersTerminatingAt && !workersDeleted) timeline.add({ ...byCollector, at: workersTerminatingAt });
        timeline.add({ ...workersGone, at: r.goneAt });
      }),
    ownWorkers &&
      reportWait
        .waitForStatefulSetGone({
          ...ownWorkers.statefulSet,
          ...timeline.eventsForWait({ step: 'old StatefulSet gone' }),
        })
        .then((r) => timeline.add({ step: 'old StatefulSet gone', at: r.goneAt })),
  ]);
  const lastGone = timeline.latest('leader gone', 'workers gone', 'old StatefulSet gone');
  return lastGone === undefined ? undefined : Date.parse(lastGone) - Date.parse(started);
}

/**
 * A pod wait, made again each time it ends on pods stuck on a dead node: those are force-deleted, by uid, and recorded
 * as a Warning on the timeline and on the LWS.
 */
function goneOrForceDeleted(timeline: TeardownTimeline, forceDeleted: ForceDeletedPod[]) {
  return async <R extends object>(waitOnce: () => Promise<R | StuckResult>): Promise<R> => {
    for (;;) {
      const result = await waitOnce();
      if (!isStuck(result)) return result;
      const { at, deleted } = await kube.forceDeletePods({ pods: result.stuck });
      forceDeleted.push(...deleted.map(({ pod, node, signal }) => ({ pod: pod.name, node, signal })));
      await timeline.record(
        ...deleted.map(({ pod, node, signal }): Step => ({
          step: 'pod force-deleted',
          at,
          detail: `${pod.name} on node ${node}: ${signal}`,
        })),
      );
    }
  };
}

const isStuck = <R extends object>(result: R | StuckResult): result is StuckResult => 'stuck' in result;

/**
 * Replacement ready: the group's next incarnation, leader and workers. Bounded: the LWS may be scaled down or
 * deleted meanwhile, and then no replacement ever comes. Resolves with the recovery's length, if one came.
 */
async function replacementReady(
  timeline: TeardownTimeline,
  { ref, groupIndex, leader }: TeardownGroupInput,
  lws: LwsFacts,
  started: string,
  teardownMs: number | undefined,
): Promise<number | undefined> {
  try {
    const replacement = await replacementWait.waitForReplacementGroupReady({
      namespace: ref.namespace,
      leaderName: leaderPodName(ref.name, groupIndex),
      workerStatefulSetName: workerStatefulSetName(ref.name, groupIndex),
      previousLeaderUid: leader.uid,
      size: lws.spec.leaderWorkerTemplate.size,
      group: { lwsName: ref.name, groupIndex },
    });
    if ('notWanted' in replacement) {
      timeline.skipped(`no replacement group: ${replacement.notWanted}`);
      return undefined;
    }
    // creationTimestamp has whole seconds; the new leader (same name) cannot predate the old one's removal.
    const newLeaderAt = latestOf([replacement.leaderCreatedAt, timeline.at('leader gone')]);
    const recoveryMs = Date.parse(replacement.readyAt) - Date.parse(started);
    await timeline.record(
      { step: 'new leader', at: newLeaderAt, detail: replacement.leader.uid },
      {
        step: 'new group ready',
        at: replacement.readyAt,
        detail: `teardown ${teardownMs} ms, recovery ${recoveryMs} ms`,
      },
    );
    return recoveryMs;
  } catch (err) {
    if (!outOfTime(err)) throw err;
    timeline.skipped(`no replacement group within ${REPLACEMENT_TIMEOUT}`);
    return undefined;
  }
}

const outOfTime = (err: unknown) =>
  err instanceof ActivityFailure &&
  err.cause instanceof TimeoutFailure &&
  err.cause.timeoutType === 'SCHEDULE_TO_CLOSE';
