// One group's worker StatefulSet, owned by its leader pod, plus what goes with it: the leader pod's group labels and
// termination policy annotation, and, under UniquePerReplica, the group's own headless Service.
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import {
  controllerUid,
  applyDefaults,
  describeNameHolder,
  heldByAnotherLws,
  inForegroundDeletion,
  buildGroupService,
  buildWorkerStatefulSet,
  LABEL_GROUP_INDEX,
  LABEL_NAME,
  leaderPodPatch,
  revisionKey,
  workerStatefulSetName,
  type LeaderWorkerSet,
  type ObjectIdentity,
  type PodTerminationPolicyValue,
} from '../model/index.js';
import { groupKey } from '../shared/group-keys.js';
import type { KubeClients } from './clients.js';
import { orNull } from './kube-errors.js';
import { podsOfNames } from './pods-of-names.js';
import { patchLeaderPod } from './leader-pods.js';
import { ensureService } from './services.js';
import { createOrRead } from './create-or-read.js';
import { dropForegroundHold } from './deletes.js';
import { lwsAtLeaderRevision } from './controller-revisions.js';
import type { EnsureWorkerStatefulSetResult, WorkerStatefulSetInput } from './types.js';

/**
 * `namesFree`: no pod holds the names. An older incarnation of the group's StatefulSet that only its foreground
 * deletion keeps is then released and the create made again, in this call: the garbage collector would remove it only
 * on its next pass after the last pod, seconds later under load, and a wait and a release after it cost the
 * provisioning two more turns through Temporal (docs/architecture.md, "Design rationale").
 */
async function createOrInspect(
  c: KubeClients,
  built: V1StatefulSet,
  leaderUid: string,
  namesFree: boolean,
): Promise<EnsureWorkerStatefulSetResult> {
  const got = await createOrRead(
    built,
    (ns) => c.statefulSets.create(ns, built),
    (key) => c.statefulSets.read(key),
  );
  if ('created' in got) return { outcome: 'created', uid: got.created.metadata?.uid ?? '' };
  const { metadata } = got.live;
  const uid = metadata?.uid ?? '';
  const ownerUid = controllerUid(metadata);
  const deleting = Boolean(metadata?.deletionTimestamp);
  // Ours but being deleted counts as blocked too: a new one can only be created once it is gone.
  if (ownerUid === leaderUid && !deleting) return { outcome: 'exists', uid };
  const held = ownerUid !== leaderUid && inForegroundDeletion(metadata);
  if (namesFree && held && !heldByAnotherLws(metadata)) {
    const target = { namespace: metadata?.namespace ?? '', name: metadata?.name ?? '', uid };
    // Best effort, as the workflow's own release: on any error the group waits for the garbage collector.
    const released = await dropForegroundHold(c, target).catch(() => undefined);
    if (released !== undefined) {
      const again = await createOrInspect(c, built, leaderUid, false);
      return again.outcome === 'created' ? { ...again, released: uid } : again;
    }
  }
  const takenBy = heldByAnotherLws(metadata) ? { takenBy: describeNameHolder(metadata) } : {};
  return ownerUid === undefined
    ? { outcome: 'blocked', uid, deleting, ...takenBy }
    : { outcome: 'blocked', uid, ownerUid, deleting, ...takenBy };
}

/** The create goes ahead over names that these pods of an older incarnation, their StatefulSet gone, still hold. */
interface CreateOverOldPods {
  oldPods: ObjectIdentity[];
}

/**
 * When pods hold the names, they decide. All of this leader's live StatefulSet: `exists`. Another incarnation's whose
 * StatefulSet is still there: `blocked` until it goes (under Parallel its foreground deletion keeps it until its pods
 * are gone). Theirs gone already (Sequential: the garbage collector removes it before its pods): the create goes
 * ahead, as upstream's does, and the StatefulSet controller makes the new pods as the old ones go.
 */
async function judgedByPods(
  c: KubeClients,
  built: V1StatefulSet,
  leaderUid: string,
  pods: V1Pod[],
): Promise<EnsureWorkerStatefulSetResult | CreateOverOldPods | undefined> {
  if (pods.length === 0) return undefined;
  const namespace = built.metadata?.namespace ?? '';
  const live = await orNull(() => c.statefulSets.read({ namespace, name: built.metadata?.name ?? '' }));
  const liveUid = live?.metadata?.uid;
  const ours = live !== null && controllerUid(live.metadata) === leaderUid && !live.metadata?.deletionTimestamp;
  const left = pods.filter((p) => !ours || controllerUid(p.metadata) !== liveUid);
  // Ours made already (a retried create) counts as made, whoever's pods still go.
  if (left.length === 0 || ours) return { outcome: 'exists', uid: liveUid ?? '' };
  const identities = left.map((p) => ({ namespace, name: p.metadata?.name ?? '', uid: p.metadata?.uid ?? '' }));
  const uid = controllerUid(left[0]!.metadata) ?? '';
  if (live === null || liveUid !== uid) return { oldPods: identities };
  const ownerUid = controllerUid(live.metadata);
  return {
    outcome: 'blocked',
    uid,
    ...(ownerUid !== undefined && { ownerUid }),
    deleting: Boolean(live.metadata?.deletionTimestamp),
    pods: identities,
  };
}

