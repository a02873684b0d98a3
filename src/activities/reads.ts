// Reads: the LWS as stored (for the activities that build from it) or as the facts the workflows decide on, one pod
// or StatefulSet, and the groups of an LWS. Absent objects are null, never errors.
import {
  byName,
  leaderFactsOf,
  leaderStatefulSetFacts,
  leaderStatefulSetName,
  lwsFacts,
  podFacts,
  selectors,
  statefulSetFacts,
  workerSetFactsOf,
  type LeaderWorkerSet,
  type LwsFacts,
  type ObjectKey,
  type PodFacts,
  type StatefulSetFacts,
} from '../model/index.js';
import type { KubeClients } from './clients.js';
import type { Groups } from './types.js';
import { apiCall, orNull } from './kube-errors.js';

export async function readLeaderWorkerSet(c: KubeClients, ref: ObjectKey): Promise<LeaderWorkerSet | null> {
  const lws = await orNull(() => c.leaderWorkerSets.read(ref));
  c.recentLws?.remember(ref, lws);
  return lws;
}

/** Its facts only: what an activity returns reaches the workflow's history (model/lws-facts.ts). */
export async function getLeaderWorkerSet(c: KubeClients, ref: ObjectKey): Promise<LwsFacts | null> {
  const lws = await readLeaderWorkerSet(c, ref);
  return lws && lwsFacts(lws);
}

export async function getPod(c: KubeClients, key: ObjectKey): Promise<PodFacts | null> {
  const pod = await orNull(() => c.pods.read(key));
  return (pod && podFacts(pod)) ?? null;
}

export async function getStatefulSet(c: KubeClients, key: ObjectKey): Promise<StatefulSetFacts | null> {
  const sts = await orNull(() => c.statefulSets.read(key));
  return (sts && statefulSetFacts(sts)) ?? null;
}

/** One label of a node: exclusive placement pins a group's workers to its leader's topology domain. */
export async function getNodeLabel(c: KubeClients, input: { node: string; label: string }): Promise<string | null> {
  const node = await orNull(() => c.nodes.read({ namespace: '', name: input.node }));
  return node?.metadata?.labels?.[input.label] ?? null;
}

export async function listGroups(c: KubeClients, { namespace, name }: ObjectKey): Promise<Groups> {
  const [pods, statefulSets, leaderSts] = await Promise.all([
    apiCall(() => c.pods.list({ namespace, labelSelector: selectors.leadersOf(name) })),
    apiCall(() => c.statefulSets.list({ namespace, labelSelector: selectors.workerStatefulSetsOf(name) })),
    orNull(() => c.statefulSets.read({ namespace, name: leaderStatefulSetName(name) })),
  ]);
  const leaderStatefulSet = leaderSts && leaderStatefulSetFacts(leaderSts);
  return {
    leaders: pods.items
      .flatMap((p) => podFacts(p) ?? [])
      .sort(byName)
      .map(leaderFactsOf),
    workerStatefulSets: statefulSets.items
      .flatMap((s) => statefulSetFacts(s) ?? [])
      .sort(byName)
      .map(workerSetFactsOf),
    ...(leaderStatefulSet && { leaderStatefulSet }),
  };
}

export async function listGroupPods(
  c: KubeClients,
  input: { namespace: string; lwsName: string; groupIndex: number },
): Promise<PodFacts[]> {
  const labelSelector = selectors.groupPods(input.lwsName, input.groupIndex);
  const pods = await apiCall(() => c.pods.list({ namespace: input.namespace, labelSelector }));
  return pods.items.flatMap((p) => podFacts(p) ?? []).sort(byName);
}
