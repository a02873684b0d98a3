// Waits over a whole group, for the teardown timeline: its old pods going away, and its replacement coming up.
// Each builds on one-object waits (GET, then watch from that resourceVersion), heartbeating throughout.
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { cancellationSignal, heartbeat, throwIfCancelled } from './activity-context.js';
import type { KubeClients } from './clients.js';
import { orNull } from './kube-errors.js';
import { isPodReady, isoTime } from './summaries.js';
import type { ObjectIdentity, PodsGoneResult, ReplacementGroupResult } from './types.js';
import { watchOnce } from './watch.js';

const HEARTBEAT_MS = 5_000;
const RETRY_PAUSE_MS = 1_000;
const now = () => new Date().toISOString();

/**
 * GET `name` and evaluate it; if that gives no answer, watch it from the GET's resourceVersion until `evaluate`
 * does. `evaluate` sees null when no object of that name exists.
 */
async function observe<T extends { metadata?: { resourceVersion?: string } }, R>(
  c: KubeClients,
  what: string,
  listPath: string,
  name: string,
  read: () => Promise<T | null>,
  evaluate: (obj: T | null) => R | undefined,
): Promise<R> {
  const signal = cancellationSignal();
  heartbeat(what);
  const beat = setInterval(() => heartbeat(what), HEARTBEAT_MS);
  try {
    for (;;) {
      throwIfCancelled(signal);
      const current = await read();
      const reached = evaluate(current);
      if (reached !== undefined) return reached;
      const end = await watchOnce(
        c.kc,
        {
          listPath,
          fieldSelector: `metadata.name=${name}`,
          resourceVersion: current?.metadata?.resourceVersion,
          signal,
        },
        (type, obj) => evaluate(type === 'DELETED' ? null : (obj as T)),
      );
      if ('result' in end) return end.result;
      if ('error' in end) await new Promise((r) => setTimeout(r, RETRY_PAUSE_MS));
    }
  } finally {
    clearInterval(beat);
  }
}

const podsPath = (ns: string) => `/api/v1/namespaces/${encodeURIComponent(ns)}/pods`;
const statefulSetsPath = (ns: string) => `/apis/apps/v1/namespaces/${encodeURIComponent(ns)}/statefulsets`;

function readPod(c: KubeClients, namespace: string, name: string) {
  return orNull(() => c.core.readNamespacedPod({ namespace, name }));
}

/**
 * Resolves once none of the pods (by uid) exists. The pods of a group terminate together, so waiting for them one
 * after the other costs no more than the slowest; the first wait also notes when termination began.
 */
export async function waitForPodsGone(
  c: KubeClients,
  input: { namespace: string; pods: ObjectIdentity[] },
): Promise<PodsGoneResult> {
  let terminatingAt: string | undefined;
  const ours = (pod: V1Pod | null, uid: string) => (pod !== null && pod.metadata?.uid === uid ? pod : null);
  for (const target of input.pods) {
    await observe(
      c,
      `gone: pod ${target.namespace}/${target.name}`,
      podsPath(input.namespace),
      target.name,
      () => readPod(c, input.namespace, target.name),
      (pod) => {
        const mine = ours(pod, target.uid);
        if (mine?.metadata?.deletionTimestamp || mine === null) terminatingAt ??= now();
        return mine === null ? true : undefined;
      },
    );
  }
  return { goneAt: now(), terminatingAt };
}

/** Resolves once a new leader (not `previousLeaderUid`) is Ready and, for size > 1, its workers are all ready. */
export async function waitForReplacementGroupReady(
  c: KubeClients,
  input: {
    namespace: string;
    leaderName: string;
    workerStatefulSetName: string;
    previousLeaderUid: string;
    size: number;
  },
): Promise<ReplacementGroupResult> {
  const { namespace } = input;
  const leader = await observe(
    c,
    `ready: replacement of ${namespace}/${input.leaderName}`,
    podsPath(namespace),
    input.leaderName,
    () => readPod(c, namespace, input.leaderName),
    (pod) =>
      pod !== null &&
      pod.metadata?.uid !== input.previousLeaderUid &&
      !pod.metadata?.deletionTimestamp &&
      isPodReady(pod)
        ? pod
        : undefined,
  );
  const identity: ObjectIdentity = { namespace, name: input.leaderName, uid: leader.metadata?.uid ?? '' };
  const leaderCreatedAt = isoTime(leader.metadata?.creationTimestamp) ?? now();
  if (input.size <= 1) return { leader: identity, leaderCreatedAt, readyAt: now() };
  await observe<V1StatefulSet, true>(
    c,
    `ready: workers of ${namespace}/${input.leaderName}`,
    statefulSetsPath(namespace),
    input.workerStatefulSetName,
    () => orNull(() => c.apps.readNamespacedStatefulSet({ namespace, name: input.workerStatefulSetName })),
    (sts) =>
      sts !== null &&
      sts.metadata?.ownerReferences?.some((o) => o.controller && o.uid === identity.uid) &&
      (sts.status?.readyReplicas ?? 0) >= input.size - 1
        ? true
        : undefined,
  );
  return { leader: identity, leaderCreatedAt, readyAt: now() };
}