/**
 * The LWS as of the leader's revision, and the hash the workers are labelled with. One revision per group: a leader
 * kept on an older template (below the partition, or not yet rolled) gets workers of that template. With no revision
 * left for it, the spec as it is, labelled as such (the rollout then replaces the group).
 */
async function groupTemplates(
  c: KubeClients,
  lws: LeaderWorkerSet,
  revision: string | undefined,
): Promise<{ source: LeaderWorkerSet; revisionHash: string }> {
  const current = revisionKey(lws);
  if (revision === undefined || revision === current) return { source: lws, revisionHash: current };
  const atRevision = await lwsAtLeaderRevision(c, lws, revision);
  return atRevision === null ? { source: lws, revisionHash: current } : { source: atRevision, revisionHash: revision };
}

/** The group's first round: the leader's patch, and who holds the worker pod names, read along with it. */
export interface LeaderFirst {
  patched: boolean;
  /** Undefined when the names were not looked at (no workers decided on). */
  pods?: V1Pod[];
}

/**
 * The leader first: its group labels and the termination policy are in place before any worker exists. It needs only
 * the policy, not the templates, so it can go along with the LWS's read, and a rebuild's provisioning pays no round trip.
 * `withWorkers`: the group has worker pod names to check (size above 1).
 */
export async function leaderFirst(
  c: KubeClients,
  { lwsName, groupIndex, leader }: { lwsName: string; groupIndex: number; leader: ObjectIdentity },
  { podTerminationPolicy, withWorkers }: { podTerminationPolicy: PodTerminationPolicyValue; withWorkers: boolean },
): Promise<LeaderFirst> {
  const patch = leaderPodPatch({ groupIndex, groupKey: groupKey(leader.namespace, leader.name), podTerminationPolicy });
  const workers = { namespace: leader.namespace, name: workerStatefulSetName(lwsName, groupIndex) };
  const labels = { [LABEL_NAME]: lwsName, [LABEL_GROUP_INDEX]: String(groupIndex) };
  const [patched, pods] = await Promise.all([
    patchLeaderPod(c, leader, patch),
    withWorkers ? podsOfNames(c, workers, labels, 1) : undefined,
  ]);
  return { patched, pods };
}

/** `pods`: who holds the worker pod names, when they were looked at. */
async function createUnlessHeld(
  c: KubeClients,
  built: V1StatefulSet,
  leaderUid: string,
  pods: V1Pod[] | undefined,
): Promise<EnsureWorkerStatefulSetResult> {
  const judged = await judgedByPods(c, built, leaderUid, pods ?? []);
  if (judged !== undefined && !('oldPods' in judged)) return judged;
  const made = await createOrInspect(c, built, leaderUid, pods !== undefined && judged === undefined);
  return judged !== undefined && made.outcome === 'created' ? { ...made, oldPods: judged.oldPods } : made;
}

/** `first`: the leader's round, made already with this LWS's policy. */
export async function ensureWorkerStatefulSet(
  c: KubeClients,
  input: WorkerStatefulSetInput<LeaderWorkerSet>,
  first?: LeaderFirst,
): Promise<EnsureWorkerStatefulSetResult> {
  const { lws, groupIndex, leader, topology } = input;
  const { source, revisionHash } = await groupTemplates(c, lws, input.revision);
  const leaderPod = { name: leader.name, uid: leader.uid };
  const built = buildWorkerStatefulSet(source, {
    groupIndex,
    leaderPod,
    groupKey: groupKey(leader.namespace, leader.name),
    revisionHash,
    ...(topology && { topology }),
  });
  const { patched, pods } =
    first ??
    (await leaderFirst(
      c,
      { lwsName: lws.metadata.name ?? '', groupIndex, leader },
      { podTerminationPolicy: applyDefaults(lws).spec.podTerminationPolicy, withWorkers: built !== undefined },
    ));
  if (!patched) return { outcome: 'leader-gone' };
  const result =
    built === undefined ? { outcome: 'not-needed' as const } : await createUnlessHeld(c, built, leader.uid, pods);
  // The group Service only once the name is ours: a blocked group's old Service is still the old leader's.
  if (result.outcome !== 'blocked') {
    const service = buildGroupService(source, groupIndex, leaderPod);
    if (service !== undefined) await ensureService(c, service, { kind: 'Pod', uid: leader.uid });
  }
  return result;
}
