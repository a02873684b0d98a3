// The reconcile's rules before patch `upstream-semantics` (issue 26): the rollout plan and the status of reconcile runs
// that started on an earlier build. Such a run keeps them to its end (replay must see the same commands); a new run
// uses rollout.ts and status.ts. Remove with the patch, once no run older than it is left (docs/operations.md, "For
// developers: changing workflow code").
import { applyDefaults } from './defaults.js';
import { LABEL_TEMPLATE_REVISION_HASH } from './labels.js';
import { CONDITION_NAME_CONFLICT } from './name-conflicts.js';
import { parseGroupIndex, workerStatefulSetName } from './names.js';
import { isDeleting, selectors, type PodFacts, type StatefulSetFacts } from './objects.js';
import { templateRevisionHash } from './revision.js';
import { effectiveMaxSurge, effectiveMaxUnavailable } from './rollout.js';
import type { Condition, DefaultedLeaderWorkerSetSpec, LeaderWorkerSet, LeaderWorkerSetStatus } from './types.js';

export type LeaderFactsV1 = Pick<PodFacts, 'name' | 'uid' | 'labels' | 'ready' | 'deletionTimestamp'>;

export type WorkerSetFactsV1 = Pick<StatefulSetFacts, 'name' | 'ownerUid' | 'readyReplicas' | 'deletionTimestamp'>;

/** Per group index: does it exist, is it ready (leader Ready and every worker ready), is it on the current revision. */
export interface GroupStateV1 {
  groupIndex: number;
  ready: boolean;
  updated: boolean;
  terminating: boolean;
}

export function groupStatesV1(
  lws: LeaderWorkerSet,
  leaders: LeaderFactsV1[],
  workerSets: WorkerSetFactsV1[],
): GroupStateV1[] {
  const d = applyDefaults(lws);
  const name = d.metadata.name ?? '';
  const size = d.spec.leaderWorkerTemplate.size;
  const revision = templateRevisionHash(d.spec);
  const states: GroupStateV1[] = [];
  for (const leader of leaders) {
    const groupIndex = parseGroupIndex(name, leader.name);
    if (groupIndex === undefined) continue;
    const workers = workerSets.find(
      (s) => s.name === workerStatefulSetName(name, groupIndex) && s.ownerUid === leader.uid && !isDeleting(s),
    );
    const workersReady = size === 1 || (workers !== undefined && workers.readyReplicas >= size - 1);
    const terminating = isDeleting(leader);
    states.push({
      groupIndex,
      terminating,
      ready: leader.ready && workersReady && !terminating,
      updated: leader.labels[LABEL_TEMPLATE_REVISION_HASH] === revision,
    });
  }
  return states.sort((a, b) => a.groupIndex - b.groupIndex);
}

function conditionV1(
  type: string,
  on: boolean,
  reason: string,
  message: string,
  previous: Condition[] | undefined,
  now: string,
  generation: number | undefined,
): Condition {
  const status = on ? 'True' : 'False';
  const before = previous?.find((c) => c.type === type);
  // lastTransitionTime moves only when the status flips, as for every Kubernetes condition.
  const lastTransitionTime = before && before.status === status ? before.lastTransitionTime : now;
  return { type, status, reason, message, lastTransitionTime, observedGeneration: generation };
}

/** UpdateInProgress's reason while the controller steers a rollout: a new generation's reconcile reads it to go on. */
export const REASON_ROLLING_UPDATE_V1 = 'RollingUpdate';

export function rollingUpdateRecordedV1(lws: LeaderWorkerSet): boolean {
  const c = lws.status?.conditions?.find((x) => x.type === 'UpdateInProgress');
  return c?.status === 'True' && c.reason === REASON_ROLLING_UPDATE_V1;
}

/**
 * `now`: the caller's clock (workflow time); `rolling`: the controller is steering a rolling update; `nameConflict`:
 * why the leader StatefulSet cannot be made (the condition exists only while it lasts).
 */
