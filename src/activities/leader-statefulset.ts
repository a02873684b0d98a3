// The leader StatefulSet: created from the model's builder, and brought back in line when replicas, partition or
// what we wrote into template and update strategy changed.
//
// Drift is judged against what this controller last wrote, never against the live template: the API server fills in
// defaults (imagePullPolicy, terminationMessagePath, ...), so a live template never equals a built one, and comparing
// the two would replace the StatefulSet on every call. The hash of what we wrote lives in an annotation.
import { createHash } from 'node:crypto';
import type { V1StatefulSet } from '@kubernetes/client-node';
import {
  controllerUid,
  buildLeaderStatefulSet,
  canonicalJson,
  KIND,
  LABEL_NAME,
  LABEL_WORKER_INDEX,
  type LeaderStatefulSetOptions,
  type LeaderStatefulSetStep,
  type LeaderWorkerSet,
  type ObjectIdentity,
} from '../model/index.js';
import { jsonPointer } from '../kube/kube-json.js';
import type { KubeClients } from './clients.js';
import { classify, isConflict, orNull } from './kube-errors.js';
import { holder, nameTaken } from './ownership.js';
import { podsOfNames } from './pods-of-names.js';

import type { EnsureLeaderStatefulSetResult } from './types.js';

/**
 * Ours. StatefulSet annotation: sha1 of the pod template and update strategy as this controller last wrote them.
 * (Belongs with the other names in src/model/labels.ts.)
 */
export const ANNOTATION_APPLIED_HASH = 'leaderworkerset.sigs.k8s.io/applied-template-hash';

/** sha1 of what we own in the spec besides replicas: the pod template and the update strategy. */
export function appliedHash(sts: V1StatefulSet): string {
  const owned = { template: sts.spec?.template, updateStrategy: sts.spec?.updateStrategy };
  return createHash('sha1').update(canonicalJson(owned)).digest('hex');
}

function partition(sts: V1StatefulSet): number {
  return sts.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;
}

/** True when the live StatefulSet differs from the built one in what we own (see the file comment). */
function drifted(live: V1StatefulSet, built: V1StatefulSet, hash: string): boolean {
  return (
    live.metadata?.annotations?.[ANNOTATION_APPLIED_HASH] !== hash ||
    live.spec?.replicas !== built.spec?.replicas ||
    partition(live) !== partition(built)
  );
}

/**
 * Creates the leader StatefulSet, or brings it in line. `from`: what the caller last wrote, a rolling update's step
 * before this one; while the StatefulSet is still exactly that, one guarded patch moves it on (see stepOn).
 */
export async function ensureLeaderStatefulSet(
  c: KubeClients,
  lws: LeaderWorkerSet,
  options: LeaderStatefulSetOptions = {},
  from?: LeaderStatefulSetStep,
): Promise<EnsureLeaderStatefulSetResult> {
  const built = buildLeaderStatefulSet(lws, options);
  const hash = appliedHash(built);
  built.metadata = {
    ...built.metadata,
    annotations: { ...built.metadata?.annotations, [ANNOTATION_APPLIED_HASH]: hash },
  };
  const namespace = built.metadata.namespace ?? '';
  const name = built.metadata.name ?? '';
  const what = `StatefulSet ${namespace}/${name}`;
  if (from && (await stepOn(c, lws, options, from, built, hash))) return 'updated';
  let conflicts = 0;
  for (;;) {
    // Read first: the StatefulSet is there on every pass but a new LWS's first, and before a create the names of its
    // pods must be free (see leaderPodsHeld).
    const live = await orNull(() => c.statefulSets.read({ namespace, name }));
    if (live === null) {
      const held = await leaderPodsHeld(c, built);
      if (held.length > 0) return { outcome: 'blocked', pods: held };
      try {
        await c.statefulSets.create(namespace, built);
        return 'created';
      } catch (err) {
        if (isConflict(err)) continue; // created in between: look at it
        throw classify(err);
      }
    }
    const who = holder(live.metadata, { kind: KIND, uid: lws.metadata.uid ?? '' });
    if (who === 'previous') {
      // An older incarnation's (the LWS deleted and created again), going away with its pods: wait for both.
      const statefulSet = { namespace, name, uid: live.metadata?.uid ?? '' };
      return { outcome: 'blocked', statefulSet, pods: await leaderPodsHeld(c, built) };
    }
    if (who === 'foreign') throw nameTaken(what, live.metadata, `LeaderWorkerSet ${namespace}/${lws.metadata.name}`);
    if (!drifted(live, built, hash)) return 'unchanged';
    // Replace only the fields we own, on the object as read: its resourceVersion makes a concurrent writer's change
    // a 409, which Temporal retries on fresh data.
    live.metadata = {
      ...live.metadata,
      labels: { ...live.metadata?.labels, ...built.metadata.labels },
      annotations: { ...live.metadata?.annotations, [ANNOTATION_APPLIED_HASH]: hash },
    };
    const { replicas, template, updateStrategy } = built.spec ?? {};
    if (live.spec === undefined || template === undefined) throw new Error(`${what} has no spec`);
    live.spec = { ...live.spec, replicas, template, updateStrategy };
    try {
      await c.statefulSets.replace({ namespace, name }, live);
      return 'updated';
    } catch (err) {
      // The StatefulSet controller writes status all the time, and every write bumps the resourceVersion; a 409
      // here is usually that, so read again and retry a few times before handing it to Temporal's retry.
      if (!isConflict(err) || ++conflicts > MAX_LOCAL_CONFLICT_RETRIES) throw classify(err);
    }
  }
}

