// The pods that hold a StatefulSet's pod names, whoever controls them. The StatefulSet controller cannot create a pod
// over a name in use and retries with a backoff that doubles up to minutes, so a StatefulSet created while an older
// incarnation's pods hold its names gets its pods that much late (6-7 s at G = 10 s).
import type { V1Pod } from '@kubernetes/client-node';
import type { ObjectKey } from '../model/index.js';
import type { KubeClients } from './clients.js';
import { apiCall } from './kube-errors.js';

/**
 * The pods named after the StatefulSet `{ namespace, name }` and carrying `labels`: the callers pass only the labels
 * every incarnation of that StatefulSet has, since an older one's pods may differ in the rest of the selector.
 */
export async function podsOfNames(
  c: KubeClients,
  { namespace, name }: ObjectKey,
  labels: Record<string, string>,
  firstOrdinal: 0 | 1,
): Promise<V1Pod[]> {
  const prefix = `${name}-`;
  const labelSelector = Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const ordinal = firstOrdinal === 0 ? /^(0|[1-9][0-9]*)$/ : /^[1-9][0-9]*$/;
  const pods = await apiCall(() => c.pods.list({ namespace, labelSelector }));
  return pods.items.filter((p) => {
    const name = p.metadata?.name ?? '';
    return name.startsWith(prefix) && ordinal.test(name.slice(prefix.length));
  });
}
