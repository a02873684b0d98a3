// The LWS's ControllerRevisions (model/controller-revisions.ts): made for the current spec, read back to build a
// group from its own leader's revision, and pruned once a rollout is done. Upstream's revisions are read too (same
// labels, owned by the LWS), so a group that upstream's controller made can be rebuilt on its own template.
import type { V1ControllerRevision } from '@kubernetes/client-node';
import {
  adoptedRevision,
  ANNOTATION_ADOPTED_REVISION,
  buildControllerRevision,
  controllerRevisionName,
  controllerUid,
  isRevisionData,
  KIND,
  LABEL_NAME,
  LABEL_TEMPLATE_REVISION_HASH,
  leaderStatefulSetName,
  lwsAtRevision,
  nextRevisionNumber,
  revisionKey,
  revisionsToPrune,
  sameTemplates,
  templateRevisionHash,
  type LeaderWorkerSet,
  type ObjectKey,
  type RevisionFacts,
} from '../model/index.js';
import { log } from './activity-context.js';
import { holder, stillHeld } from './ownership.js';
import type { EnsureRevisionOutcome } from './types.js';
import type { KubeClients } from './clients.js';
import { createOrRead } from './create-or-read.js';
import { isHttpNotFound } from '../kube/api-errors.js';
import { apiCall, classify, orNull } from './kube-errors.js';

/** Ours, or one without a controller (upstream adopts those too); never another LWS's of the same name. */
async function listRevisions(
  c: KubeClients,
  ref: ObjectKey,
  lwsUid: string,
  hash?: string,
): Promise<V1ControllerRevision[]> {
  const labelSelector =
    hash === undefined
      ? `${LABEL_NAME}=${ref.name}`
      : `${LABEL_NAME}=${ref.name},${LABEL_TEMPLATE_REVISION_HASH}=${hash}`;
  const list = await apiCall(() => c.controllerRevisions.list({ namespace: ref.namespace, labelSelector }));
  return list.items.filter((r) => {
    const owner = controllerUid(r.metadata);
    return owner === undefined || owner === lwsUid;
  });
}

function factsOf(r: V1ControllerRevision): RevisionFacts {
  const ownerUid = controllerUid(r.metadata);
  return {
    name: r.metadata?.name ?? '',
    hash: r.metadata?.labels?.[LABEL_TEMPLATE_REVISION_HASH] ?? '',
    revision: r.revision,
    ...(ownerUid !== undefined && { ownerUid }),
  };
}

/**
 * The revision of the LWS's current spec, created once. One that exists from before (a rollback to a template still
 * in use) becomes the newest again, as a StatefulSet's own revisions do.
 */
export async function ensureControllerRevision(c: KubeClients, lws: LeaderWorkerSet): Promise<EnsureRevisionOutcome> {
  const ref = { namespace: lws.metadata.namespace ?? '', name: lws.metadata.name ?? '' };
  const uid = lws.metadata.uid ?? '';
  const hash = revisionKey(lws);
  const revisions = (await listRevisions(c, ref, uid)).map(factsOf);
  // By its key: an adopted one is upstream's, named `<lws>-<key>-<n>`.
  const mine = revisions.filter((r) => r.hash === hash).sort((a, b) => b.revision - a.revision)[0];
  const name = mine?.name ?? controllerRevisionName(ref.name, hash);
  const next = nextRevisionNumber(revisions, name);
  if (mine === undefined) {
    const got = await createOrRead(
      buildControllerRevision(lws, next),
      (ns) => c.controllerRevisions.create(ns, buildControllerRevision(lws, next)),
      (key) => c.controllerRevisions.read(key),
    );
    if ('created' in got) return 'created';
    // Not in the list: another incarnation's (the LWS deleted and made again), which the garbage collector takes.
    if (holder(got.live.metadata, { kind: KIND, uid }) !== 'ours')
      throw stillHeld(`ControllerRevision ${name}`, got.live.metadata);
    return 'unchanged';
  }
  if (revisions.every((r) => r.name === name || r.revision < mine.revision)) return 'unchanged';
  await apiCall(() =>
    c.controllerRevisions.jsonPatch({ namespace: ref.namespace, name }, [
      { op: 'replace', path: '/revision', value: next },
    ]),
  );
  return 'reused';
}

