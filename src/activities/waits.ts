// Waiting for one object (one uid) to reach a state: GET, then watch from that GET's resourceVersion. A watch that
// ends or fails (410 Gone included) is followed by a fresh GET and watch, so no event is missed for good. Heartbeats
// let Temporal notice a dead worker; cancelling the activity stops the wait at once.
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import {
  ANNOTATION_OLD_PODS_GONE,
  inForegroundDeletion,
  isPodReady,
  isStatefulSetReady,
  type ObjectIdentity,
} from '../model/index.js';
import { throwIfCancelled } from './activity-context.js';
import type { KubeClients } from './clients.js';
import { orNull } from './kube-errors.js';
import type {
  DeadNodeOptions,
  GoneResult,
  NamesFreedInput,
  NamesFreedResult,
  ReadyResult,
  ScheduledResult,
  StuckResult,
} from './types.js';
import { podsPath, statefulSetsPath } from '../kube/kube-json.js';
import { now, pause, RETRY_PAUSE_MS, withHeartbeats } from './wait-support.js';
import { watchOnce } from '../kube/watch.js';
import { latestOf } from '../shared/instants.js';
import { releaseAsRead } from './deletes.js';
import { orStuck, StuckWatch } from './dead-nodes.js';

interface Watched {
  metadata?: { uid?: string; resourceVersion?: string };
}

/** `evaluate` sees null when no object of that name exists, and returns undefined until the wait is over. */
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
    /** The caller's own read, just made: the first watch starts from it instead of a GET. */
    first?: T | null;
  },
): Promise<R> {
  return withHeartbeats(spec.what, async (cancelled) => {
    const signal = spec.stop ? AbortSignal.any([cancelled, spec.stop]) : cancelled;
    let first = spec.first;
    for (;;) {
      throwIfCancelled(signal);
      const current = first !== undefined ? first : await spec.read();
      first = undefined;
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
      if ('error' in end) {
        c.retried?.('watch-restart');
        await pause(RETRY_PAUSE_MS, signal);
      }
    }
  });
}

interface Kind<T> {
  label: string;
  listPath(namespace: string): string;
  read(c: KubeClients, key: { namespace: string; name: string }): Promise<T>;
}

const POD: Kind<V1Pod> = { label: 'pod', listPath: podsPath, read: (c, key) => c.pods.read(key) };
const STATEFUL_SET: Kind<V1StatefulSet> = {
  label: 'StatefulSet',
  listPath: statefulSetsPath,
  read: (c, key) => c.statefulSets.read(key),
};

/** `evaluate` sees null once no object of the target's uid exists: another incarnation of the name counts as gone. */
function waitFor<T extends Watched, R>(
  c: KubeClients,
  kind: Kind<T>,
  target: ObjectIdentity,
  what: string,
  evaluate: (current: T | null) => R | undefined,
  stop?: AbortSignal,
  first?: T | null,
): Promise<R> {
  const { namespace, name, uid } = target;
  const ours = (obj: T | null) => (obj !== null && obj.metadata?.uid === uid ? obj : null);
  return observeByName<T, R>(c, {
    what: `waiting for ${kind.label} ${namespace}/${name} (${uid}) ${what}`,
    name,
    listPath: kind.listPath(namespace),
    read: () => orNull(() => kind.read(c, { namespace, name })),
    evaluate: (obj) => evaluate(ours(obj)),
    ...(stop && { stop }),
    ...(first !== undefined && { first }),
  });
}

const gone = (obj: unknown) => (obj === null ? { goneAt: now() } : undefined);

/**
 * Every target gone, each on its own watch: the last one's deletion ends the wait, with no read of the others after it
 * (they terminate together). The first failure stops the other watches.
 */
async function allGone(
  c: KubeClients,
  targets: { kind: Kind<Watched>; target: ObjectIdentity; first?: Watched | null }[],
): Promise<string> {
  if (targets.length === 0) return now();
  const stop = new AbortController();
  try {
    const each = await Promise.all(
      targets.map(({ kind, target, first }) => waitFor(c, kind, target, 'to be gone', gone, stop.signal, first)),
    );
    return latestOf(each.map((g) => g.goneAt)) ?? now();
  } finally {
    stop.abort();
  }
}

