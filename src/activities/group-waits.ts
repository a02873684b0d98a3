// Waits over a whole group, for the teardown timeline: its old pods going away, and its replacement coming up.
// Each builds on observeByName (GET, then watch from that resourceVersion, heartbeating throughout).
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import type { KubeClients } from './clients.js';
import { orNull } from './kube-errors.js';
import { isPodReady, isoTime } from './summaries.js';
import type { ObjectIdentity, PodsGoneResult, ReplacementGroupResult } from './types.js';
import { podsPath, statefulSetsPath } from './kube-json.js';
import { now } from './wait-support.js';
import { observeByName } from './waits.js';

function readPod(c: KubeClients, namespace: string, name: string) {
  return orNull(() => c.pods.read({ namespace, name }));
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
    await observeByName<V1Pod, true>(c, {
      what: `gone: pod ${target.namespace}/${target.name}`,
      listPath: podsPath(input.namespace),
      name: target.name,
      read: () => readPod(c, input.namespace, target.name),
      evaluate: (pod) => {
        const mine = ours(pod, target.uid);
        if (mine?.metadata?.deletionTimestamp || mine === null) terminatingAt ??= now();
        return mine === null ? true : undefined;
      },
    });
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
  const leader = await observeByName<V1Pod, V1Pod>(c, {
    what: `ready: replacement of ${namespace}/${input.leaderName}`,
    listPath: podsPath(namespace),
    name: input.leaderName,
    read: () => readPod(c, namespace, input.leaderName),
    evaluate: (pod) =>
      pod !== null &&
      pod.metadata?.uid !== input.previousLeaderUid &&
      !pod.metadata?.deletionTimestamp &&
      isPodReady(pod)
        ? pod
        : undefined,
  });
  const identity: ObjectIdentity = { namespace, name: input.leaderName, uid: leader.metadata?.uid ?? '' };
  const leaderCreatedAt = isoTime(leader.metadata?.creationTimestamp) ?? now();
  if (input.size <= 1) return { leader: identity, leaderCreatedAt, readyAt: now() };
  await observeByName<V1StatefulSet, true>(c, {
    what: `ready: workers of ${namespace}/${input.leaderName}`,
    listPath: statefulSetsPath(namespace),
    name: input.workerStatefulSetName,
    read: () => orNull(() => c.statefulSets.read({ namespace, name: input.workerStatefulSetName })),
    evaluate: (sts) =>
      sts !== null &&
      sts.metadata?.ownerReferences?.some((o) => o.controller && o.uid === identity.uid) &&
      (sts.status?.readyReplicas ?? 0) >= input.size - 1
        ? true
        : undefined,
  });
  return { leader: identity, leaderCreatedAt, readyAt: now() };
}