/**
 * Leader pods that hold this StatefulSet's pod names and will go away (see podsOfNames): controlled by another
 * StatefulSet (an older incarnation's, collected with it), or terminating. An orphan that is not terminating is no
 * obstacle: the new StatefulSet adopts it.
 */
async function leaderPodsHeld(c: KubeClients, built: V1StatefulSet): Promise<ObjectIdentity[]> {
  const pods = await podsOfNames(c, built, [LABEL_NAME, LABEL_WORKER_INDEX], 0);
  return pods
    .filter((p) => Boolean(p.metadata?.deletionTimestamp) || controllerUid(p.metadata) !== undefined)
    .map((p) => ({ namespace: p.metadata?.namespace ?? '', name: p.metadata?.name ?? '', uid: p.metadata?.uid ?? '' }));
}

/**
 * A rolling update's step in one call. The whole check (create, read, compare, replace) takes three round trips, and
 * its replace meets a 409 whenever the StatefulSet controller wrote status in between, which it does at every pod
 * change of a rollout. A JSON patch needs no resourceVersion: its tests make it apply only to the StatefulSet this
 * controller owns and last wrote as `from` (the hash of what it wrote then), and it sets replicas, partition and the
 * new hash. False when the tests fail or the call does: the whole check then finds out why.
 */
async function stepOn(
  c: KubeClients,
  lws: LeaderWorkerSet,
  options: LeaderStatefulSetOptions,
  from: LeaderStatefulSetStep,
  built: V1StatefulSet,
  hash: string,
): Promise<boolean> {
  const before = appliedHash(buildLeaderStatefulSet(lws, { ...options, ...from }));
  const annotation = jsonPointer('metadata', 'annotations', ANNOTATION_APPLIED_HASH);
  try {
    await c.statefulSets.jsonPatch({ namespace: built.metadata?.namespace ?? '', name: built.metadata?.name ?? '' }, [
      { op: 'test', path: '/metadata/ownerReferences/0/uid', value: lws.metadata.uid },
      { op: 'test', path: '/metadata/ownerReferences/0/controller', value: true },
      { op: 'test', path: annotation, value: before },
      { op: 'replace', path: '/spec/replicas', value: built.spec?.replicas },
      { op: 'replace', path: '/spec/updateStrategy/rollingUpdate/partition', value: partition(built) },
      { op: 'replace', path: annotation, value: hash },
    ]);
    return true;
  } catch {
    return false;
  }
}

/** Conflicting replaces retried in place before the activity fails and Temporal retries it. */
const MAX_LOCAL_CONFLICT_RETRIES = 5;
