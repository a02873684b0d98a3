// Patches on live leader pods: what their shared template cannot carry. Per group, the group-index and group-key
// labels; per LWS, the termination policy annotation, which must stay readable once the LWS is gone and must follow
// a policy change without rolling any group.
import type { V1Pod } from '@kubernetes/client-node';
import {
  ANNOTATION_GROUP_FAILED,
  ANNOTATION_RECREATE_REASON,
  ANNOTATION_POD_TERMINATION_POLICY,
  ANNOTATION_WORKERS_REFUSED,
  selectors,
  type ObjectKey,
  type PodTerminationPolicyValue,
  type ObjectIdentity,
} from '../model/index.js';
import type { KubeClients } from './clients.js';
import { apiExceptionCode, isHttpNotFound } from '../kube/api-errors.js';
import { apiCall, classify } from './kube-errors.js';

type MetadataPatch = { metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } };

function applied(pod: V1Pod, patch: MetadataPatch): boolean {
  const has = (live: Record<string, string> | undefined, want: Record<string, string> | undefined) =>
    Object.entries(want ?? {}).every(([k, v]) => live?.[k] === v);
  return has(pod.metadata?.labels, patch.metadata.labels) && has(pod.metadata?.annotations, patch.metadata.annotations);
}

async function readIncarnation(c: KubeClients, pod: ObjectIdentity): Promise<V1Pod | undefined> {
  try {
    const live = await c.pods.read(pod);
    return live.metadata?.uid === pod.uid ? live : undefined;
  } catch (err) {
    if (isHttpNotFound(err)) return undefined;
    throw classify(err);
  }
}

/**
 * False when the pod of this uid is gone or terminating (its teardown has begun: no group is built on it). The uid in
 * the patch makes the API server refuse it (422, uid is immutable) for a newer pod of the same name instead of
 * patching that one. `live`: the pod as just read, to skip a patch it already has.
 */
export async function patchLeaderPod(
  c: KubeClients,
  pod: ObjectIdentity,
  patch: MetadataPatch,
  live?: V1Pod,
): Promise<boolean> {
  // Unread, the patch goes out at once: one already applied changes nothing, and the uid in it refuses another pod, so
  // a GET first would cost a round trip each group's provisioning waits on. Its answer is the pod as it is now.
  if (live !== undefined && applied(live, patch)) return !live.metadata?.deletionTimestamp;
  try {
    const now = await c.pods.mergePatch(pod, { metadata: { ...patch.metadata, uid: pod.uid } });
    return !now.metadata?.deletionTimestamp;
  } catch (err) {
    const code = apiExceptionCode(err);
    if ((code === 404 || code === 422) && (await readIncarnation(c, pod)) === undefined) return false;
    throw classify(err);
  }
}

/** Returns how many were patched. Terminating leaders keep theirs: their teardown has already decided. */
export async function annotateLeaderPods(
  c: KubeClients,
  input: { ref: ObjectKey; podTerminationPolicy: PodTerminationPolicyValue },
): Promise<number> {
  const { namespace, name } = input.ref;
  const patch = { metadata: { annotations: { [ANNOTATION_POD_TERMINATION_POLICY]: input.podTerminationPolicy } } };
  const leaders = await apiCall(() => c.pods.list({ namespace, labelSelector: selectors.leadersOf(name) }));
  let patched = 0;
  for (const pod of leaders.items) {
    const uid = pod.metadata?.uid;
    if (!uid || !pod.metadata?.name || pod.metadata.deletionTimestamp || applied(pod, patch)) continue;
    if (await patchLeaderPod(c, { namespace, name: pod.metadata.name, uid }, patch, pod)) patched++;
  }
  return patched;
}

/** The refusal of the group's workers on its leader pod, for the reconcile to tell; absent `message` takes it off. */
export function markWorkersRefused(
  c: KubeClients,
  input: { leader: ObjectIdentity; message?: string },
): Promise<boolean> {
  return setLeaderAnnotation(c, input.leader, ANNOTATION_WORKERS_REFUSED, input.message);
}

/** Why the group is no longer recreated (its restart budget is spent), on its leader pod, for the reconcile to tell. */
export function markGroupFailed(c: KubeClients, input: { leader: ObjectIdentity; message: string }): Promise<boolean> {
  return setLeaderAnnotation(c, input.leader, ANNOTATION_GROUP_FAILED, input.message);
}

/** Why the restart policy recreates the group, on its leader pod just before it is deleted, for its teardown to tell. */
export function markGroupRecreated(
  c: KubeClients,
  input: { leader: ObjectIdentity; reason: string },
): Promise<boolean> {
  return setLeaderAnnotation(c, input.leader, ANNOTATION_RECREATE_REASON, input.reason);
}

/** False when the pod of this uid is gone; absent `value` takes the annotation off. */
async function setLeaderAnnotation(
  c: KubeClients,
  leader: ObjectIdentity,
  key: string,
  value: string | undefined,
): Promise<boolean> {
  const live = await readIncarnation(c, leader);
  if (live === undefined) return false;
  if (live.metadata?.annotations?.[key] === value) return true;
  try {
    // null removes the key (JSON merge patch); the uid makes a newer pod of the name refuse it.
    await c.pods.mergePatch(leader, { metadata: { uid: leader.uid, annotations: { [key]: value ?? null } } });
    return true;
  } catch (err) {
    const code = apiExceptionCode(err);
    if ((code === 404 || code === 422) && (await readIncarnation(c, leader)) === undefined) return false;
    throw classify(err);
  }
}
