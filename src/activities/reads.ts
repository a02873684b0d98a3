// Reads: the LWS as stored, one pod or StatefulSet, and the groups of an LWS. Absent objects are null, never errors.
import { LABEL_GROUP_INDEX, LABEL_NAME, LABEL_WORKER_INDEX } from '../model/index.js';
import type { LeaderWorkerSet, LwsRef } from '../model/index.js';
import type { KubeClients } from './clients.js';
import { kube, orNull } from './kube-errors.js';
import { podInfo, statefulSetInfo } from './summaries.js';
import type { ObjectKey, PodInfo, StatefulSetInfo } from './types.js';

export function getLeaderWorkerSet(c: KubeClients, ref: LwsRef): Promise<LeaderWorkerSet | null> {
  return orNull(() => c.leaderWorkerSets.read(ref));
}

export async function getPod(c: KubeClients, key: ObjectKey): Promise<PodInfo | null> {
  const pod = await orNull(() => c.pods.read(key));
  return pod === null ? null : podInfo(pod);
}

export async function getStatefulSet(c: KubeClients, key: ObjectKey): Promise<StatefulSetInfo | null> {
  const sts = await orNull(() => c.statefulSets.read(key));
  return sts === null ? null : statefulSetInfo(sts);
}

/**
 * Leader pods are the pods of the LWS with worker-index "0", a label the leader pod template sets. Worker
 * StatefulSets are those of the LWS with a group-index label, which the leader StatefulSet does not carry.
 */
export async function listGroups(
  c: KubeClients,
  ref: LwsRef,
): Promise<{ leaders: PodInfo[]; workerStatefulSets: StatefulSetInfo[] }> {
  const { namespace, name } = ref;
  const [pods, statefulSets] = await Promise.all([
    kube(() => c.pods.list({ namespace, labelSelector: `${LABEL_NAME}=${name},${LABEL_WORKER_INDEX}=0` })),
    kube(() => c.statefulSets.list({ namespace, labelSelector: `${LABEL_NAME}=${name},${LABEL_GROUP_INDEX}` })),
  ]);
  const byName = <T extends { name: string }>(a: T, b: T) => a.name.localeCompare(b.name, 'en', { numeric: true });
  return {
    leaders: pods.items.map(podInfo).sort(byName),
    workerStatefulSets: statefulSets.items.map(statefulSetInfo).sort(byName),
  };
}

/** Every pod of one group (leader once labelled, and workers), by the name and group-index labels. */
export async function listGroupPods(
  c: KubeClients,
  input: { namespace: string; lwsName: string; groupIndex: number },
): Promise<PodInfo[]> {
  const labelSelector = `${LABEL_NAME}=${input.lwsName},${LABEL_GROUP_INDEX}=${input.groupIndex}`;
  const pods = await kube(() => c.pods.list({ namespace: input.namespace, labelSelector }));
  return pods.items.map(podInfo).sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }));
}
