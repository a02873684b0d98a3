// Waits over a whole group, for the teardown timeline: its old pods going away, its replacement coming up.
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import type { KubeClients } from './clients.js';
import { orNull } from './kube-errors.js';
import type {
  DeadNodeOptions,
  PodsGoneResult,
  ReplacementGroupInput,
  ReplacementGroupResult,
  StuckResult,
} from './types.js';
import { podsPath, statefulSetsPath } from '../kube/kube-json.js';
import { now, pause } from './wait-support.js';
import { getLeaderWorkerSet, getStatefulSet } from './reads.js';
import {
  controllerUid,
  isPodReady,
  isoTime,
  leaderStatefulSetName,
  leaderStatefulSetReplicas,
  notWantedAbove,
  wantsGroup,
  type ObjectIdentity,
} from '../model/index.js';
import { observeByName } from './waits.js';
import { orStuck, StuckWatch } from './dead-nodes.js';

function readPod(c: KubeClients, namespace: string, name: string) {
  return orNull(() => c.pods.read({ namespace, name }));
}

/**
 * By uid. The pods of a group terminate together: waiting for one after another costs no more than the slowest. Or
 * stuck: the one watched is past its grace period on a dead node, with every later one that is too (dead-nodes.ts).
 */
export async function waitForPodsGone(
  c: KubeClients,
  input: { namespace: string; pods: ObjectIdentity[] } & DeadNodeOptions,
): Promise<PodsGoneResult | StuckResult> {
  let terminatingAt: string | undefined;
  let watching = 0;
  const watch = new StuckWatch(c, input, () => input.pods.slice(watching + 1));
  const ours = (pod: V1Pod | null, uid: string) => (pod !== null && pod.metadata?.uid === uid ? pod : null);
  for (const [i, target] of input.pods.entries()) {
    watching = i;
    const end = await orStuck(watch, (stop) =>
      observeByName<V1Pod, true>(c, {
        what: `gone: pod ${target.namespace}/${target.name}`,
        listPath: podsPath(input.namespace),
        name: target.name,
        stop,
        read: () => readPod(c, input.namespace, target.name),
        evaluate: (pod) => {
          const mine = ours(pod, target.uid);
          watch.seen(target, mine);
          if (mine?.metadata?.deletionTimestamp || mine === null) terminatingAt ??= now();
          return mine === null ? true : undefined;
        },
      }),
    );
    if (end !== true) return { ...end, ...(terminatingAt !== undefined && { terminatingAt }) };
  }
  return { goneAt: now(), terminatingAt };
}

/** How often a replacement wait looks whether the LWS still wants the group. */
export const REPLACEMENT_CHECK_MS = 15_000;

/** Also ends once the LWS no longer wants the group: no waiting for a replacement that never comes. */
export async function waitForReplacementGroupReady(
  c: KubeClients,
  input: ReplacementGroupInput,
): Promise<ReplacementGroupResult> {
  const { group } = input;
  const stop = new AbortController();
  try {
    return await Promise.race([
      replacementReady(c, input, stop.signal),
      untilNotWanted(c, input.namespace, group, stop.signal).then((notWanted) => ({ notWanted })),
    ]);
  } finally {
    stop.abort();
  }
}

async function untilNotWanted(
  c: KubeClients,
  namespace: string,
  { lwsName, groupIndex }: { lwsName: string; groupIndex: number },
  stop: AbortSignal,
): Promise<string> {
  for (;;) {
    await pause(c.replacementCheckMs ?? REPLACEMENT_CHECK_MS, stop);
    if (stop.aborted) return 'stopped'; // the replacement came first; nobody reads this
    // A failed look is no answer: the next one comes soon enough, and the wait itself goes on meanwhile.
    const lws = await getLeaderWorkerSet(c, { namespace, name: lwsName }).catch(() => undefined);
    if (lws === undefined) continue;
    if (lws === null) return 'the LWS is gone';
    if (lws.metadata.deletionTimestamp) return 'the LWS is being deleted';
    if (wantsGroup(lws, groupIndex)) continue;
    // Above replicas: a surge group is still wanted while the rolling update keeps it in the leader StatefulSet.
    const leaderSet = await getStatefulSet(c, { namespace, name: leaderStatefulSetName(lwsName) }).catch(
      () => undefined,
    );
    if (leaderSet === undefined) continue;
    if (wantsGroup(lws, groupIndex, leaderStatefulSetReplicas(lws, leaderSet))) continue;
    return notWantedAbove(lws.spec.replicas);
  }
}

async function replacementReady(
  c: KubeClients,
  input: ReplacementGroupInput,
  stop?: AbortSignal,
): Promise<ReplacementGroupResult> {
  const { namespace } = input;
  const leader = await observeByName<V1Pod, V1Pod>(c, {
    what: `ready: replacement of ${namespace}/${input.leaderName}`,
    listPath: podsPath(namespace),
    name: input.leaderName,
    stop,
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
    stop,
    read: () => orNull(() => c.statefulSets.read({ namespace, name: input.workerStatefulSetName })),
    evaluate: (sts) =>
      sts !== null && controllerUid(sts.metadata) === identity.uid && (sts.status?.readyReplicas ?? 0) >= input.size - 1
        ? true
        : undefined,
  });
  return { leader: identity, leaderCreatedAt, readyAt: now() };
}
