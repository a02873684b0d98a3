// What a teardown decides from its first reads: policy, lifecycle, its own workers, whether to delete them, its LWS.
import { ANNOTATION_RECREATE_REASON } from './labels.js';
import { groupLifecycle, leaderStatefulSetReplicas, predatesLws, type Lifecycle } from './lifecycle.js';
import type { LwsFacts } from './lws-facts.js';
import type { ObjectIdentity, PodFacts, StatefulSetFacts } from './objects.js';
import { resolvePodTerminationPolicy, type ResolvedPolicy } from './policy.js';

export interface TeardownReads {
  lws: LwsFacts | null;
  /** The pod of the leader's name: this leader, or already its replacement. */
  leaderPod: PodFacts | null;
  /** The StatefulSet of the group's worker name: this leader's, or already a replacement group's. */
  workerStatefulSet: StatefulSetFacts | null;
  groupPods: PodFacts[];
  /** Read only for a group the LWS's replicas do not cover: it may be a surge group the rollout keeps. */
  leaderStatefulSet?: StatefulSetFacts | null;
}

export interface TeardownJudgement extends ResolvedPolicy {
  lifecycle: Lifecycle;
  /** The uid of the LWS the group belongs to, for its Events; undefined once it is gone or was created again. */
  lwsUid?: string;
  /** This leader's worker StatefulSet and its pods; null when there is none (gone, or a replacement group's). */
  ownWorkers: { statefulSet: StatefulSetFacts; pods: PodFacts[] } | null;
  /** Parallel, and not deleted yet: delete this StatefulSet (its uid the precondition). */
  deleteWorkers?: ObjectIdentity;
  /** Why the restart policy recreated the group, as its recreate wrote it on the leader; absent for other deletions. */
  recreatedBecause?: string;
  /** The group's LWS opted in to force deletes on NotReady alone (dead-node.ts); read once, as the teardown starts. */
  forceDeleteOnNodeNotReadySeconds?: number;
}

/**
 * `group.lifecycle`: the trigger's, from watches that may lag. Only this leader's own pod counts, and a delete stays
 * one (the LWS of that name may be new). Parallel never deletes the workers of a leader not terminating, nor another's.
 */
export function judgeTeardown(
  group: { groupIndex: number; leader: ObjectIdentity; lifecycle: Lifecycle },
  reads: TeardownReads,
  workersDeleted: boolean,
): TeardownJudgement {
  const { lws } = reads;
  const leaderPod = reads.leaderPod?.uid === group.leader.uid ? reads.leaderPod : null;
  const lwsOfGroup = lws !== null && !(leaderPod && predatesLws(lws, leaderPod.createdAt)) ? lws : null;
  const recreatedBecause = leaderPod?.annotations[ANNOTATION_RECREATE_REASON];
  // Only the group's own LWS opts it in: one created again under its name may say otherwise.
  const notReadySeconds = lwsOfGroup?.spec.forceDeleteOnNodeNotReadySeconds;
  // lwsOfGroup has settled whose LWS it is: only the annotation is read from the pod.
  const annotations = reads.leaderPod?.annotations;
  const resolved = resolvePodTerminationPolicy({ lws: lwsOfGroup, leaderPod: annotations && { annotations } });

  const lifecycle =
    leaderPod === null || group.lifecycle === 'delete'
      ? group.lifecycle
      : groupLifecycle(
          lws,
          group.groupIndex,
          leaderPod,
          lws ? leaderStatefulSetReplicas(lws, reads.leaderStatefulSet) : undefined,
        );

  const sts = reads.workerStatefulSet?.ownerUid === group.leader.uid ? reads.workerStatefulSet : null;
  const ownWorkers = sts && { statefulSet: sts, pods: reads.groupPods.filter((p) => p.ownerUid === sts.uid) };
  const deletes =
    sts !== null &&
    !workersDeleted &&
    resolved.policy === 'Parallel' &&
    sts.deletionTimestamp === undefined &&
    leaderPod?.deletionTimestamp !== undefined;

  return {
    ...resolved,
    lifecycle,
    ...(lwsOfGroup?.metadata.uid !== undefined && { lwsUid: lwsOfGroup.metadata.uid }),
    ownWorkers,
    ...(deletes && { deleteWorkers: { namespace: sts.namespace, name: sts.name, uid: sts.uid } }),
    ...(notReadySeconds !== undefined && { forceDeleteOnNodeNotReadySeconds: notReadySeconds }),
    ...(recreatedBecause !== undefined && { recreatedBecause }),
  };
}
