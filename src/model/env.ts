// The LWS env vars every container of a group gets, and how they are merged into a user's pod spec.
//
// Ours are prepended, so that the user's own variables can refer to them with $(LWS_LEADER_ADDRESS) (Kubernetes
// expands a reference only to a variable defined earlier in the list). A user's variable of the same name is kept
// and ours dropped: the user's explicit choice wins.
import type { V1EnvVar, V1PodSpec } from '@kubernetes/client-node';
import {
  ENV_GROUP_INDEX,
  ENV_GROUP_SIZE,
  ENV_LEADER_ADDRESS,
  ENV_WORKER_INDEX,
  LABEL_STATEFULSET_POD_INDEX,
} from './labels.js';
import { headlessServiceName, leaderAddress } from './names.js';
import { cloneJson } from './json.js';

/** A downward-API env var that reads one of the pod's own labels. */
function fromPodLabel(name: string, label: string): V1EnvVar {
  return { name, valueFrom: { fieldRef: { fieldPath: `metadata.labels['${label}']` } } };
}

/**
 * Env vars of the leader pod template, which all groups share. The group index is not known when the template is
 * written, so LWS_GROUP_INDEX reads the StatefulSet's pod-index label (the leader's ordinal is its group index) and
 * LWS_LEADER_ADDRESS refers to it: `<lws>-$(LWS_GROUP_INDEX).<lws>.<ns>`, which the kubelet expands to
 * names.leaderAddress(lws, i, ns). A container that sets LWS_GROUP_INDEX itself keeps its own, which comes after
 * LWS_LEADER_ADDRESS, so the reference stays unexpanded there: users should not reuse that name.
 */
export function leaderEnvVars(lwsName: string, namespace: string, size: number): V1EnvVar[] {
  return [
    fromPodLabel(ENV_GROUP_INDEX, LABEL_STATEFULSET_POD_INDEX),
    {
      name: ENV_LEADER_ADDRESS,
      value: `${lwsName}-$(${ENV_GROUP_INDEX}).${headlessServiceName(lwsName)}.${namespace}`,
    },
    { name: ENV_GROUP_SIZE, value: String(size) },
    { name: ENV_WORKER_INDEX, value: '0' },
  ];
}

/**
 * Env vars of one group's worker pod template. The group is known, so address and group index are literals; the
 * worker index is the worker StatefulSet's pod-index label (its ordinals start at 1).
 */
export function workerEnvVars(lwsName: string, namespace: string, groupIndex: number, size: number): V1EnvVar[] {
  return [
    { name: ENV_GROUP_INDEX, value: String(groupIndex) },
    { name: ENV_LEADER_ADDRESS, value: leaderAddress(lwsName, groupIndex, namespace) },
    { name: ENV_GROUP_SIZE, value: String(size) },
    fromPodLabel(ENV_WORKER_INDEX, LABEL_STATEFULSET_POD_INDEX),
  ];
}

/** `vars` (those the user has not defined) followed by the user's list unchanged. New array, new entries. */
export function prependEnv(userEnv: readonly V1EnvVar[] | undefined, vars: readonly V1EnvVar[]): V1EnvVar[] {
  const user = userEnv ?? [];
  const userNames = new Set(user.map((v) => v.name));
  return [...vars.filter((v) => !userNames.has(v.name)), ...user].map((v) => cloneJson(v));
}

/** A copy of the pod spec whose every container and init container has `vars` prepended (see prependEnv). */
export function withLwsEnv(podSpec: V1PodSpec, vars: readonly V1EnvVar[]): V1PodSpec {
  const out = cloneJson(podSpec);
  out.containers = (out.containers ?? []).map((c) => ({ ...c, env: prependEnv(c.env, vars) }));
  if (out.initContainers !== undefined) {
    out.initContainers = out.initContainers.map((c) => ({ ...c, env: prependEnv(c.env, vars) }));
  }
  return out;
}
