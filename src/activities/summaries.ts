// Kubernetes objects reduced to the plain JSON facts that workflows decide on (PodInfo, StatefulSetInfo): small
// Temporal payloads, no client classes, timestamps as RFC 3339 strings.
import type { V1ObjectMeta, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import type { PodInfo, StatefulSetInfo } from './types.js';

/** A timestamp as RFC 3339; client-node gives Dates for typed objects, strings for custom ones. */
export function isoTime(value: Date | string | null | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  return value instanceof Date ? value.toISOString() : value;
}

/** UID of the controlling owner (ownerReference with controller: true), if any. */
export function controllerUid(meta: V1ObjectMeta | undefined): string | undefined {
  return meta?.ownerReferences?.find((ref) => ref.controller === true)?.uid;
}

/** The fields every summary shares; throws on an object without name, namespace or uid (never sent by the API). */
function identity(kind: string, meta: V1ObjectMeta | undefined) {
  const { name, namespace, uid } = meta ?? {};
  if (!name || !namespace || !uid) throw new Error(`${kind} without name, namespace or uid: ${JSON.stringify(meta)}`);
  const out: { name: string; namespace: string; uid: string; deletionTimestamp?: string; ownerUid?: string } = {
    name,
    namespace,
    uid,
  };
  const deletionTimestamp = isoTime(meta?.deletionTimestamp);
  if (deletionTimestamp !== undefined) out.deletionTimestamp = deletionTimestamp;
  const ownerUid = controllerUid(meta);
  if (ownerUid !== undefined) out.ownerUid = ownerUid;
  return out;
}

export function isPodReady(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

export function podInfo(pod: V1Pod): PodInfo {
  const restarts = [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])];
  const createdAt = isoTime(pod.metadata?.creationTimestamp);
  return {
    ...identity('Pod', pod.metadata),
    labels: { ...pod.metadata?.labels },
    annotations: { ...pod.metadata?.annotations },
    ...(createdAt !== undefined && { createdAt }),
    ready: isPodReady(pod),
    restartCount: restarts.reduce((sum, s) => sum + (s.restartCount ?? 0), 0),
  };
}

export function statefulSetInfo(sts: V1StatefulSet): StatefulSetInfo {
  return {
    ...identity('StatefulSet', sts.metadata),
    labels: { ...sts.metadata?.labels },
    replicas: sts.spec?.replicas ?? 1,
    readyReplicas: sts.status?.readyReplicas ?? 0,
  };
}

/**
 * True once the StatefulSet controller has seen the current spec and counts every wanted replica ready. Without
 * the observedGeneration check a status written before a scale-up would count as ready.
 */
export function isStatefulSetReady(sts: V1StatefulSet): boolean {
  const generation = sts.metadata?.generation ?? 0;
  const observed = sts.status?.observedGeneration ?? 0;
  return observed >= generation && (sts.status?.readyReplicas ?? 0) >= (sts.spec?.replicas ?? 1);
}
