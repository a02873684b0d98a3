// What upstream's mutating pod webhook (Default) does to each LWS pod at creation: group and subgroup labels,
// exclusive placement, the TPU env. The LWS_* env comes with our StatefulSet pod templates (model/env); a pod whose
// template has none (one upstream's controller made, kept across a switch) gets it here, as upstream's webhook gives it.
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import {
  ANNOTATION_EXCLUSIVE_TOPOLOGY,
  ANNOTATION_LEADER_NAME,
  ANNOTATION_LEADER_REQUESTS_TPUS,
  ANNOTATION_SIZE,
  ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY,
  ANNOTATION_SUBGROUP_POLICY_TYPE,
  ANNOTATION_SUBGROUP_SIZE,
  ANNOTATION_SUBDOMAIN_POLICY,
  LABEL_GROUP_INDEX,
  LABEL_GROUP_KEY,
  LABEL_NAME,
  LABEL_SUBGROUP_INDEX,
  LABEL_SUBGROUP_KEY,
  LABEL_WORKER_INDEX,
  LEADER_SUBGROUP_INDEX,
  RESOURCE_TPU,
  cloneJson,
  leaderInSubGroup,
  leaderPodName,
  parsePodName,
  podRequestsTpus,
  subGroupIndex,
  podEnvVars,
  withExclusiveAffinity,
  withLwsEnv,
  withTpuEnv,
} from '../model/index.js';
import { groupKey, subGroupKey } from '../shared/group-keys.js';

export type PodMutationResult = V1Pod | { error: string };

/**
 * A mutated copy of an LWS pod, or why it cannot be admitted; a pod without the LWS name label comes back as an
 * unchanged copy. A second call on its own result changes nothing.
 */
export function mutatePod(pod: V1Pod): PodMutationResult {
  const out = cloneJson(pod);
  const labels = out.metadata?.labels;
  const lwsName = labels?.[LABEL_NAME];
  if (labels === undefined || lwsName === undefined) return out;
  try {
    out.spec = mutateLwsPod(readPod(out, labels, lwsName), out.spec ?? { containers: [] });
    return out;
  } catch (err) {
    if (err instanceof MutationError) return { error: err.message };
    throw err;
  }
}

class MutationError extends Error {}

/** What the mutation reads of a pod; `labels` is the copy's own, written in place. */
interface LwsPod {
  ref: string;
  name: string;
  namespace: string;
  lwsName: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  size: number;
  subGroupSize: number | undefined;
}

function readPod(pod: V1Pod, labels: Record<string, string>, lwsName: string): LwsPod {
  const name = pod.metadata?.name ?? '';
  const namespace = pod.metadata?.namespace ?? '';
  const ref = `${namespace}/${name}`;
  const annotations = pod.metadata?.annotations ?? {};
  const size = annotations[ANNOTATION_SIZE];
  if (size === undefined) throw new MutationError(`pod ${ref}: annotation ${ANNOTATION_SIZE} is missing`);
  const subGroupSize = annotations[ANNOTATION_SUBGROUP_SIZE];
  return {
    ref,
    name,
    namespace,
    lwsName,
    labels,
    annotations,
    size: parseCount(ref, `annotation ${ANNOTATION_SIZE}`, size),
    subGroupSize:
      subGroupSize === undefined ? undefined : parseCount(ref, `annotation ${ANNOTATION_SUBGROUP_SIZE}`, subGroupSize),
  };
}

/** The controller writes these annotations as decimal counts of at least 1. */
function parseCount(ref: string, what: string, text: string): number {
  const value = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new MutationError(`pod ${ref}: ${what} is ${JSON.stringify(text)}, not a whole number of at least 1`);
  }
  return value;
}

function mutateLwsPod(pod: LwsPod, spec: V1PodSpec): V1PodSpec {
  const leader = pod.labels[LABEL_WORKER_INDEX] === '0';
  const placed = leader ? placeLeader(pod, spec) : placeWorker(pod, spec);
  const withEnv = withLwsEnv(
    placed.spec,
    podEnvVars({
      lwsName: pod.lwsName,
      namespace: pod.namespace,
      groupIndex: placed.groupIndex,
      workerIndex: placed.workerIndex,
      size: pod.size,
      subdomain: placed.spec.subdomain ?? '',
    }),
  );
  if (!podRequestsTpus(withEnv)) return withEnv;
  const { subGroupSize } = pod;
  return withTpuEnv(withEnv, {
    leaderName: placed.leaderName,
    workerIndex: placed.workerIndex,
    subdomain: placed.spec.subdomain ?? '',
    size: pod.size,
    leaderRequestsTpus: pod.annotations[ANNOTATION_LEADER_REQUESTS_TPUS] === 'true',
    subGroup: subGroupSize === undefined ? undefined : { size: subGroupSize, index: labelledSubGroup(pod) },
  });
}

