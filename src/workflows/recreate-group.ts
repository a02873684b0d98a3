// Restart policy: a container of the group restarted, or one of its pods was deleted. Under
// RecreateGroupOnPodRestart (and RecreateGroupAfterStart once no pod of the group is Pending or missing, as upstream)
// the whole group is rebuilt by deleting its leader pod; the teardown that follows is an ordinary group rebuild.
import { EVENT_REASONS, type ObjectIdentity, type ObjectKey } from '../model/index.js';
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
}

export interface RecreateGroupResult {
  outcome: 'recreated' | 'ignored';
  timeline: TimelineEntry[];
}

export async function recreateGroup(input: RecreateGroupInput): Promise<RecreateGroupResult> {
  const { ref, groupIndex, leader } = input;
  const timeline = new Timeline(`recreate group ${groupIndex} of ${ref.namespace}/${ref.name}`);
  const ignore = (why: string): RecreateGroupResult => {
    timeline.add('skipped', undefined, why);
    return { outcome: 'ignored', timeline: timeline.entries };
  };
  const lws = await readLws(ref);
  if (lws === null || lws.metadata.deletionTimestamp) return ignore('the LWS is gone');
  const { restartPolicy } = lws.spec.leaderWorkerTemplate;
  if (restartPolicy === 'None') return ignore('restartPolicy None: only the pod restarts');
  const afterStart = restartPolicy === 'RecreateGroupAfterStart' || lws.recreateGroupAfterStart;
  if (afterStart && !input.groupHadStarted) {
    return ignore(`${restartPolicy} after start: a pod of the group is Pending or not created yet`);
  }
  const outcome = await kube.deletePod(leader);
  if (outcome !== 'deleted') return ignore(`leader pod ${outcome}`);
  timeline.add('group recreated', undefined, input.reason);
  await kube.recordEvent({
    lws: { ...ref, uid: lws.metadata.uid },
    type: 'Normal',
    reason: EVENT_REASONS.groupRecreated,
    message: `group ${groupIndex}: ${input.reason}; deleted leader ${leader.name} (${restartPolicy})`,
  });
  return { outcome: 'recreated', timeline: timeline.entries };
}
