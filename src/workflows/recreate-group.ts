// Restart policy: a container of the group restarted, or one of its pods was deleted. Under
// RecreateGroupOnPodRestart (and RecreateGroupAfterStart once no pod of the group is Pending or missing, as upstream)
// the whole group is rebuilt by deleting its leader pod; the teardown that follows is an ordinary group rebuild.
// With spec.leaderWorkerTemplate.maxGroupRestarts, a group recreated that many times is left as it is instead, until
// the user annotates its leader to recover it (model/restart-budget.ts). A group that fails again soon after its last
// recreation waits before it is recreated, on a timer of this workflow (model/recreate-backoff.ts).
import { sleep } from '@temporalio/workflow';
import {
  EVENT_REASONS,
  isDeleting,
  judgeBackoff,
  judgeGroupRestart,
  LABEL_TEMPLATE_REVISION_HASH,
  leaderStatefulSetName,
  ordinal,
  recreationsOf,
  restartCounts,
  restartKey,
  withRecreation,
  withRestartCount,
  type BackoffJudgement,
  type ObjectIdentity,
  type ObjectKey,
} from '../model/index.js';
import type { GroupRestarts } from '../activities/types.js';
import { kube } from './activities.js';
import { readLws } from './lws-io.js';
import { Timeline, type TimelineEntry } from './timeline.js';

/** What started a recreation: a container of `pod` restarted, worker `pod` was deleted, or the user's recover. */
export type RecreateCause = 'container-restart' | 'pod-deletion' | 'recover';

export interface RecreateGroupInput {
  ref: ObjectKey;
  groupIndex: number;
  leader: ObjectIdentity;
  cause: RecreateCause;
  /** The pod whose restart or deletion it is (the leader, for a recover). */
  pod: string;
  /** What the trigger saw, for the timeline and the Event: e.g. "a container of demo-0-2 restarted". */
  reason: string;
  /** Every pod of the group exists and none is Pending, when the restart was seen (upstream's RecreateGroupAfterStart). */
  groupHadStarted: boolean;
  /** The user asked for this failed group to be rebuilt (the recover annotation): its count starts again. */
  recover?: boolean;
}

export interface RecreateGroupResult {
  outcome: 'recreated' | 'recovered' | 'failed' | 'ignored';
  /** What the trigger saw (the input's cause, pod and reason), for the report of the group's rebuilds. */
  cause: RecreateCause;
  pod: string;
  reason: string;
  /** Restart budget: the group's count after this recreation, and spec.leaderWorkerTemplate.maxGroupRestarts. */
  restartCount?: number;
  maxGroupRestarts?: number;
  /** How long it waited (backoff between recreations of the group) before it deleted the leader. */
  backoffMs?: number;
  timeline: TimelineEntry[];
}