export function computeStatusV1(
  lws: LeaderWorkerSet,
  leaders: LeaderFactsV1[],
  workerSets: WorkerSetFactsV1[],
  now: string,
  rolling = false,
  nameConflict?: string,
): LeaderWorkerSetStatus {
  const d = applyDefaults(lws);
  const wanted = d.spec.replicas;
  const groups = groupStatesV1(lws, leaders, workerSets).filter((g) => g.groupIndex < wanted && !g.terminating);
  const readyReplicas = groups.filter((g) => g.ready).length;
  const updatedReplicas = groups.filter((g) => g.updated).length;
  const generation = d.metadata.generation;
  const previous = lws.status?.conditions;
  const available = readyReplicas >= wanted;
  const updating = updatedReplicas < wanted || rolling;
  return {
    replicas: groups.length,
    readyReplicas,
    updatedReplicas,
    // The scale subresource's selector, for an HPA: the leader pods.
    hpaPodSelector: selectors.leadersOf(d.metadata.name ?? ''),
    observedGeneration: generation,
    conditions: [
      conditionV1(
        'Available',
        available,
        available ? 'AllGroupsReady' : 'GroupsNotReady',
        `${readyReplicas} of ${wanted} groups ready`,
        previous,
        now,
        generation,
      ),
      conditionV1(
        'Progressing',
        !available,
        !available ? 'GroupsProgressing' : 'Done',
        !available ? `waiting for ${wanted - readyReplicas} groups to become ready` : 'all groups ready',
        previous,
        now,
        generation,
      ),
      conditionV1(
        'UpdateInProgress',
        updating,
        rolling ? REASON_ROLLING_UPDATE_V1 : updating ? 'GroupsUpdating' : 'Updated',
        `${updatedReplicas} of ${wanted} groups on the current template${rolling ? ', rolling' : ''}`,
        previous,
        now,
        generation,
      ),
      ...(nameConflict === undefined
        ? []
        : [conditionV1(CONDITION_NAME_CONFLICT, true, 'NameTaken', nameConflict, previous, now, generation)]),
    ],
  };
}

/** The leader StatefulSet's size and partition while the controller steers a rolling update. */
export interface LeaderRolloutV1 {
  /** Leader pods wanted: spec.replicas, plus the surge groups while they are needed. */
  replicas: number;
  /** Ordinals from here up run the current template; the StatefulSet replaces those that do not. */
  partition: number;
  /** A rollout is under way: the next plan may keep surge groups while the last groups become ready. */
  rolling: boolean;
}

/**
 * Level-triggered. A group is Ready when its leader and every worker are: a replaced leader is Ready long before its
 * workers. While an old group at or above the user's partition is left, there are `replicas + maxSurge` groups, and
 * the partition comes down over old Ready groups while `replicas - maxUnavailable` stay Ready (surge groups count).
 * Then each surge group goes once the groups in range no longer need it.
 */
export function planLeaderRolloutV1(
  spec: DefaultedLeaderWorkerSetSpec,
  groups: GroupStateV1[],
  rolling: boolean,
): LeaderRolloutV1 {
  const { replicas } = spec;
  const userPartition = spec.rolloutStrategy.rollingUpdateConfiguration.partition;
  const minReady = replicas - effectiveMaxUnavailable(spec);
  const surge = effectiveMaxSurge(spec);
  const byIndex = new Map(groups.map((g) => [g.groupIndex, g]));
  const oldLeft = groups.some((g) => g.groupIndex >= userPartition && g.groupIndex < replicas && !g.updated);
  if (oldLeft) {
    // Each old Ready group taken down costs one Ready group; old groups already down, and new ones, cost nothing.
    let spare = groups.filter((g) => g.ready).length - minReady;
    let partition = replicas;
    for (let i = replicas - 1; i >= userPartition; i--) {
      const g = byIndex.get(i);
      const cost = g !== undefined && g.ready && !g.updated ? 1 : 0;
      if (cost > spare) break;
      spare -= cost;
      partition = i;
    }
    return { replicas: replicas + surge, partition, rolling: true };
  }
  const readyInRange = groups.filter((g) => g.groupIndex < replicas && g.ready).length;
  const keep = rolling ? Math.min(surge, Math.max(0, minReady - readyInRange)) : 0;
  return { replicas: replicas + keep, partition: userPartition, rolling: keep > 0 };
}
