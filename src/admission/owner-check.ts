// A pod of a StatefulSet that is gone or being deleted is refused at creation. After an API server restart the
// StatefulSet controller can act on a cache that still holds a StatefulSet already deleted, and make its pods again
// the moment the old ones are gone (docs/reliability.md): the garbage collector takes them, but meanwhile a group
// that no longer exists holds pods, and on a real cluster GPUs and image pulls. Refused, the controller retries until
// its cache shows the deletion, and then stops.
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../log.js';

/** What the check needs of the live StatefulSet; null when there is none of that name. */
export interface LiveStatefulSet {
  uid?: string;
  deletionTimestamp?: string | Date;
}

export type StatefulSetLookup = (namespace: string, name: string) => Promise<LiveStatefulSet | null>;

/** The pod's controlling StatefulSet, from its ownerReferences. */
export function statefulSetOwner(pod: V1Pod): { name: string; uid: string } | undefined {
  const ref = pod.metadata?.ownerReferences?.find((r) => r.controller === true);
  return ref?.kind === 'StatefulSet' && ref.apiVersion.startsWith('apps/')
    ? { name: ref.name, uid: ref.uid }
    : undefined;
}

/** Why the pod must not be made, or undefined. Pure: `live` is the StatefulSet of the owner's name now. */
export function ownerRefusal(
  namespace: string,
  pod: V1Pod,
  owner: { name: string; uid: string },
  live: LiveStatefulSet | null,
): string | undefined {
  const what = `pod ${namespace}/${pod.metadata?.name ?? pod.metadata?.generateName ?? ''}`;
  const sts = `StatefulSet ${namespace}/${owner.name} (uid ${owner.uid})`;
  if (live === null || live.uid !== owner.uid) {
    return `${what}: its ${sts} no longer exists; the StatefulSet controller's cache is behind, and it stops once it sees the deletion`;
  }
  if (live.deletionTimestamp) {
    return `${what}: its ${sts} is being deleted; no new pod of it is admitted`;
  }
  return undefined;
}

/**
 * The check with its one read. Fails open: when the StatefulSet cannot be read (the API server busy, a role without
 * the get), the pod is admitted as before and the garbage collector remains the safety net.
 */
export function ownerCheck(lookup: StatefulSetLookup, log: Logger) {
  const read = sharedWhileInFlight(lookup);
  return async (namespace: string, pod: V1Pod): Promise<string | undefined> => {
    const owner = statefulSetOwner(pod);
    if (owner === undefined) return undefined;
    let live: LiveStatefulSet | null;
    try {
      live = await read(namespace, owner.name);
    } catch (err) {
      log.warn("could not read the pod's StatefulSet; admitting the pod unchecked", {
        namespace,
        statefulSet: owner.name,
        error: err instanceof Error ? err.message : String(err),
      });
      return undefined;
    }
    return ownerRefusal(namespace, pod, owner, live);
  };
}

export type OwnerCheck = ReturnType<typeof ownerCheck>;

/**
 * Lookups of one StatefulSet while a read of it is on its way share that read. The StatefulSet controller creates a
 * set's pods in concurrent batches (a thousand leaders of one leader StatefulSet at once): one read each doubled the
 * API server's requests for them. A shared read started at most one round trip before the pod's review, where the
 * check guards against a controller cache that is seconds behind.
 */
export function sharedWhileInFlight(lookup: StatefulSetLookup): StatefulSetLookup {
  const inFlight = new Map<string, Promise<LiveStatefulSet | null>>();
  return (namespace, name) => {
    const key = `${namespace}/${name}`;
    let read = inFlight.get(key);
    if (read === undefined) {
      read = lookup(namespace, name).finally(() => inFlight.delete(key));
      inFlight.set(key, read);
    }
    return read;
  };
}