export async function recreateGroup(input: RecreateGroupInput): Promise<RecreateGroupResult> {
  const { ref, groupIndex, leader, recover, cause, pod, reason } = input;
  const timeline = new Timeline(
    `${recover ? 'recover' : 'recreate'} group ${groupIndex} of ${ref.namespace}/${ref.name}`,
  );
  const ignore = (why: string, more: Partial<RecreateGroupResult> = {}): RecreateGroupResult => {
    timeline.add('skipped', undefined, why);
    return { outcome: 'ignored', cause, pod, reason, ...more, timeline: timeline.entries };
  };
  const lws = await readLws(ref);
  if (lws === null || lws.metadata.deletionTimestamp) return ignore('the LWS is gone');
  const { restartPolicy, maxGroupRestarts, groupRestartBackoff } = lws.spec.leaderWorkerTemplate;
  if (!recover) {
    if (restartPolicy === 'None') return ignore('restartPolicy None: only the pod restarts');
    const afterStart = restartPolicy === 'RecreateGroupAfterStart' || lws.recreateGroupAfterStart;
    if (afterStart && !input.groupHadStarted) {
      return ignore(`${restartPolicy} after start: a pod of the group is Pending or not created yet`);
    }
  }
  const leaderNow = await kube.getPod(leader);
  // That incarnation only: a newer leader of the name is another group's life.
  if (leaderNow === null || leaderNow.uid !== leader.uid) return ignore('leader pod absent');
  if (isDeleting(leaderNow)) return ignore('leader pod already-deleting');
  const revision = leaderNow.labels[LABEL_TEMPLATE_REVISION_HASH] ?? '';
  const leaderSet = { namespace: ref.namespace, name: leaderStatefulSetName(ref.name) };
  const lwsIdentity = { ...ref, uid: lws.metadata.uid };
  const key = restartKey(revision, groupIndex);
  const budgetOf = (count: number) => (maxGroupRestarts === undefined ? {} : { restartCount: count, maxGroupRestarts });

  // Restart budget and backoff, from the group's record on the leader StatefulSet. A recover starts both again.
  const record = await kube.readGroupRestarts(leaderSet);
  let count = 0;
  let backoff: BackoffJudgement | undefined;
  if (!recover) {
    const judged = judgeGroupRestart({
      maxGroupRestarts,
      count: restartCounts(record?.counts)[key] ?? 0,
      groupIndex,
      leaderName: leader.name,
    });
    if (!judged.recreate) {
      // Its pods stay as they are, for debugging; the status shows it (condition Failed).
      await kube.markGroupFailed({ leader, message: judged.message });
      await kube.recordEvent({
        lws: lwsIdentity,
        type: 'Warning',
        reason: EVENT_REASONS.maxGroupRestartsExceeded,
        message: `${reason}: ${judged.message}`,
      });
      timeline.add('restart budget spent', undefined, judged.message);
      return {
        outcome: 'failed',
        cause,
        pod,
        reason,
        ...budgetOf(maxGroupRestarts ?? 0),
        timeline: timeline.entries,
      };
    }
    count = judged.count;
    backoff = judgeBackoff({
      last: recreationsOf(record?.recreations)[key],
      now: Date.now(),
      backoff: groupRestartBackoff,
    });
  }

  // Recorded before the wait: the status shows when the group is recreated, and the next failure counts from it.
  const deleteAt = new Date(Date.now() + (backoff?.delayMs ?? 0)).toISOString();
  const recreation = backoff && { at: deleteAt, streak: backoff.streak };
  await updateGroupRecord(leaderSet, record, (r) => {
    const recreations = withRecreation(r.recreations, revision, groupIndex, recreation);
    return recreations === (r.recreations ?? '{}') ? undefined : { recreations };
  });
  const backoffMs = backoff?.delayMs ?? 0;
  if (backoffMs > 0) {
    const wait = `${ordinal(backoff!.streak)} recreation in a row: waiting ${backoffMs / 1000} s before deleting leader ${leader.name} (groupRestartBackoff)`;
    timeline.add('backing off', undefined, `${reason}; ${wait}, until ${deleteAt}`);
    await kube.recordEvent({
      lws: lwsIdentity,
      type: 'Warning',
      reason: EVENT_REASONS.groupRecreateBackOff,
      message: `group ${groupIndex}: ${reason}; ${wait}`,
    });
    await sleep(backoffMs, {
      summary: `backoff before the ${ordinal(backoff!.streak)} recreation of group ${groupIndex}`,
    });
    // A scale-down, a rolling update or a user may have replaced the leader meanwhile: its group is no longer this one.
    const after = await kube.getPod(leader);
    if (after === null || after.uid !== leader.uid || isDeleting(after)) {
      return ignore('leader pod deleted or replaced during the backoff', { backoffMs });
    }
  }

  // Why, on the leader as it goes: the teardown that follows shows it (its timeline, its first Event).
  const budget = maxGroupRestarts === undefined ? '' : ` (${count} of maxGroupRestarts ${maxGroupRestarts})`;
  const waited = backoffMs > 0 ? `, after a ${backoffMs / 1000} s backoff` : '';
  if (!(await kube.markGroupRecreated({ leader, reason: `${reason}${budget}${waited}` }))) {
    return ignore('leader pod absent', { backoffMs });
  }
  const outcome = await kube.deletePod(leader);
  if (outcome !== 'deleted') return ignore(`leader pod ${outcome}`, { backoffMs });
  // Counted once the leader is deleted: a run that dies in between carries on here, from its history.
  await updateGroupRecord(leaderSet, undefined, (r) => {
    const counts = withRestartCount(r.counts, revision, groupIndex, count);
    return counts === r.counts ? undefined : { counts };
  });
  timeline.add(recover ? 'group recovered' : 'group recreated', undefined, `${reason}${budget}`);
  await kube.recordEvent({
    lws: lwsIdentity,
    type: 'Normal',
    reason: recover ? EVENT_REASONS.groupRecovered : EVENT_REASONS.groupRecreated,
    message: recover
      ? `group ${groupIndex}: recovered on the user's request; deleted leader ${leader.name}, its restart count starts again`
      : `group ${groupIndex}: ${reason}; deleted leader ${leader.name} (${restartPolicy})${budget}`,
  });
  return {
    outcome: recover ? 'recovered' : 'recreated',
    cause,
    pod,
    reason,
    ...budgetOf(count),
    ...(backoffMs > 0 && { backoffMs }),
    timeline: timeline.entries,
  };
}

/**
 * Writes the group's record at the version read (`read`, else read now); another group's write in between makes it
 * read again. `change` returns the annotations to write, or undefined when they already say it.
 */
async function updateGroupRecord(
  leaderSet: ObjectKey,
  read: GroupRestarts | null | undefined,
  change: (record: GroupRestarts) => Pick<GroupRestarts, 'counts' | 'recreations'> | undefined,
): Promise<void> {
  let record = read;
  for (;;) {
    record ??= await kube.readGroupRestarts(leaderSet);
    if (record === null) return;
    const annotations = change(record);
    if (annotations === undefined) return;
    const written = await kube.writeGroupRestarts({
      leaderStatefulSet: leaderSet,
      ...annotations,
      resourceVersion: record.resourceVersion,
    });
    if (written !== 'conflict') return;
    record = undefined;
  }
}
