// An older incarnation's objects hold the names a new one needs (a group's worker pods, an LWS's leader pods): wait
// until they are gone. A StatefulSet that only its foreground deletion keeps is released rather than waited for.
import type { ObjectIdentity } from '../model/index.js';
import { kube, wait } from './activities.js';

/** Resolves with when the names were seen free. */
export async function waitForOldObjectsGone(old: {
  statefulSet?: ObjectIdentity;
  pods: ObjectIdentity[];
}): Promise<string> {
  const freed = await wait.waitForNamesFreed(old);
  if ('goneAt' in freed) return freed.goneAt;
  const released = await kube.releaseForegroundDeletion({ statefulSet: freed.releasable, pods: old.pods });
  if (released !== 'released' && released !== 'absent') await wait.waitForStatefulSetGone(freed.releasable);
  return new Date().toISOString();
}
