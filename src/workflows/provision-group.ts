// Provisions one incarnation of a group: once its leader pod exists (or is Ready, under LeaderReady), create the
// worker StatefulSet owned by that leader. If an old group's worker StatefulSet still holds the name, wait until it
// is gone first (safe rebuild), then create, exactly once.
import { applyDefaults, workerStatefulSetName, type ObjectKey, type ObjectIdentity } from '../model/index.js';
import { kube, wait } from './activities.js';
import { isNamespaceTerminating } from './failures.js';
import { Timeline, type TimelineEntry } from './timeline.js';

export interface ProvisionGroupInput {
  ref: ObjectKey;
  groupIndex: number;
  leader: ObjectIdentity;
}

export interface ProvisionGroupResult {
  outcome: 'provisioned' | 'already-provisioned' | 'leader-gone' | 'lws-gone';
  timeline: TimelineEntry[];
}

export async function provisionGroup(input: ProvisionGroupInput): Promise<ProvisionGroupResult> {
  const timeline = new Timeline(`provision group ${input.groupIndex} of ${input.ref.namespace}/${input.ref.name}`);
  const done = (outcome: ProvisionGroupResult['outcome'], detail?: string): ProvisionGroupResult => {
    if (outcome !== 'provisioned') timeline.add('skipped', undefined, detail ?? outcome);
    return { outcome, timeline: timeline.entries };
  };
  try {
    return await provision(input, timeline, done);
  } catch (err) {
    // Deleting a namespace deletes its LWS: the group is going, not failing.
    if (isNamespaceTerminating(err)) return done('lws-gone', 'its namespace is being deleted');
    throw err;
  }
}

async function provision(
  { ref, groupIndex, leader }: ProvisionGroupInput,
  timeline: Timeline,
  done: (outcome: ProvisionGroupResult['outcome'], detail?: string) => ProvisionGroupResult,
): Promise<ProvisionGroupResult> {
  timeline.add('new leader', undefined, leader.name);

  let lws = await kube.getLeaderWorkerSet(ref);
  if (lws === null || lws.metadata.deletionTimestamp) return done('lws-gone');
  const spec = applyDefaults(lws).spec;

  if (spec.startupPolicy === 'LeaderReady') {
    const ready = await wait.waitForPodReady(leader);
    if ('goneAt' in ready) return done('leader-gone');
    timeline.add('leader ready', ready.readyAt);
  }

  const workers = { namespace: ref.namespace, name: workerStatefulSetName(ref.name, groupIndex) };
  let createdUid: string | undefined;
  for (;;) {
    const pod = await kube.getPod(leader);
    if (pod === null || pod.uid !== leader.uid || pod.deletionTimestamp) return done('leader-gone');
    const result = await kube.ensureWorkerStatefulSet({ lws, groupIndex, leader });
    if (result.outcome === 'leader-gone') return done('leader-gone');
    if (result.outcome === 'not-needed') break;
    if (result.outcome !== 'blocked') {
      if (result.outcome === 'exists') return done('already-provisioned', 'this leader already has its workers');
      createdUid = result.uid;
      break;
    }
    // Safe rebuild: an old group's StatefulSet, or its pods, hold the names; ours would collide with them.
    const left = result.pods?.length ? `; ${result.pods.length} of its pods still terminating` : '';
    timeline.add('waiting for old StatefulSet', undefined, `owned by ${result.ownerUid ?? 'unknown'}${left}`);
    const gone = await wait.waitForStatefulSetGone({ ...workers, uid: result.uid, pods: result.pods ?? [] });
    timeline.add('old StatefulSet gone', gone.goneAt);
    // The wait can last a grace period or more: build from the LWS as it is now (a policy switch, a new template).
    lws = await kube.getLeaderWorkerSet(ref);
    if (lws === null || lws.metadata.deletionTimestamp) return done('lws-gone');
  }
  timeline.add('workers created', undefined, spec.leaderWorkerTemplate.size > 1 ? workers.name : 'size 1: no workers');
  if (createdUid) {
    // Once the workers exist, each gets its worker-index label (the shared pod template cannot carry it).
    const statefulSet = { ...workers, uid: createdUid };
    const ready = await wait.waitForStatefulSetReady(statefulSet);
    if ('readyAt' in ready) {
      await kube.labelWorkerPods({ lwsName: ref.name, statefulSet });
      timeline.add('new group ready', ready.readyAt);
    }
  }

  await kube.recordEvent({
    lws: { ...ref, uid: lws.metadata.uid ?? '' },
    type: 'Normal',
    reason: 'GroupProvisioned',
    message: `group ${groupIndex}: leader ${leader.name} (${leader.uid}) with ${spec.leaderWorkerTemplate.size - 1} workers`,
  });
  return done('provisioned');
}