interface Placed {
  spec: V1PodSpec;
  leaderName: string;
  groupIndex: number;
  workerIndex: number;
}

function placeLeader(pod: LwsPod, spec: V1PodSpec): Placed {
  const { labels, annotations } = pod;
  labels[LABEL_GROUP_INDEX] ??= String(parseOrdinals(pod, 'leader').groupIndex);
  const key = (labels[LABEL_GROUP_KEY] ??= groupKey(pod.namespace, pod.name));
  // UniquePerReplica: the leader answers under its group's Service (named after it), as upstream's webhook sets it.
  let out = annotations[ANNOTATION_SUBDOMAIN_POLICY] === 'UniquePerReplica' ? { ...spec, subdomain: pod.name } : spec;
  const topologyKey = annotations[ANNOTATION_EXCLUSIVE_TOPOLOGY];
  if (topologyKey) out = withExclusiveAffinity(out, { labelKey: LABEL_GROUP_KEY, value: key, topologyKey });
  if (unlabelledSubGroupSize(pod) !== undefined && leaderInSubGroup(annotations[ANNOTATION_SUBGROUP_POLICY_TYPE])) {
    out = joinSubGroup(pod, out, LEADER_SUBGROUP_INDEX, pod.name);
  }
  return { spec: out, leaderName: pod.name, groupIndex: Number(labels[LABEL_GROUP_INDEX]), workerIndex: 0 };
}

function placeWorker(pod: LwsPod, spec: V1PodSpec): Placed {
  const { groupIndex, workerIndex } = parseOrdinals(pod, 'worker');
  pod.labels[LABEL_WORKER_INDEX] = String(workerIndex);
  let out = spec;
  const subGroupSize = unlabelledSubGroupSize(pod);
  if (subGroupSize !== undefined) {
    const leaderName = pod.annotations[ANNOTATION_LEADER_NAME];
    if (!leaderName) throw new MutationError(`pod ${pod.ref}: annotation ${ANNOTATION_LEADER_NAME} is missing`);
    out = joinSubGroup(pod, out, subGroupIndex(pod.size, subGroupSize, workerIndex), leaderName);
  }
  return { spec: out, leaderName: leaderPodName(pod.lwsName, groupIndex), groupIndex, workerIndex };
}

/** The subgroup size while the pod has no subgroup-index label yet (an empty one counts as none, as upstream). */
function unlabelledSubGroupSize(pod: LwsPod): number | undefined {
  return pod.labels[LABEL_SUBGROUP_INDEX] ? undefined : pod.subGroupSize;
}

function joinSubGroup(pod: LwsPod, spec: V1PodSpec, index: number, leaderName: string): V1PodSpec {
  const key = subGroupKey(leaderName, index);
  pod.labels[LABEL_SUBGROUP_INDEX] = String(index);
  pod.labels[LABEL_SUBGROUP_KEY] = key;
  const topologyKey = pod.annotations[ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY];
  return topologyKey ? withExclusiveAffinity(spec, { labelKey: LABEL_SUBGROUP_KEY, value: key, topologyKey }) : spec;
}

function parseOrdinals(pod: LwsPod, role: 'leader' | 'worker'): { groupIndex: number; workerIndex: number } {
  const parsed = parsePodName(pod.lwsName, pod.name);
  if (parsed === undefined || (parsed.workerIndex === 0) !== (role === 'leader')) {
    const shape = role === 'leader' ? '<groupIndex>' : '<groupIndex>-<workerIndex>';
    throw new MutationError(
      `pod ${pod.ref}: cannot parse its ordinal: a ${role} pod of LWS ${pod.lwsName} is named ${pod.lwsName}-${shape}`,
    );
  }
  return parsed;
}

/** Upstream refuses such a pod too: a LeaderExcluded leader is in no subgroup, so it has no TPU slice to join. */
function labelledSubGroup(pod: LwsPod): number {
  const text = pod.labels[LABEL_SUBGROUP_INDEX];
  if (text === undefined || !/^[0-9]+$/.test(text)) {
    const found = text === undefined ? 'missing (a LeaderExcluded leader is in no subgroup)' : JSON.stringify(text);
    throw new MutationError(
      `pod ${pod.ref}: requests ${RESOURCE_TPU} with subgroups, but label ${LABEL_SUBGROUP_INDEX} is ${found}`,
    );
  }
  return Number(text);
}
