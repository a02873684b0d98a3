// The object facts decisions read, one shape for trigger, activities, workflows, CLI, bench: JSON, RFC 3339 times.
import type { V1ObjectMeta, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import {
  ANNOTATION_REPLICAS,
  controllerKeysOf,
  LABEL_GROUP_INDEX,
  LABEL_NAME,
  LABEL_TEMPLATE_REVISION_HASH,
  LABEL_WORKER_INDEX,
} from './labels.js';

export interface ObjectKey {
  namespace: string;
  name: string;
}

/** One incarnation of an object: an object created again under its name has another uid. */
export interface ObjectIdentity extends ObjectKey {
  uid: string;
}

export interface PodFacts extends ObjectIdentity {
  /** This controller's labels and annotations only (controllerKeysOf). */
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** RFC 3339, whole seconds. */
  createdAt?: string;
  /** RFC 3339: when the grace period ends; set once the pod is terminating. */
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  ready: boolean;
  /** status.phase: a group with a Pending pod has not started (RecreateGroupAfterStart). */
  phase?: string;
  /** restartCount summed over every container, init containers included. */
  restartCount: number;
  /** The controlling owner: the leader StatefulSet for a leader, the group's worker StatefulSet for a worker. */
  ownerUid?: string;
}

export interface StatefulSetFacts extends ObjectIdentity {
  /** This controller's labels only (controllerKeysOf). */
  labels: Record<string, string>;
  deletionTimestamp?: string;
  /** The controlling owner: the leader pod for a worker StatefulSet, the LWS for the leader StatefulSet. */
  ownerUid?: string;
  /** spec.replicas: for the leader StatefulSet, the groups wanted now (surge groups included). */
  replicas: number;
  readyReplicas: number;
  /** status.availableReplicas; absent in facts recorded before it was read. */
  availableReplicas?: number;
  /** status.currentRevision equals status.updateRevision: no pod of it is left on an older template. */
  rolledOut?: boolean;
}

/** What the rollout plan and the status read of the leader StatefulSet. */
export interface LeaderStatefulSetFacts extends ObjectIdentity {
  ownerUid?: string;
  deletionTimestamp?: string;
  replicas: number;
  partition: number;
  /** Its template-revision-hash label: the revision it was last written with. */
  revision?: string;
  /** Its replicas annotation: the LWS's spec.replicas when it was last written. */
  lwsReplicas?: number;
  /** status.replicas: the leader pods it has (upstream's status.replicas of the LWS). */
  statusReplicas: number;
}

/** A timestamp as RFC 3339: client-node gives Dates for typed objects, strings for watch events and custom objects. */
export function isoTime(value: Date | string | null | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  return value instanceof Date ? value.toISOString() : value;
}

export function controllerUid(
  meta: { ownerReferences?: ReadonlyArray<{ uid: string; controller?: boolean }> } | undefined,
): string | undefined {
  return meta?.ownerReferences?.find((ref) => ref.controller === true)?.uid;
}

export function isPodReady(pod: {
  status?: { conditions?: ReadonlyArray<{ type: string; status: string }> };
}): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

export function isDeleting(o: { deletionTimestamp?: string }): boolean {
  return o.deletionTimestamp !== undefined;
}

/** The pod read (null: none of that name) is still this incarnation and not terminating: one to build a group on. */
export function isLiveIncarnation(pod: PodFacts | null, of: ObjectIdentity): pod is PodFacts {
  return pod !== null && pod.uid === of.uid && !pod.deletionTimestamp;
}

/** The finalizer a foreground delete puts on its object: it stays until every dependent with blockOwnerDeletion is gone. */
export const FOREGROUND_DELETION_FINALIZER = 'foregroundDeletion';

/** Deleted in the foreground and kept only until its dependents are gone: such a deletion is never undone. */
export function inForegroundDeletion(
  meta: Pick<V1ObjectMeta, 'deletionTimestamp' | 'finalizers'> | undefined,
): boolean {
  return Boolean(meta?.deletionTimestamp) && (meta?.finalizers?.includes(FOREGROUND_DELETION_FINALIZER) ?? false);
}

function identityOf(meta: V1ObjectMeta | undefined): ObjectIdentity | undefined {
  const { name, namespace, uid } = meta ?? {};
  return name && namespace && uid ? { namespace, name, uid } : undefined;
}

export function podFacts(pod: V1Pod): PodFacts | undefined {
  const m = pod.metadata;
  const id = identityOf(m);
  if (!id) return undefined;
  const statuses = [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])];
  const createdAt = isoTime(m?.creationTimestamp);
  const deletionTimestamp = isoTime(m?.deletionTimestamp);
  const ownerUid = controllerUid(m);
  return {
    ...id,
    labels: controllerKeysOf(m?.labels),
    annotations: controllerKeysOf(m?.annotations),
    ...(createdAt !== undefined && { createdAt }),
    ...(deletionTimestamp !== undefined && { deletionTimestamp }),
    ...(m?.deletionGracePeriodSeconds !== undefined && { deletionGracePeriodSeconds: m.deletionGracePeriodSeconds }),
    ready: isPodReady(pod),
    ...(pod.status?.phase !== undefined && { phase: pod.status.phase }),
    restartCount: statuses.reduce((sum, s) => sum + (s.restartCount ?? 0), 0),
    ...(ownerUid !== undefined && { ownerUid }),
  };
}