/**
 * Taking over from another controller (upstream's): its leader StatefulSet's key is kept as this spec's when one of its
 * revisions, applied back to the LWS, gives these very templates (as upstream's own SetMatchesRevision judges), so no
 * group rolls. Recorded on the LWS (ANNOTATION_ADOPTED_REVISION); true when it was written now.
 */
export async function adoptRevisionKey(c: KubeClients, lws: LeaderWorkerSet): Promise<boolean> {
  const own = templateRevisionHash(lws.spec);
  if (revisionKey(lws) !== own) return false;
  const ref = { namespace: lws.metadata.namespace ?? '', name: lws.metadata.name ?? '' };
  const uid = lws.metadata.uid ?? '';
  const sts = await orNull(() =>
    c.statefulSets.read({ namespace: ref.namespace, name: leaderStatefulSetName(ref.name) }),
  );
  const key = sts?.metadata?.labels?.[LABEL_TEMPLATE_REVISION_HASH];
  if (key === undefined || key === own || controllerUid(sts?.metadata) !== uid) return false;
  const same = (await listRevisions(c, ref, uid, key)).some(
    (r) => isRevisionData(r.data) && sameTemplates(lwsAtRevision(lws, r.data).spec, lws.spec),
  );
  if (!same) return false;
  // The LWS as read: a change since (a new template) makes the API server refuse the patch, and the next pass decides.
  await apiCall(() =>
    c.leaderWorkerSets.mergePatch(ref, {
      metadata: {
        uid,
        resourceVersion: lws.metadata.resourceVersion,
        annotations: { [ANNOTATION_ADOPTED_REVISION]: adoptedRevision(lws.spec, key) },
      },
    }),
  );
  log('info', 'kept the revision key another controller gave these templates', {
    lws: `${ref.namespace}/${ref.name}`,
    revision: key,
    instead: own,
  });
  return true;
}

/**
 * The LWS as of the revision a group's leader carries, to build that group's workers from; null when no revision of
 * that hash is left (made before revisions were kept, say): the caller then builds from the spec as it is.
 */
export async function lwsAtLeaderRevision(
  c: KubeClients,
  lws: LeaderWorkerSet,
  hash: string,
): Promise<LeaderWorkerSet | null> {
  const ref = { namespace: lws.metadata.namespace ?? '', name: lws.metadata.name ?? '' };
  // Ours has a known name; upstream's are `<lws>-<hash>-<n>`, found by their labels.
  const own = await orNull(() => c.controllerRevisions.read({ ...ref, name: controllerRevisionName(ref.name, hash) }));
  const owned = own !== null && controllerUid(own.metadata) === lws.metadata.uid ? [own] : [];
  const candidates = owned.length > 0 ? owned : await listRevisions(c, ref, lws.metadata.uid ?? '', hash);
  const newest = candidates.sort((a, b) => b.revision - a.revision)[0];
  if (newest === undefined || !isRevisionData(newest.data)) {
    log('warn', 'no ControllerRevision for the leader revision; building the group from the current spec', {
      lws: `${ref.namespace}/${ref.name}`,
      revision: hash,
    });
    return null;
  }
  return lwsAtRevision(lws, newest.data);
}

/** Deletes the revisions no group uses; each by uid, so one made again meanwhile is left. Returns how many went. */
export async function pruneControllerRevisions(
  c: KubeClients,
  input: { ref: ObjectKey; uid: string; current: string; inUse: string[] },
): Promise<number> {
  const revisions = await listRevisions(c, input.ref, input.uid);
  const byName = new Map(revisions.map((r) => [r.metadata?.name ?? '', r]));
  const prune = revisionsToPrune(
    revisions.filter((r) => controllerUid(r.metadata) === input.uid).map(factsOf),
    input.current,
    input.inUse,
  );
  let deleted = 0;
  for (const r of prune) {
    const revisionUid = byName.get(r.name)?.metadata?.uid ?? '';
    try {
      await c.controllerRevisions.delete(
        { namespace: input.ref.namespace, name: r.name },
        { preconditions: { uid: revisionUid }, propagationPolicy: 'Background' },
      );
      deleted++;
    } catch (err) {
      if (!isHttpNotFound(err)) throw classify(err);
    }
  }
  return deleted;
}
