// The env that lets the TPU runtime of each pod find the other hosts of its slice, computed as upstream's
// AddTPUVariables does: one slice per group, or one per subgroup when the LWS has a subGroupPolicy.
import type { V1Container, V1EnvVar, V1PodSpec } from '@kubernetes/client-node';
import { cloneJson } from './json.js';
import {
  DEFAULT_TPU_PROCESS_PORT,
  ENV_TPU_NAME,
  ENV_TPU_PROCESS_ADDRESSES,
  ENV_TPU_PROCESS_PORT,
  ENV_TPU_WORKER_HOSTNAMES,
  ENV_TPU_WORKER_ID,
  RESOURCE_TPU,
} from './labels.js';

/** A Kubernetes resource quantity: sign, decimal number, then a binary-SI, decimal-SI or exponent suffix. */
const QUANTITY = /^[+-]?(\d+(?:\.\d*)?|\.\d+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?$/;

/** Whether a quantity (JSON string or number) is non-zero; one that does not parse counts as none. */
export function quantityIsNonZero(quantity: unknown): boolean {
  if (typeof quantity === 'number') return Number.isFinite(quantity) && quantity !== 0;
  if (typeof quantity !== 'string') return false;
  const mantissa = QUANTITY.exec(quantity)?.[1];
  return mantissa !== undefined && /[1-9]/.test(mantissa);
}

export function containerRequestsTpus(container: V1Container): boolean {
  const { limits, requests } = container.resources ?? {};
  return quantityIsNonZero(limits?.[RESOURCE_TPU]) || quantityIsNonZero(requests?.[RESOURCE_TPU]);
}

export function podRequestsTpus(spec: V1PodSpec): boolean {
  return tpuContainers(spec).length > 0;
}

/** Upstream's order: the app containers, then the init containers. The results are the spec's own objects. */
function tpuContainers(spec: V1PodSpec): V1Container[] {
  return [...spec.containers, ...(spec.initContainers ?? [])].filter(containerRequestsTpus);
}

export interface TpuPodFacts {
  /** The group's leader pod: the pod itself for the leader, the worker's StatefulSet (its name less the ordinal). */
  leaderName: string;
  /** 0 for the leader. */
  workerIndex: number;
  /** spec.subdomain: every hostname is `<pod>.<subdomain>`. */
  subdomain: string;
  /** Pods in the group, leader included. */
  size: number;
  /** The worker annotation leader-requests-tpus is "true": the leader is then a TPU host of the (first) slice. */
  leaderRequestsTpus: boolean;
  /** The subgroup-size annotation and subgroup-index label, when the LWS has subgroups. */
  subGroup?: { size: number; index: number };
}

/**
 * A copy of `spec` with the TPU env appended after each TPU container's own env: every TPU container without
 * subgroups, the first one only with them. Unchanged when the first TPU container already has the worker ID or hosts.
 */
export function withTpuEnv(spec: V1PodSpec, facts: TpuPodFacts): V1PodSpec {
  const out = cloneJson(spec);
  const containers = tpuContainers(out);
  const first = containers[0];
  if (first === undefined || hasTpuEnv(first)) return out;
  if (facts.subGroup === undefined) addGroupEnv(containers, facts);
  else addSubGroupEnv(first, facts, facts.subGroup);
  return out;
}

function hasTpuEnv(container: V1Container): boolean {
  return (container.env ?? []).some((e) => e.name === ENV_TPU_WORKER_HOSTNAMES || e.name === ENV_TPU_WORKER_ID);
}

/** The value of the container's first env var of that name ('' when it comes from valueFrom), if it has one. */
function envValue(container: V1Container, name: string): string | undefined {
  const found = (container.env ?? []).find((e) => e.name === name);
  return found === undefined ? undefined : (found.value ?? '');
}

function hostPods(leaderName: string, withLeader: boolean, workers: number[]): string[] {
  return [...(withLeader ? [leaderName] : []), ...workers.map((i) => `${leaderName}-${i}`)];
}

function range(start: number, end: number): number[] {
  return end < start ? [] : Array.from({ length: end - start + 1 }, (_, k) => start + k);
}

/** Every TPU container of every pod is a host, the pods' containers assumed alike (as upstream assumes). */
function addGroupEnv(containers: V1Container[], facts: TpuPodFacts): void {
  const leader = facts.workerIndex === 0;
  const withLeader = leader || facts.leaderRequestsTpus;
  // A leader without TPUs is not a TPU worker, so worker IDs start at worker 1.
  const podIndex = withLeader ? facts.workerIndex : facts.workerIndex - 1;
  const ports = containers.map((c, i) => envValue(c, ENV_TPU_PROCESS_PORT) ?? String(DEFAULT_TPU_PROCESS_PORT + i));
  const pods = hostPods(facts.leaderName, withLeader, range(1, facts.size - 1));
  const hostnames = pods.flatMap((pod) => containers.map(() => `${pod}.${facts.subdomain}`));
  const addresses = pods.flatMap((pod) => ports.map((port) => `${pod}.${facts.subdomain}:${port}`));
  containers.forEach((container, i) => {
    appendTpuEnv(container, {
      hostnames,
      workerId: podIndex * containers.length + i,
      name: facts.leaderName,
      addresses,
      port: ports[i] ?? '',
    });
  });
}

function addSubGroupEnv(container: V1Container, facts: TpuPodFacts, subGroup: { size: number; index: number }): void {
  const { size } = subGroup;
  const leader = facts.workerIndex === 0;
  let index = subGroup.index;
  let workerId = facts.workerIndex % size;
  if (!leader && !facts.leaderRequestsTpus) {
    // The slices are cut from worker 1 on, whatever subgroup the labels put the worker in.
    workerId = (facts.workerIndex - 1) % size;
    index = Math.trunc((facts.workerIndex - 1) / size);
  }
  const port = envValue(container, ENV_TPU_PROCESS_PORT) ?? String(DEFAULT_TPU_PROCESS_PORT);
  let start = size * index + 1;
  let end = size * (index + 1);
  // A TPU leader is the first host of slice 0, which shifts every slice's workers down by one.
  const withLeader = leader || (facts.leaderRequestsTpus && index === 0);
  if (withLeader) end -= 1;
  else if (facts.leaderRequestsTpus) {
    start -= 1;
    end -= 1;
  }
  const pods = hostPods(facts.leaderName, withLeader, range(start, end));
  appendTpuEnv(container, {
    hostnames: pods.map((pod) => `${pod}.${facts.subdomain}`),
    workerId,
    name: facts.leaderName,
    addresses: pods.map((pod) => `${pod}.${facts.subdomain}:${port}`),
    port,
  });
}

interface TpuEnvValues {
  hostnames: string[];
  workerId: number;
  name: string;
  addresses: string[];
  port: string;
}

/** Upstream's order; the port only when the user set none. */
function appendTpuEnv(container: V1Container, v: TpuEnvValues): void {
  const added: V1EnvVar[] = [
    { name: ENV_TPU_WORKER_HOSTNAMES, value: v.hostnames.join(',') },
    { name: ENV_TPU_WORKER_ID, value: String(v.workerId) },
    { name: ENV_TPU_NAME, value: v.name },
    { name: ENV_TPU_PROCESS_ADDRESSES, value: v.addresses.join(',') },
  ];
  if (envValue(container, ENV_TPU_PROCESS_PORT) === undefined)
    added.push({ name: ENV_TPU_PROCESS_PORT, value: v.port });
  container.env = [...(container.env ?? []), ...added];
}