/** Or stuck: past its grace period on a dead node (dead-nodes.ts), as its watch sees it. */
export function waitForPodGone(
  c: KubeClients,
  target: ObjectIdentity,
  deadNodes: DeadNodeOptions = {},
): Promise<GoneResult | StuckResult> {
  const watch = new StuckWatch(c, deadNodes);
  return orStuck(watch, (stop) =>
    waitFor<V1Pod, GoneResult>(
      c,
      POD,
      target,
      'to be gone',
      (pod) => {
        watch.seen(target, pod);
        return gone(pod);
      },
      stop,
    ),
  );
}

export function waitForStatefulSetGone(c: KubeClients, target: ObjectIdentity): Promise<GoneResult> {
  return waitFor(c, STATEFUL_SET, target, 'to be gone', gone);
}

/**
 * The StatefulSet and the pods together, each on its watch: under Sequential the garbage collector removes the
 * StatefulSet with the leader, so nothing is left to wait for after the last pod. One that only its foreground deletion
 * keeps (Parallel) is released once the pods are gone, or `releasable` if the release was refused.
 */
export async function waitForNamesFreed(c: KubeClients, input: NamesFreedInput): Promise<NamesFreedResult> {
  const freed = await namesFreed(c, input);
  if (input.successor && 'goneAt' in freed) await markOldPodsGone(c, input.successor, freed.goneAt);
  return freed;
}

async function namesFreed(c: KubeClients, input: NamesFreedInput): Promise<NamesFreedResult> {
  const { statefulSet: sts, pods } = input;
  const live = sts && (await orNull(() => c.statefulSets.read(sts)));
  const podTargets = pods.map((target) => ({ kind: POD, target }));
  if (sts && live?.metadata?.uid === sts.uid && inForegroundDeletion(live.metadata)) {
    await allGone(c, podTargets);
    // Released as the last pod goes, from the read above: no turn through the workflow before the names are free.
    // Best effort: on any refusal the workflow releases it, or waits for the garbage collector.
    const released = await releaseAsRead(c, live, pods).catch(() => 'failed' as const);
    return released === 'released' || released === 'absent' ? { goneAt: now() } : { releasable: sts };
  }
  // The watch on the StatefulSet starts from the read above.
  const stsTarget = sts ? [{ kind: STATEFUL_SET, target: sts, first: live ?? null }] : [];
  return { goneAt: await allGone(c, [...stsTarget, ...podTargets]) };
}

/**
 * The StatefulSet controller retried the successor's pods with a growing backoff while the names were held, and no
 * event of the old pods reaches it (they are another StatefulSet's): a write to it makes it sync now. Best effort: a
 * successor gone or replaced needs nothing, and any other failure leaves the pods to that backoff.
 */
async function markOldPodsGone(c: KubeClients, successor: ObjectIdentity, goneAt: string): Promise<void> {
  await c.statefulSets
    .mergePatch(successor, { metadata: { uid: successor.uid, annotations: { [ANNOTATION_OLD_PODS_GONE]: goneAt } } })
    .catch(() => undefined);
}

export function waitForPodReady(c: KubeClients, target: ObjectIdentity): Promise<ReadyResult> {
  return waitFor<V1Pod, ReadyResult>(c, POD, target, 'to be Ready', (pod) => {
    if (pod === null) return { goneAt: now() };
    return isPodReady(pod) ? { readyAt: now() } : undefined;
  });
}

export function waitForPodScheduled(c: KubeClients, target: ObjectIdentity): Promise<ScheduledResult> {
  return waitFor<V1Pod, ScheduledResult>(c, POD, target, 'to be scheduled', (pod) => {
    if (pod === null) return { goneAt: now() };
    const node = pod.spec?.nodeName;
    return node ? { node } : undefined;
  });
}

export function waitForStatefulSetReady(c: KubeClients, target: ObjectIdentity): Promise<ReadyResult> {
  return waitFor<V1StatefulSet, ReadyResult>(c, STATEFUL_SET, target, 'to be ready', (sts) => {
    if (sts === null) return { goneAt: now() };
    return isStatefulSetReady(sts) ? { readyAt: now() } : undefined;
  });
}
