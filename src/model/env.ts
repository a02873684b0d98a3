// The LWS env vars of every container. Ours come first so that the user's can refer to them (Kubernetes expands
// $(VAR) only to a variable defined earlier). A user's variable of the same name wins and ours is dropped.
import type { V1EnvVar, V1PodSpec } from '@kubernetes/client-node';
import {
  ENV_GROUP_INDEX,
  ENV_GROUP_SIZE,
  ENV_LEADER_ADDRESS,
  ENV_WORKER_INDEX,
  LABEL_STATEFULSET_POD_INDEX,
} from './labels.js';
import { leaderAddress } from './names.js';
import type { SubdomainPolicy } from './types.js';
import { cloneJson } from './json.js';

function fromPodLabel(name: string, label: string): V1EnvVar {
  return { name, valueFrom: { fieldRef: { fieldPath: `metadata.labels['${label}']` } } };
}

/**
 * Shared by all groups: LWS_GROUP_INDEX reads the pod-index label (a leader's ordinal is its group index), and
 * LWS_LEADER_ADDRESS refers to it, unexpanded where a container sets LWS_GROUP_INDEX itself (its own comes later).
 */
export function leaderEnvVars(
  lwsName: string,
  namespace: string,
  size: number,
  policy: SubdomainPolicy = 'Shared',
): V1EnvVar[] {
  return [
    fromPodLabel(ENV_GROUP_INDEX, LABEL_STATEFULSET_POD_INDEX),
    { name: ENV_LEADER_ADDRESS, value: leaderAddress(lwsName, `$(${ENV_GROUP_INDEX})`, namespace, policy) },
    { name: ENV_GROUP_SIZE, value: String(size) },
    { name: ENV_WORKER_INDEX, value: '0' },
  ];
}

/** Address and group index are literals; the worker index is the pod-index label (worker ordinals start at 1). */
export function workerEnvVars(
  lwsName: string,
  namespace: string,
  groupIndex: number,
  size: number,
  policy: SubdomainPolicy = 'Shared',
): V1EnvVar[] {
  return [
    { name: ENV_GROUP_INDEX, value: String(groupIndex) },
    { name: ENV_LEADER_ADDRESS, value: leaderAddress(lwsName, groupIndex, namespace, policy) },
    { name: ENV_GROUP_SIZE, value: String(size) },
    fromPodLabel(ENV_WORKER_INDEX, LABEL_STATEFULSET_POD_INDEX),
  ];
}

/**
 * The same variables as literals, for a pod whose template has none: one made from another controller's template
 * (upstream's adds them in its pod webhook, not its templates), so that a pod recreated after a switch has them too.
 */
export function podEnvVars(pod: {
  lwsName: string;
  namespace: string;
  groupIndex: number;
  workerIndex: number;
  size: number;
  subdomain: string;
}): V1EnvVar[] {
  return [
    { name: ENV_GROUP_INDEX, value: String(pod.groupIndex) },
    { name: ENV_LEADER_ADDRESS, value: `${pod.lwsName}-${pod.groupIndex}.${pod.subdomain}.${pod.namespace}` },
    { name: ENV_GROUP_SIZE, value: String(pod.size) },
    { name: ENV_WORKER_INDEX, value: String(pod.workerIndex) },
  ];
}

export function prependEnv(userEnv: readonly V1EnvVar[] | undefined, vars: readonly V1EnvVar[]): V1EnvVar[] {
  const user = userEnv ?? [];
  const userNames = new Set(user.map((v) => v.name));
  return [...vars.filter((v) => !userNames.has(v.name)), ...user].map((v) => cloneJson(v));
}

export function withLwsEnv(podSpec: V1PodSpec, vars: readonly V1EnvVar[]): V1PodSpec {
  const out = cloneJson(podSpec);
  out.containers = (out.containers ?? []).map((c) => ({ ...c, env: prependEnv(c.env, vars) }));
  if (out.initContainers !== undefined) {
    out.initContainers = out.initContainers.map((c) => ({ ...c, env: prependEnv(c.env, vars) }));
  }
  return out;
}
