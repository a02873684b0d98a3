// Waiting for one object (one uid) to reach a state: GET, and if it is not there yet, watch from that GET's
// resourceVersion until it is. A watch that ends or fails (410 Gone included) is followed by a fresh GET and watch,
// so no event can be missed for good. Heartbeats let Temporal notice a dead worker; cancelling the activity stops
// the wait at once.
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { isPodReady, isStatefulSetReady, type ObjectIdentity } from '../model/index.js';
import { throwIfCancelled } from './activity-context.js';
import type { KubeClients } from './clients.js';
import { orNull } from './kube-errors.js';

import type { GoneResult, NamesFreedResult, ReadyResult } from './types.js';
import { podsPath, statefulSetsPath } from '../kube/kube-json.js';
import { now, pause, RETRY_PAUSE_MS, withHeartbeats } from './wait-support.js';
import { watchOnce } from '../kube/watch.js';

interface Watched {
  metadata?: { uid?: string; resourceVersion?: string };
}

/**
 * GET the object of `name`, and if `evaluate` gives no answer yet, watch it from that GET's resourceVersion until it
 * does. `evaluate` sees null when no object of that name exists. Shared by the one-uid waits below and the group waits.
 */
export function observeByName<T extends Watched, R>(
  c: KubeClients,
  spec: {
    what: string;
    name: string;
    listPath: string;
    read(): Promise<T | null>;
    evaluate(obj: T | null): R | undefined;
    /** Ends the wait early (besides the activity's cancellation): it then rejects with the signal's reason. */
    stop?: AbortSignal;
  },
): Promise<R> {
  return withHeartbeats(spec.what, async (cancelled) => {
    const signal = spec.stop ? AbortSignal.any([cancelled, spec.stop]) : cancelled;
    for (;;) {
      throwIfCancelled(signal);
      const current = await spec.read();
      const reached = spec.evaluate(current);
      if (reached !== undefined) return reached;
      const end = await watchOnce(
        c.kc,
        {
          listPath: spec.listPath,
          fieldSelector: `metadata.name=${spec.name}`,
          resourceVersion: current?.metadata?.resourceVersion,
          signal,
        },
        (type, obj) => spec.evaluate(type === 'DELETED' ? null : (obj as T)),
      );
      if ('result' in end) return end.result;
      if ('error' in end) await pause(RETRY_PAUSE_MS, signal);
    }
  });
}

interface WaitSpec<T extends Watched, R> {
  what: string;
  target: ObjectIdentity;
  listPath: string;
  read(): Promise<T | null>;
  /** The result once reached; `current` is null when no object of the target's uid exists. */
  evaluate(current: T | null): R | undefined;
}

function waitUntil<T extends Watched, R>(c: KubeClients, spec: WaitSpec<T, R>): Promise<R> {
  // The target only: another incarnation of the name counts as "ours is absent".
  const ours = (obj: T | null) => (obj !== null && obj.metadata?.uid === spec.target.uid ? obj : null);
  return observeByName<T, R>(c, { ...spec, name: spec.target.name, evaluate: (obj) => spec.evaluate(ours(obj)) });
}

function waitForPod<R>(
  c: KubeClients,
  target: ObjectIdentity,
  what: string,
  evaluate: (pod: V1Pod | null) => R | undefined,
) {
  const { namespace, name } = target;
  return waitUntil<V1Pod, R>(c, {
    what: `waiting for pod ${namespace}/${name} (${target.uid}) ${what}`,
    target,
    listPath: podsPath(namespace),
    read: () => orNull(() => c.pods.read({ namespace, name })),
    evaluate,
  });
}

function waitForStatefulSet<R>(
  c: KubeClients,
  target: ObjectIdentity,
  what: string,
  evaluate: (sts: V1StatefulSet | null) => R | undefined,
) {
  const { namespace, name } = target;
  return waitUntil<V1StatefulSet, R>(c, {
    what: `waiting for StatefulSet ${namespace}/${name} (${target.uid}) ${what}`,
    target,
    listPath: statefulSetsPath(namespace),
    read: () => orNull(() => c.statefulSets.read({ namespace, name })),
    evaluate,
  });
}

export function waitForPodGone(c: KubeClients, target: ObjectIdentity): Promise<GoneResult> {
  return waitForPod(c, target, 'to be gone', (pod) => (pod === null ? { goneAt: now() } : undefined));
}

export function waitForStatefulSetGone(c: KubeClients, target: ObjectIdentity): Promise<GoneResult> {
  return waitForStatefulSet(c, target, 'to be gone', (s) => (s === null ? { goneAt: now() } : undefined));
}

/**
 * The pods gone, and the StatefulSet too unless only its foreground deletion keeps it (then `releasable`). Otherwise
 * the StatefulSet first: under Sequential the garbage collector removes it with the leader, long before its pods, so
 * nothing is left to wait for after the last pod.
 */
export async function waitForNamesFreed(
  c: KubeClients,
  input: { statefulSet?: ObjectIdentity; pods: ObjectIdentity[] },
): Promise<NamesFreedResult> {
  const { statefulSet: sts, pods } = input;
  const live = sts && (await orNull(() => c.statefulSets.read(sts)));
  if (sts && live?.metadata?.uid === sts.uid && live.metadata.finalizers?.includes('foregroundDeletion')) {
    for (const pod of pods) await waitForPodGone(c, pod);
    return { releasable: sts };
  }
  let last: GoneResult = { goneAt: now() };
  if (sts) last = await waitForStatefulSetGone(c, sts);
  for (const pod of pods) last = await waitForPodGone(c, pod);
  return last;
}

export function waitForPodReady(c: KubeClients, target: ObjectIdentity): Promise<ReadyResult> {
  return waitForPod<ReadyResult>(c, target, 'to be Ready', (pod) => {
    if (pod === null) return { goneAt: now() };
    return isPodReady(pod) ? { readyAt: now() } : undefined;
  });
}

export function waitForStatefulSetReady(c: KubeClients, target: ObjectIdentity): Promise<ReadyResult> {
  return waitForStatefulSet<ReadyResult>(c, target, 'to be ready', (sts) => {
    if (sts === null) return { goneAt: now() };
    return isStatefulSetReady(sts) ? { readyAt: now() } : undefined;
  });
}
