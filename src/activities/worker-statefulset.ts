// One group's worker StatefulSet, owned by its leader pod, plus what goes with it: the leader pod's group labels and
// termination policy annotation, and, under UniquePerReplica, the group's own headless Service.
import { createHash } from 'node:crypto';
import type { V1StatefulSet } from '@kubernetes/client-node';
import {
  applyDefaults,
  buildGroupService,
  buildWorkerStatefulSet,
  groupKeyInput,
  leaderPodPatch,
  type LeaderWorkerSet,
} from '../model/index.js';
import type { KubeClients } from './clients.js';
import { classify, isConflict, isNotFound } from './kube-errors.js';
import { patchLeaderPod } from './leader-pods.js';
import { ensureService } from './services.js';
import { controllerUid } from './summaries.js';
import type { EnsureWorkerStatefulSetResult, ObjectIdentity } from './types.js';

/** The group-key label value: sha1 hex of `<namespace>/<leaderPodName>`, as upstream computes it. */
export function groupKey(namespace: string, leaderPodName: string): string {
  return createHash('sha1').update(groupKeyInput(namespace, leaderPodName)).digest('hex');
}

/** Creates the StatefulSet, or tells whose the existing one of that name is. */
async function createOrInspect(
  c: KubeClients,
  built: V1StatefulSet,
  leaderUid: string,
): Promise<EnsureWorkerStatefulSetResult> {
  const namespace = built.metadata?.namespace ?? '';
  const name = built.metadata?.name ?? '';
  for (;;) {
    try {
      const created = await c.statefulSets.create(namespace, built);
      return { outcome: 'created', uid: created.metadata?.uid ?? '' };
    } catch (err) {
      if (!isConflict(err)) throw classify(err);
    }
    let live: V1StatefulSet;
    try {
      live = await c.statefulSets.read({ namespace, name });
    } catch (err) {
      if (isNotFound(err)) continue; // went away in between: the name is free now
      throw classify(err);
    }
    const uid = live.metadata?.uid ?? '';
    const ownerUid = controllerUid(live.metadata);
    const deleting = Boolean(live.metadata?.deletionTimestamp);
    // Ours but being deleted counts as blocked too: a new one can only be created once it is gone.
    if (ownerUid === leaderUid && !deleting) return { outcome: 'exists', uid };
    return ownerUid === undefined
      ? { outcome: 'blocked', uid, deleting }
      : { outcome: 'blocked', uid, ownerUid, deleting };
  }
}

export async function ensureWorkerStatefulSet(
  c: KubeClients,
  input: { lws: LeaderWorkerSet; groupIndex: number; leader: ObjectIdentity },
): Promise<EnsureWorkerStatefulSetResult> {
  const { lws, groupIndex, leader } = input;
  const key = groupKey(leader.namespace, leader.name);
  const leaderPod = { name: leader.name, uid: leader.uid };
  // The leader first: its group labels and the termination policy are in place before any worker exists.
  const patch = leaderPodPatch({
    groupIndex,
    groupKey: key,
    podTerminationPolicy: applyDefaults(lws).spec.podTerminationPolicy,
  });
  if (!(await patchLeaderPod(c, leader, patch))) return { outcome: 'leader-gone' };

  const built = buildWorkerStatefulSet(lws, { groupIndex, leaderPod, groupKey: key });
  const result =
    built === undefined ? ({ outcome: 'not-needed' } as const) : await createOrInspect(c, built, leader.uid);
  // The group Service only once the name is ours: a blocked group's old Service is still the old leader's.
  if (result.outcome !== 'blocked') {
    const service = buildGroupService(lws, groupIndex, leaderPod);
    if (service !== undefined) await ensureService(c, service, { kind: 'Pod', uid: leader.uid });
  }
  return result;
}
