// Create-or-confirm: create the object, or, when its name is taken, read the one that holds it.
import type { ObjectKey } from '../model/index.js';
import { isHttpConflict, isHttpNotFound } from '../kube/api-errors.js';
import { classify } from './kube-errors.js';

/** One that went away between the 409 and the read leaves the name free: created again. */
export async function createOrRead<T extends { metadata?: { namespace?: string; name?: string } }>(
  built: T,
  create: (namespace: string) => Promise<T>,
  read: (key: ObjectKey) => Promise<T>,
): Promise<{ created: T } | { live: T }> {
  const namespace = built.metadata?.namespace ?? '';
  const name = built.metadata?.name ?? '';
  for (;;) {
    try {
      return { created: await create(namespace) };
    } catch (err) {
      if (!isHttpConflict(err)) throw classify(err);
    }
    try {
      return { live: await read({ namespace, name }) };
    } catch (err) {
      if (!isHttpNotFound(err)) throw classify(err);
    }
  }
}
