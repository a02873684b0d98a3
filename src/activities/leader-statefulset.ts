// The leader StatefulSet, created from the model's builder and brought back in line on drift. Drift is judged by the
// hash of what we last wrote (an annotation), never the live template: the API server fills in defaults
// (imagePullPolicy, ...), so a live template never equals a built one and would be replaced on every call.
import { createHash } from 'node:crypto';
import type { V1StatefulSet, V1StatefulSetUpdateStrategy } from '@kubernetes/client-node';
import {
  ANNOTATION_APPLIED_HASH,
  controllerUid,
  buildLeaderStatefulSet,
  describeNameHolder,
  canonicalJson,
  KIND,
  LABEL_NAME,
  LABEL_TEMPLATE_REVISION_HASH,
  LABEL_WORKER_INDEX,
  type LeaderStatefulSetOptions,
  type LeaderStatefulSetStep,
  type LeaderWorkerSet,
  type ObjectIdentity,
} from '../model/index.js';
import { jsonPointer } from '../kube/kube-json.js';
import type { KubeClients } from './clients.js';
import { isHttpConflict } from '../kube/api-errors.js';
import { classify, orNull } from './kube-errors.js';
import { holder } from './ownership.js';
import { podsOfNames } from './pods-of-names.js';
import type { EnsureLeaderStatefulSetResult } from './types.js';

/** Of what we write on a replace; the volume claim templates are immutable on a StatefulSet, so they are left out. */
export function appliedHash(sts: V1StatefulSet): string {
  const owned = {
    template: sts.spec?.template,
    updateStrategy: sts.spec?.updateStrategy,
    retention: sts.spec?.persistentVolumeClaimRetentionPolicy,
    labels: sts.metadata?.labels,
    annotations: sts.metadata?.annotations,
  };
  return createHash('sha1').update(canonicalJson(owned)).digest('hex');
}

function partition(sts: V1StatefulSet): number {
  return sts.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;
}

function drifted(live: V1StatefulSet, built: V1StatefulSet, hash: string): boolean {
  return (
    live.metadata?.annotations?.[ANNOTATION_APPLIED_HASH] !== hash ||
    live.spec?.replicas !== built.spec?.replicas ||
    partition(live) !== partition(built)
  );
}

/** `from`: the rolling-update step the caller last wrote; while the StatefulSet is still that, stepOn moves it on. */
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
    // Read first: the StatefulSet is usually there, and before a create its pod names must be free (leaderPodsHeld).
    const live = await orNull(() => c.statefulSets.read({ namespace, name }));
    if (live === null) {
      const held = await leaderPodsHeld(c, built);
      if (held.length > 0) return { outcome: 'blocked', pods: held };
      try {
        await c.statefulSets.create(namespace, built);
        return 'created';
      } catch (err) {
        if (isHttpConflict(err)) continue; // created in between: look at it
        throw classify(err);
      }
    }
    const who = holder(live.metadata, { kind: KIND, uid: lws.metadata.uid ?? '' });
    if (who === 'previous') {
      // An older incarnation's (the LWS deleted and created again), going away with its pods: wait for both.
      const statefulSet = { namespace, name, uid: live.metadata?.uid ?? '' };
      return { outcome: 'blocked', statefulSet, pods: await leaderPodsHeld(c, built) };
    }
    if (who === 'foreign') return { outcome: 'name-taken', holder: describeNameHolder(live.metadata) };
    if (!drifted(live, built, hash)) return 'unchanged';
    const { replicas, template, updateStrategy, persistentVolumeClaimRetentionPolicy } = built.spec ?? {};
    if (live.spec === undefined || template === undefined) throw new Error(`${what} has no spec`);
    if (madeElsewhereAtRevision(live, built)) {
      // Another controller's (upstream's, before a switch), at this very revision: its template is kept, since any
      // change to it would roll every leader; from now on it counts as written by us.
      live.metadata = {
        ...live.metadata,
        annotations: { ...live.metadata?.annotations, [ANNOTATION_APPLIED_HASH]: hash },
      };
      live.spec = { ...live.spec, replicas, updateStrategy: withPartition(live, partition(built)) };
    } else {
      // Only the fields we own, on the object as read: its resourceVersion turns a concurrent write into a 409.
      live.metadata = {
        ...live.metadata,
        labels: { ...live.metadata?.labels, ...built.metadata.labels },
        annotations: { ...live.metadata?.annotations, ...built.metadata.annotations },
      };
      live.spec = { ...live.spec, replicas, template, updateStrategy, persistentVolumeClaimRetentionPolicy };
    }
    try {
      await c.statefulSets.replace({ namespace, name }, live);
      return 'updated';
    } catch (err) {
      // A 409 is usually the StatefulSet controller's status writes (each bumps resourceVersion): read again, retry.
      if (!isHttpConflict(err) || ++conflicts > MAX_LOCAL_CONFLICT_RETRIES) throw classify(err);
    }
  }
}

/** Never written by us (no applied hash), and labelled with the revision we would build. */
function madeElsewhereAtRevision(live: V1StatefulSet, built: V1StatefulSet): boolean {
  const revision = (sts: V1StatefulSet) => sts.metadata?.labels?.[LABEL_TEMPLATE_REVISION_HASH];
  return live.metadata?.annotations?.[ANNOTATION_APPLIED_HASH] === undefined && revision(live) === revision(built);
}

function withPartition(live: V1StatefulSet, value: number): V1StatefulSetUpdateStrategy {
  const strategy = live.spec?.updateStrategy ?? { type: 'RollingUpdate' };
  return { ...strategy, rollingUpdate: { ...strategy.rollingUpdate, partition: value } };
}

/** Pods on its names that will go away: terminating, or another StatefulSet's. A live orphan is adopted instead. */
async function leaderPodsHeld(c: KubeClients, built: V1StatefulSet): Promise<ObjectIdentity[]> {
  const selected = built.spec?.selector?.matchLabels ?? {};
  const labels = { [LABEL_NAME]: selected[LABEL_NAME] ?? '', [LABEL_WORKER_INDEX]: selected[LABEL_WORKER_INDEX] ?? '' };
  const key = { namespace: built.metadata?.namespace ?? '', name: built.metadata?.name ?? '' };
  const pods = await podsOfNames(c, key, labels, 0);
  return pods
    .filter((p) => Boolean(p.metadata?.deletionTimestamp) || controllerUid(p.metadata) !== undefined)
    .map((p) => ({ namespace: p.metadata?.namespace ?? '', name: p.metadata?.name ?? '', uid: p.metadata?.uid ?? '' }));
}

/**
 * A rollout step as one JSON patch: no resourceVersion, so no 409 from the status writes (a replace met them, up to
 * four retries). Its tests apply it only to the StatefulSet this LWS owns and last wrote as `from`. False if they fail:
 * the whole check runs.
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

const MAX_LOCAL_CONFLICT_RETRIES = 5;
