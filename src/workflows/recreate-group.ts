// Restart policy: a container of the group restarted, or one of its pods was deleted. Under
// RecreateGroupOnPodRestart (and RecreateGroupAfterStart once no pod of the group is Pending or missing, as upstream)
// the whole group is rebuilt by deleting its leader pod; the teardown that follows is an ordinary group rebuild.
// With spec.leaderWorkerTemplate.maxGroupRestarts, a group recreated that many times is left as it is instead, until
// the user annotates its leader to recover it (model/restart-budget.ts).
import {
  EVENT_REASONS,
  isDeleting,
  judgeGroupRestart,
  LABEL_TEMPLATE_REVISION_HASH,
  leaderStatefulSetName,
  restartCounts,
  restartKey,
  withRestartCount,
  type ObjectIdentity,
  type ObjectKey,
} from '../model/index.js';
import { kube } from './activities.js';
import { readLws } from './lws-io.js';
import { Timeline, type TimelineEntry } from './timeline.js';

export interface RecreateGroupInput {
  ref: ObjectKey;
  groupIndex: number;
  leader: ObjectIdentity;
  /** What the trigger saw, for the timeline and the Event: e.g. "container worker of demo-0-2 restarted". */
  reason: string;
  /** Every pod of the group exists and none is Pending, when the restart was seen (upstream's RecreateGroupAfterStart). */
  groupHadStarted: boolean;
  /** The user asked for this failed group to be rebuilt (the recover annotation): its count starts again. */
  recover?: boolean;
}

export interface RecreateGroupResult {
  outcome: 'recreated' | 'recovered' | 'failed' | 'ignored';
  timeline: TimelineEntry[];
}

export async function recreateGroup(input: RecreateGroupInput): Promise<RecreateGroupResult> {
  const { ref, groupIndex, leader, recover } = input;
  const timeline = new Timeline(
    `${recover ? 'recover' : 'recreate'} group ${groupIndex} of ${ref.namespace}/${ref.name}`,
  );
  const ignore = (why: string): RecreateGroupResult => {
    timeline.add('skipped', undefined, why);
    return { outcome: 'ignored', timeline: timeline.entries };
  };
  const lws = await readLws(ref);
  if (lws === null || lws.metadata.deletionTimestamp) return ignore('the LWS is gone');
  const { restartPolicy, maxGroupRestarts } = lws.spec.leaderWorkerTemplate;
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

  let count = 0;
  if (!recover) {
    const restarts = await kube.readGroupRestarts(leaderSet);
    const judged = judgeGroupRestart({
      maxGroupRestarts,
      count: restartCounts(restarts?.annotation)[restartKey(revision, groupIndex)] ?? 0,
      groupIndex,
      leaderName: leader.name,
    });
    if (!judged.recreate) {
      // Its pods stay as they are, for debugging; the status tells it (condition Failed).
      await kube.markGroupFailed({ leader, message: judged.message });
      await kube.recordEvent({
        lws: lwsIdentity,
        type: 'Warning',
        reason: EVENT_REASONS.maxGroupRestartsExceeded,
        message: `${input.reason}: ${judged.message}`,
      });
      timeline.add('restart budget spent', undefined, judged.message);
      return { outcome: 'failed', timeline: timeline.entries };
    }
    count = judged.count;
  }

  const outcome = await kube.deletePod(leader);
  if (outcome !== 'deleted') return ignore(`leader pod ${outcome}`);
  // Counted once the leader is deleted: a run that dies in between carries on here, from its history.
  await recordRestartCount(leaderSet, revision, groupIndex, count);
  const budget = maxGroupRestarts === undefined ? '' : ` (${count} of maxGroupRestarts ${maxGroupRestarts})`;
  timeline.add(recover ? 'group recovered' : 'group recreated', undefined, `${input.reason}${budget}`);
  await kube.recordEvent({
    lws: lwsIdentity,
    type: 'Normal',
    reason: recover ? EVENT_REASONS.groupRecovered : EVENT_REASONS.groupRecreated,
    message: recover
      ? `group ${groupIndex}: recovered on the user's request; deleted leader ${leader.name}, its restart count starts again`
      : `group ${groupIndex}: ${input.reason}; deleted leader ${leader.name} (${restartPolicy})${budget}`,
  });
  return { outcome: recover ? 'recovered' : 'recreated', timeline: timeline.entries };
}

/** Writes the group's count at the version just read; another group's write in between makes it read again. */
async function recordRestartCount(leaderSet: ObjectKey, revision: string, groupIndex: number, count: number) {
  for (;;) {
    const restarts = await kube.readGroupRestarts(leaderSet);
    if (restarts === null) return;
    const annotation = withRestartCount(restarts.annotation, revision, groupIndex, count);
    if (annotation === restarts.annotation) return;
    const written = await kube.writeGroupRestarts({
      leaderStatefulSet: leaderSet,
      annotation,
      resourceVersion: restarts.resourceVersion,
    });
    if (written !== 'conflict') return;
  }
}
