// The LWS status subresource, computed from what the cluster holds: pure, so the reconcile workflow can call it.
import { applyDefaults } from './defaults.js';
import { canonicalJson } from './json.js';
import { LABEL_TEMPLATE_REVISION_HASH } from './labels.js';
import { parseGroupIndex, workerStatefulSetName } from './names.js';
import { isDeleting, selectors, type PodFacts, type StatefulSetFacts } from './objects.js';
import { templateRevisionHash } from './revision.js';
import type { Condition, LeaderWorkerSet, LeaderWorkerSetStatus } from './types.js';
import { CONDITION_NAME_CONFLICT } from './name-conflicts.js';

export type LeaderFacts = Pick<PodFacts, 'name' | 'uid' | 'labels' | 'ready' | 'deletionTimestamp'>;

export type WorkerSetFacts = Pick<StatefulSetFacts, 'name' | 'ownerUid' | 'readyReplicas' | 'deletionTimestamp'>;

/** Per group index: does it exist, is it ready (leader Ready and every worker ready), is it on the current revision. */
export interface GroupState {
  groupIndex: number;
  ready: boolean;
  updated: boolean;
  terminating: boolean;
}

export function groupStates(lws: LeaderWorkerSet, leaders: LeaderFacts[], workerSets: WorkerSetFacts[]): GroupState[] {
  const d = applyDefaults(lws);
  const name = d.metadata.name ?? '';
  const size = d.spec.leaderWorkerTemplate.size;
  const revision = templateRevisionHash(d.spec);
  const states: GroupState[] = [];
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

function condition(
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
export const REASON_ROLLING_UPDATE = 'RollingUpdate';

export function rollingUpdateRecorded(lws: LeaderWorkerSet): boolean {
  const c = lws.status?.conditions?.find((x) => x.type === 'UpdateInProgress');
  return c?.status === 'True' && c.reason === REASON_ROLLING_UPDATE;
}

/**
 * `now`: the caller's clock (workflow time); `rolling`: the controller is steering a rolling update; `nameConflict`:
 * why the leader StatefulSet cannot be made (the condition exists only while it lasts).
 */
export function computeStatus(
  lws: LeaderWorkerSet,
  leaders: LeaderFacts[],
  workerSets: WorkerSetFacts[],
  now: string,
  rolling = false,
  nameConflict?: string,
): LeaderWorkerSetStatus {
  const d = applyDefaults(lws);
  const wanted = d.spec.replicas;
  const groups = groupStates(lws, leaders, workerSets).filter((g) => g.groupIndex < wanted && !g.terminating);
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
      condition(
        'Available',
        available,
        available ? 'AllGroupsReady' : 'GroupsNotReady',
        `${readyReplicas} of ${wanted} groups ready`,
        previous,
        now,
        generation,
      ),
      condition(
        'Progressing',
        !available,
        !available ? 'GroupsProgressing' : 'Done',
        !available ? `waiting for ${wanted - readyReplicas} groups to become ready` : 'all groups ready',
        previous,
        now,
        generation,
      ),
      condition(
        'UpdateInProgress',
        updating,
        rolling ? REASON_ROLLING_UPDATE : updating ? 'GroupsUpdating' : 'Updated',
        `${updatedReplicas} of ${wanted} groups on the current template${rolling ? ', rolling' : ''}`,
        previous,
        now,
        generation,
      ),
      ...(nameConflict === undefined
        ? []
        : [condition(CONDITION_NAME_CONFLICT, true, 'NameTaken', nameConflict, previous, now, generation)]),
    ],
  };
}

export function sameStatus(current: LeaderWorkerSetStatus | undefined, next: LeaderWorkerSetStatus): boolean {
  return current !== undefined && canonicalJson(current) === canonicalJson(next);
}
