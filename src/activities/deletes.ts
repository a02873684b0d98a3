// Deletes that can only ever hit the incarnation the caller means: read first (to answer "absent", "not ours",
// "already going" without side effects), then DELETE with preconditions.uid, so that a newer object that took the
// name in between is refused by the API server itself (409) rather than deleted.
import type { V1ObjectMeta, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import type { KubeClients } from './clients.js';
import type { DeleteBody } from '../kube/kube-json.js';
import { classify, isConflict, isNotFound } from './kube-errors.js';

import {
  controllerUid,
  LABEL_GROUP_INDEX,
  LABEL_NAME,
  resolvePodTerminationPolicy,
  workerStatefulSetName,
  type ObjectKey,
  type ObjectIdentity,
} from '../model/index.js';
import { getLeaderWorkerSet } from './reads.js';
import type { DeleteOutcome, SeenWorkers } from './types.js';

interface Target {
  read(): Promise<{ metadata?: V1ObjectMeta }>;
  remove(body: DeleteBody): Promise<unknown>;
}

async function deleteIncarnation(
  target: Target,
  /** The incarnation to delete; undefined: whichever exists now (the check and the precondition still apply). */
  uid: string | undefined,
  check: (meta: V1ObjectMeta | undefined) => DeleteOutcome | undefined,
  propagationPolicy?: DeleteBody['propagationPolicy'],
): Promise<DeleteOutcome> {
  let meta: V1ObjectMeta | undefined;
  try {
    meta = (await target.read()).metadata;
  } catch (err) {
    if (isNotFound(err)) return 'absent';
    throw classify(err);
  }
  if (!meta?.uid || (uid !== undefined && meta.uid !== uid)) return 'absent';
  const refused = check(meta);
  if (refused !== undefined) return refused;
  if (meta.deletionTimestamp) return 'already-deleting';
  try {
    const preconditions = { uid: meta.uid };
    await target.remove(propagationPolicy === undefined ? { preconditions } : { preconditions, propagationPolicy });
    return 'deleted';
  } catch (err) {
    // 409: the uid precondition failed, the name now belongs to another object; 404: gone meanwhile.
    if (isNotFound(err) || isConflict(err)) return 'absent';
    throw classify(err);
  }
}

type DeleteWorkersInput = ObjectKey & {
  uid?: string;
  ownerUid: string;
  propagationPolicy: 'Foreground' | 'Background';
};

export function deleteWorkerStatefulSet(c: KubeClients, input: DeleteWorkersInput): Promise<DeleteOutcome> {
  return deleteWorkers(c, input, () => c.statefulSets.read(input));
}

type PodList = { items: V1Pod[] };

/**
 * `readFirst`: the StatefulSet's read, possibly already under way; `listedPods`: the group's pods, listed before the
 * delete (deleteWorkersIfParallel starts both early, together with its other reads).
 */
async function deleteWorkers(
  c: KubeClients,
  input: DeleteWorkersInput,
  readFirst: () => Promise<V1StatefulSet>,
  listedPods?: Promise<PodList | undefined>,
): Promise<DeleteOutcome> {
  const { namespace, name } = input;
  let read: V1StatefulSet | undefined;
  const outcome = await deleteIncarnation(
    {
      read: async () => (read = await readFirst()),
      remove: (body) => c.statefulSets.delete({ namespace, name }, body),
    },
    input.uid,
    // Never another group's: only a StatefulSet whose controller is the leader the caller names.
    (meta) => (controllerUid(meta) === input.ownerUid ? undefined : 'not-owned'),
    input.propagationPolicy,
  );
  if (outcome === 'deleted' && input.propagationPolicy === 'Foreground' && read) {
    await deleteOwnedPods(c, read, listedPods);
  }
  return outcome;
}

/**
 * The pods of a StatefulSet that is now being deleted in the foreground, deleted right away rather than when the
 * garbage collector gets to them: under load that came 1 to 4 s later, all of it added to a Parallel teardown.
 * Only after the StatefulSet's own delete (a StatefulSet not yet deleting would create them again), and only its
 * own pods, each with its UID as a precondition. Best effort: whatever is missed, the garbage collector deletes.
 */
async function deleteOwnedPods(
  c: KubeClients,
  sts: V1StatefulSet,
  listedPods: Promise<PodList | undefined> = listPodsOf(c, sts),
): Promise<void> {
  const namespace = sts.metadata?.namespace ?? '';
  if (!sts.metadata?.uid) return;
  // A list from before the delete can miss a pod created just before it: the garbage collector deletes that one.
  const pods = await listedPods;
  const owned = (pods?.items ?? []).filter(
    (p) => controllerUid(p.metadata) === sts.metadata?.uid && p.metadata?.uid && !p.metadata.deletionTimestamp,
  );
  await deletePodsByUid(
    c,
    owned.map((p) => ({ namespace, name: p.metadata!.name!, uid: p.metadata!.uid! })),
  );
}

/**
 * Deletes each pod with its uid as precondition. Best effort: a pod missed here (gone, replaced, or an API error) is
 * deleted by the garbage collector, as its StatefulSet goes in the foreground.
 */
function deletePodsByUid(c: KubeClients, pods: ObjectIdentity[]): Promise<unknown> {
  return Promise.all(pods.map((p) => c.pods.delete(p, { preconditions: { uid: p.uid } }).catch(() => undefined)));
}

function listPodsOf(c: KubeClients, sts: V1StatefulSet): Promise<PodList | undefined> {
  const matchLabels = sts.spec?.selector?.matchLabels ?? {};
  if (Object.keys(matchLabels).length === 0) return Promise.resolve(undefined);
  const labelSelector = Object.entries(matchLabels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  return c.pods.list({ namespace: sts.metadata?.namespace ?? '', labelSelector }).catch(() => undefined);
}

/** What `releaseForegroundDeletion` found, and did. */
export type ReleaseOutcome = 'released' | 'absent' | 'not-foreground' | 'pods-left';

/**
 * A StatefulSet deleted in the foreground stays until the garbage collector gets back to it after its last pod: under
 * load, seconds after the pods, and a replacement group waits for the name all that time. Once none of its pods is
 * left, deleting it again in the background removes the foregroundDeletion finalizer, so it goes at once: what the
 * garbage collector would do, sooner. `sts` as read before (a deletion, once begun, is never undone); only that
 * incarnation (uid precondition), and only when no pod of its own is left: `gonePods` covers its names, or a list
 * shows none.
 */
export async function releaseForegroundDeletion(
  c: KubeClients,
  sts: V1StatefulSet,
  gonePods: ObjectIdentity[] = [],
): Promise<ReleaseOutcome> {
  const { uid, namespace = '', name = '', deletionTimestamp, finalizers } = sts.metadata ?? {};
  if (!uid || !deletionTimestamp || !finalizers?.includes('foregroundDeletion')) return 'not-foreground';
  if (!namesCovered(sts, gonePods)) {
    const pods = await listPodsOf(c, sts);
    if (pods === undefined || pods.items.some((p) => controllerUid(p.metadata) === uid)) return 'pods-left';
  }
  try {
    await c.statefulSets.delete({ namespace, name }, { preconditions: { uid }, propagationPolicy: 'Background' });
    return 'released';
  } catch (err) {
    if (isNotFound(err) || isConflict(err)) return 'absent';
    throw classify(err);
  }
}

/** Every pod name the StatefulSet can have (its ordinals) is among `pods`: a StatefulSet being deleted makes no more. */
function namesCovered(sts: V1StatefulSet, pods: ObjectIdentity[]): boolean {
  const names = new Set(pods.map((p) => p.name));
  const start = sts.spec?.ordinals?.start ?? 0;
  const replicas = sts.spec?.replicas ?? 1;
  for (let i = start; i < start + replicas; i++) if (!names.has(`${sts.metadata?.name}-${i}`)) return false;
  return true;
}

export function deletePod(c: KubeClients, input: ObjectIdentity): Promise<DeleteOutcome> {
  const { namespace, name } = input;
  return deleteIncarnation(
    {
      read: () => c.pods.read({ namespace, name }),
      remove: (body) => c.pods.delete({ namespace, name }, body),
    },
    input.uid,
    () => undefined,
  );
}

export async function deleteWorkersIfParallel(
  c: KubeClients,
  input: { ref: ObjectKey; groupIndex: number; leader: ObjectIdentity },
): Promise<DeleteOutcome> {
  const { ref, leader } = input;
  const workers = { namespace: ref.namespace, name: workerStatefulSetName(ref.name, input.groupIndex) };
  // Every millisecond here is teardown time: the StatefulSet is read together with the LWS and the leader.
  const stsRead = c.statefulSets.read(workers);
  stsRead.catch(() => undefined); // its error, if any, is handled where it is awaited
  const labelSelector = `${LABEL_NAME}=${ref.name},${LABEL_GROUP_INDEX}=${input.groupIndex}`;
  const podsList = c.pods.list({ namespace: ref.namespace, labelSelector }).catch(() => undefined);
  const [lws, pod] = await Promise.all([
    getLeaderWorkerSet(c, ref),
    c.pods.read(leader).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw classify(err);
    }),
  ]);
  const ours = pod?.metadata?.uid === leader.uid ? pod : undefined;
  // Design rule: Parallel never deletes a group that is not terminating. A leader already gone is past that point.
  if (ours && !ours.metadata?.deletionTimestamp) return 'refused';
  const { policy } = resolvePodTerminationPolicy({
    lws,
    leaderPod: ours
      ? { metadata: { annotations: ours.metadata?.annotations, creationTimestamp: ours.metadata?.creationTimestamp } }
      : null,
  });
  if (policy !== 'Parallel') return 'refused';
  return deleteWorkers(
    c,
    { ...workers, ownerUid: leader.uid, propagationPolicy: 'Foreground' },
    () => stsRead,
    podsList,
  );
}

/**
 * Under Parallel, every round trip before the workers' delete is teardown time, and in a burst of rebuilds each one
 * costs a second. What the trigger saw is enough to act on, as a controller acts on its informer's cache: a leader
 * seen terminating stays terminating, and the uid preconditions make the API server refuse any other incarnation.
 * The pods go at the same time as their StatefulSet: its controller never replaces a pod that is still terminating,
 * and by the time one is gone the StatefulSet is long marked for deletion.
 */
export async function deleteSeenWorkers(c: KubeClients, input: SeenWorkers): Promise<DeleteOutcome> {
  const { namespace, name, uid } = input.statefulSet;
  const stsDelete = c.statefulSets
    .delete({ namespace, name }, { preconditions: { uid }, propagationPolicy: 'Foreground' })
    .then(
      (): DeleteOutcome => 'deleted',
      (err: unknown): DeleteOutcome => {
        // 409: the uid precondition failed (another incarnation holds the name); 404: gone meanwhile.
        if (isNotFound(err) || isConflict(err)) return 'absent';
        throw classify(err);
      },
    );
  const [outcome] = await Promise.all([stsDelete, deletePodsByUid(c, input.pods)]);
  return outcome;
}
