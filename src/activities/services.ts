// The headless Services: the LWS's own under Shared, one per group under UniquePerReplica (owned by its leader pod). The only
// field ever brought back in line is the selector, which changes with spec.networkConfig.subdomainPolicy.
import type { V1Service } from '@kubernetes/client-node';
import { buildHeadlessService, canonicalJson, KIND } from '../model/index.js';
import type { LeaderWorkerSet } from '../model/index.js';
import type { KubeClients } from './clients.js';
import { createOrRead } from './create-or-read.js';
import { apiCall } from './kube-errors.js';
import { holder, stillHeld } from './ownership.js';
import type { EnsureOutcome } from './types.js';

/** A previous owner's Service (being garbage-collected): a retryable error. Someone else's: left alone, as upstream. */
export async function ensureService(
  c: KubeClients,
  built: V1Service,
  owner: { kind: string; uid: string },
): Promise<EnsureOutcome> {
  const namespace = built.metadata?.namespace ?? '';
  const name = built.metadata?.name ?? '';
  const got = await createOrRead(
    built,
    (ns) => c.services.create(ns, built),
    (key) => c.services.read(key),
  );
  if ('created' in got) return 'created';
  const { live } = got;
  const who = holder(live.metadata, owner);
  if (who === 'previous') throw stillHeld(`Service ${namespace}/${name}`, live.metadata);
  if (who === 'foreign') return 'unchanged';
  if (canonicalJson(live.spec?.selector ?? {}) === canonicalJson(built.spec?.selector ?? {})) return 'unchanged';
  // A replace (not a merge patch, which cannot drop a selector key); resourceVersion guards against lost updates.
  live.spec = { ...live.spec, selector: built.spec?.selector ?? {} };
  await apiCall(() => c.services.replace({ namespace, name }, live));
  return 'updated';
}

/** Under UniquePerReplica there is none to make (as upstream); one left from a Shared past stays, owned by the LWS. */
export async function ensureHeadlessService(c: KubeClients, lws: LeaderWorkerSet): Promise<EnsureOutcome> {
  const built = buildHeadlessService(lws);
  if (built === undefined) return 'unchanged';
  return ensureService(c, built, { kind: KIND, uid: lws.metadata.uid ?? '' });
}
