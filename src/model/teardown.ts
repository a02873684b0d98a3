// What a teardown decides from its first reads: the group's policy and lifecycle, the workers it follows, whether it
// deletes them, and whether the LWS of the group's name is the group's own.
import { leaderStatefulSetReplicas, lifecycleOf, predatesLws, type Lifecycle } from './lifecycle.js';
import type { ObjectIdentity, PodFacts, StatefulSetFacts } from './objects.js';
import { resolvePodTerminationPolicy, type ResolvedPolicy } from './policy.js';
import type { LeaderWorkerSet } from './types.js';

/** A teardown's first reads, made after the leader's deletion. */
export interface TeardownReads {
  lws: LeaderWorkerSet | null;
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
}

/**
 * The judgement, for a leader the trigger saw terminating with the lifecycle it judged from its watches (which may
 * lag the spec). Only this leader's own pod counts for the lifecycle, and a delete stays one: an LWS of that name
 * may be a new one. Parallel never deletes the workers of a leader that is not terminating, nor another leader's.
 */
export function judgeTeardown(
  group: { groupIndex: number; leader: ObjectIdentity; lifecycle: Lifecycle },
  reads: TeardownReads,
  workersDeleted: boolean,
): TeardownJudgement {
  const { lws } = reads;
  const leaderPod = reads.leaderPod?.uid === group.leader.uid ? reads.leaderPod : null;
  const lwsOfGroup = lws !== null && !(leaderPod && predatesLws(lws, leaderPod.createdAt)) ? lws : null;
  // lwsOfGroup has settled whose LWS it is: only the annotation is read from the pod.
  const annotations = reads.leaderPod?.annotations;
  const resolved = resolvePodTerminationPolicy({ lws: lwsOfGroup, leaderPod: annotations && { annotations } });

  const lifecycle =
    leaderPod === null || group.lifecycle === 'delete'
      ? group.lifecycle
      : lifecycleOf(
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
  };
}