export function statefulSetFacts(sts: V1StatefulSet): StatefulSetFacts | undefined {
  const m = sts.metadata;
  const id = identityOf(m);
  if (!id) return undefined;
  const deletionTimestamp = isoTime(m?.deletionTimestamp);
  const ownerUid = controllerUid(m);
  return {
    ...id,
    labels: controllerKeysOf(m?.labels),
    ...(deletionTimestamp !== undefined && { deletionTimestamp }),
    ...(ownerUid !== undefined && { ownerUid }),
    replicas: sts.spec?.replicas ?? 1,
    readyReplicas: sts.status?.readyReplicas ?? 0,
    availableReplicas: sts.status?.availableReplicas ?? 0,
    rolledOut: (sts.status?.currentRevision ?? '') === (sts.status?.updateRevision ?? ''),
  };
}

export function leaderStatefulSetFacts(sts: V1StatefulSet): LeaderStatefulSetFacts | undefined {
  const m = sts.metadata;
  const id = identityOf(m);
  if (!id) return undefined;
  const deletionTimestamp = isoTime(m?.deletionTimestamp);
  const ownerUid = controllerUid(m);
  const revision = m?.labels?.[LABEL_TEMPLATE_REVISION_HASH];
  const lwsReplicas = Number(m?.annotations?.[ANNOTATION_REPLICAS] ?? NaN);
  return {
    ...id,
    ...(ownerUid !== undefined && { ownerUid }),
    ...(deletionTimestamp !== undefined && { deletionTimestamp }),
    replicas: sts.spec?.replicas ?? 1,
    partition: sts.spec?.updateStrategy?.rollingUpdate?.partition ?? 0,
    ...(revision !== undefined && { revision }),
    ...(Number.isInteger(lwsReplicas) && { lwsReplicas }),
    statusReplicas: sts.status?.replicas ?? 0,
  };
}

/** When a pod's deletion was made (ms since the epoch): its deletionTimestamp is when the grace period ends. */
export function deletionMadeAt(pod: Pick<PodFacts, 'deletionTimestamp' | 'deletionGracePeriodSeconds'>) {
  if (pod.deletionTimestamp === undefined) return undefined;
  return Date.parse(pod.deletionTimestamp) - (pod.deletionGracePeriodSeconds ?? 0) * 1000;
}

/** Orders objects by name, numbers as numbers (`demo-2` before `demo-10`). */
export function byName<T extends { name: string }>(a: T, b: T): number {
  return a.name.localeCompare(b.name, 'en', { numeric: true });
}

export const selectors = {
  ofLws: (lwsName: string) => `${LABEL_NAME}=${lwsName}`,
  /** Its leader pods (worker-index 0, set by the leader pod template). */
  leadersOf: (lwsName: string) => `${LABEL_NAME}=${lwsName},${LABEL_WORKER_INDEX}=0`,
  /** Its worker StatefulSets: the leader StatefulSet has no group-index label. */
  workerStatefulSetsOf: (lwsName: string) => `${LABEL_NAME}=${lwsName},${LABEL_GROUP_INDEX}`,
  /** Every pod of one group: the leader once labelled, and its workers. */
  groupPods: (lwsName: string, groupIndex: number) => `${LABEL_NAME}=${lwsName},${LABEL_GROUP_INDEX}=${groupIndex}`,
  /** What a StatefulSet's spec.selector.matchLabels selects; undefined for an empty one (it would select all). */
  matching: (matchLabels: Record<string, string> | undefined) => {
    const entries = Object.entries(matchLabels ?? {});
    return entries.length === 0 ? undefined : entries.map(([k, v]) => `${k}=${v}`).join(',');
  },
};

/** observedGeneration first: a status written before a scale-up would otherwise count as ready. */
export function isStatefulSetReady(sts: V1StatefulSet): boolean {
  const observed = sts.status?.observedGeneration ?? 0;
  return observed >= (sts.metadata?.generation ?? 0) && (sts.status?.readyReplicas ?? 0) >= (sts.spec?.replicas ?? 1);
}
