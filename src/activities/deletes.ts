// Deletes that can only hit the incarnation the caller means: read first (absent, not ours, already going: no side
// effects), then DELETE with preconditions.uid, so that the API server refuses (409) a newer object of that name.
import type { V1ObjectMeta, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { controllerUid, inForegroundDeletion, selectors, type ObjectIdentity, type ObjectKey } from '../model/index.js';
import type { DeleteBody } from '../kube/kube-json.js';
import { log } from './activity-context.js';
import type { KubeClients } from './clients.js';
import { isHttpConflict, isHttpNotFound } from '../kube/api-errors.js';
import { classify, orNull } from './kube-errors.js';
import type { DeleteOutcome, ReleaseOutcome, SeenWorkers } from './types.js';

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
    if (isHttpNotFound(err)) return 'absent';
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
    if (isHttpNotFound(err) || isHttpConflict(err)) return 'absent';
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
 * Deleted now, not seconds later by the garbage collector (it started on them 1.15 s p50, up to 4.2 s, after the
 * StatefulSet's foreground delete). Only after the StatefulSet's own delete (one not yet deleting would create them
 * again), only its own pods, by uid; whatever is missed, the collector deletes.
 */
async function deleteOwnedPods(
  c: KubeClients,
  sts: V1StatefulSet,
  listedPods: Promise<PodList | undefined> = listPodsOf(c, sts),
): Promise<void> {
  const namespace = sts.metadata?.namespace ?? '';
  if (!sts.metadata?.uid) return;
  const pods = await listedPods;
  const owned = (pods?.items ?? []).filter(
    (p) => controllerUid(p.metadata) === sts.metadata?.uid && p.metadata?.uid && !p.metadata.deletionTimestamp,
  );
  await deletePodsByUid(
    c,
    owned.map((p) => ({ namespace, name: p.metadata!.name!, uid: p.metadata!.uid! })),
  );
}

/** Best effort: a pod missed here is deleted by the garbage collector, as its StatefulSet goes in the foreground. */
function deletePodsByUid(c: KubeClients, pods: ObjectIdentity[]): Promise<unknown> {
  return Promise.all(pods.map((p) => c.pods.delete(p, { preconditions: { uid: p.uid } }).catch(() => undefined)));
}

function listPodsOf(c: KubeClients, sts: V1StatefulSet): Promise<PodList | undefined> {
  const labelSelector = selectors.matching(sts.spec?.selector?.matchLabels);
  if (labelSelector === undefined) return Promise.resolve(undefined);
  return c.pods.list({ namespace: sts.metadata?.namespace ?? '', labelSelector }).catch(() => undefined);
}

export async function releaseForegroundDeletion(
  c: KubeClients,
  input: { statefulSet: ObjectIdentity; pods: ObjectIdentity[] },
): Promise<ReleaseOutcome> {
  try {
    return await release(c, input.statefulSet, input.pods);
  } catch (err) {
    // Best effort (a role without the delete, say): the garbage collector still does it, later.
    log('warn', 'could not release the old StatefulSet; waiting for the garbage collector', {
      statefulSet: `${input.statefulSet.namespace}/${input.statefulSet.name}`,
      error: err instanceof Error ? err.message : String(err),
    });
    return 'failed';
  }
}

async function release(c: KubeClients, target: ObjectIdentity, gonePods: ObjectIdentity[]): Promise<ReleaseOutcome> {
  const { namespace, name, uid } = target;
  const sts = await orNull(() => c.statefulSets.read({ namespace, name }));
  if (sts === null || sts.metadata?.uid !== uid) return 'absent';
  return releaseAsRead(c, sts, gonePods);
}

/**
 * `sts` as read (by the caller, before `gonePods` went): only an incarnation in its foreground deletion, which is never
 * undone, and only once no pod of its own is left. The uid precondition refuses any other incarnation.
 */
export async function releaseAsRead(
  c: KubeClients,
  sts: V1StatefulSet,
  gonePods: ObjectIdentity[],
): Promise<ReleaseOutcome> {
  const uid = sts.metadata?.uid;
  if (!uid || !inForegroundDeletion(sts.metadata)) {
    return 'not-foreground';
  }
  if (!namesCovered(sts, gonePods)) {
    const pods = await listPodsOf(c, sts);
    if (pods === undefined || pods.items.some((p) => controllerUid(p.metadata) === uid)) return 'pods-left';
  }
  return dropForegroundHold(c, { namespace: sts.metadata?.namespace ?? '', name: sts.metadata?.name ?? '', uid });
}

/**
 * Deleted again in the background: the API server drops the `foregroundDeletion` finalizer, and the object goes in
 * this request. Only for that incarnation (uid precondition), and only once none of its pods holds a name.
 */
export async function dropForegroundHold(c: KubeClients, target: ObjectIdentity): Promise<'released' | 'absent'> {
  const { namespace, name, uid } = target;
  try {
    await c.statefulSets.delete({ namespace, name }, { preconditions: { uid }, propagationPolicy: 'Background' });
    return 'released';
  } catch (err) {
    if (isHttpNotFound(err) || isHttpConflict(err)) return 'absent';
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

/**
 * No read: the trigger's view is enough, as an informer cache is (in a 50-group burst the workers started terminating
 * about 2 s sooner). A leader seen terminating stays so, and uid preconditions refuse any other incarnation. The pods
 * go only once their StatefulSet is deleting: a pod gone before that (an API server restart between the two) would be
 * made again by the StatefulSet controller.
 */
export async function deleteSeenWorkers(c: KubeClients, input: SeenWorkers): Promise<DeleteOutcome> {
  const { namespace, name, uid } = input.statefulSet;
  const stsDelete = c.statefulSets
    .delete({ namespace, name }, { preconditions: { uid }, propagationPolicy: 'Foreground' })
    .then(
      (): DeleteOutcome => 'deleted',
      (err: unknown): DeleteOutcome => {
        if (isHttpNotFound(err) || isHttpConflict(err)) return 'absent';
        throw classify(err);
      },
    );
  const outcome = await stsDelete;
  await deletePodsByUid(c, input.pods);
  return outcome;
}
