// Defaults of the LeaderWorkerSet API. The CRD applies the same values on the API server (a unit test keeps the two
// in step); this function serves objects that did not pass through it, and gives later code a fully typed spec.
import { cloneJson } from './json.js';
import type {
  DefaultedLeaderWorkerSet,
  DefaultedLeaderWorkerSetSpec,
  IntOrString,
  LeaderWorkerSet,
  LeaderWorkerSetSpec,
  PodTerminationPolicyValue,
  RestartPolicy,
  RolloutStrategyType,
  StartupPolicy,
  SubdomainPolicy,
  SubGroupPolicyType,
} from './types.js';

export const DEFAULT_REPLICAS = 1;
export const DEFAULT_SIZE = 1;
export const DEFAULT_RESTART_POLICY: Exclude<RestartPolicy, 'Default'> = 'RecreateGroupOnPodRestart';
export const DEFAULT_SUBGROUP_POLICY_TYPE: SubGroupPolicyType = 'LeaderWorker';
export const DEFAULT_STARTUP_POLICY: StartupPolicy = 'LeaderCreated';
export const DEFAULT_ROLLOUT_STRATEGY_TYPE: RolloutStrategyType = 'RollingUpdate';
export const DEFAULT_PARTITION = 0;
export const DEFAULT_MAX_UNAVAILABLE: IntOrString = 1;
export const DEFAULT_MAX_SURGE: IntOrString = 0;
export const DEFAULT_SUBDOMAIN_POLICY: SubdomainPolicy = 'Shared';
/**
 * Stored when the field is absent: upstream's name, so the object reads the same under either controller and upstream's
 * CRD takes it back. It means Sequential: Kubernetes' own garbage-collection order, what LWS did before the policy.
 */
export const DEFAULT_POD_TERMINATION_POLICY: PodTerminationPolicyValue = 'Default';

/** `undefined` and JSON `null` both mean "not set", as on the API server. */
function orDefault<T>(value: T | null | undefined, fallback: T): T {
  return value === undefined || value === null ? fallback : value;
}

function restartPolicyOf(value: RestartPolicy | null | undefined): Exclude<RestartPolicy, 'Default'> {
  const policy = orDefault(value, DEFAULT_RESTART_POLICY);
  return policy === 'Default' ? 'None' : policy;
}

export function applySpecDefaults(spec: LeaderWorkerSetSpec): DefaultedLeaderWorkerSetSpec {
  const lwt = spec.leaderWorkerTemplate;
  const rolling = spec.rolloutStrategy?.rollingUpdateConfiguration;
  const out: DefaultedLeaderWorkerSetSpec = {
    replicas: orDefault(spec.replicas, DEFAULT_REPLICAS),
    leaderWorkerTemplate: {
      workerTemplate: cloneJson(lwt.workerTemplate),
      size: orDefault(lwt.size, DEFAULT_SIZE),
      // Upstream's webhook stores `Default` as `None`; the CRD cannot rewrite a value, so it is done on reading.
      restartPolicy: restartPolicyOf(lwt.restartPolicy),
    },
    startupPolicy: orDefault(spec.startupPolicy, DEFAULT_STARTUP_POLICY),
    rolloutStrategy: {
      type: orDefault(spec.rolloutStrategy?.type, DEFAULT_ROLLOUT_STRATEGY_TYPE),
      rollingUpdateConfiguration: {
        partition: orDefault(rolling?.partition, DEFAULT_PARTITION),
        maxUnavailable: orDefault(rolling?.maxUnavailable, DEFAULT_MAX_UNAVAILABLE),
        maxSurge: orDefault(rolling?.maxSurge, DEFAULT_MAX_SURGE),
      },
    },
    networkConfig: { subdomainPolicy: orDefault(spec.networkConfig?.subdomainPolicy, DEFAULT_SUBDOMAIN_POLICY) },
    podTerminationPolicy: orDefault(spec.podTerminationPolicy, DEFAULT_POD_TERMINATION_POLICY),
  };
  // KEP-820's fields have no stored default (unset means "no limit" and "true"): carried only when set.
  if (lwt.maxGroupRestarts !== undefined && lwt.maxGroupRestarts !== null) {
    out.leaderWorkerTemplate.maxGroupRestarts = lwt.maxGroupRestarts;
  }
  // Ours, carried as written: recreate-backoff.ts applies its defaults field by field.
  if (lwt.groupRestartBackoff !== undefined && lwt.groupRestartBackoff !== null) {
    out.leaderWorkerTemplate.groupRestartBackoff = cloneJson(lwt.groupRestartBackoff);
  }
  const publish = spec.networkConfig?.publishNotReadyAddresses;
  if (publish !== undefined && publish !== null) out.networkConfig.publishNotReadyAddresses = publish;
  // Ours, no default either (dead-node.ts).
  const notReadySeconds = spec.forceDeleteOnNodeNotReadySeconds;
  if (notReadySeconds !== undefined && notReadySeconds !== null) out.forceDeleteOnNodeNotReadySeconds = notReadySeconds;
  const sub = lwt.subGroupPolicy;
  if (sub !== undefined && sub !== null) {
    out.leaderWorkerTemplate.subGroupPolicy = {
      subGroupPolicyType: orDefault(sub.subGroupPolicyType, DEFAULT_SUBGROUP_POLICY_TYPE),
      // The CRD requires it; 1 only serves objects that bypassed the API server and were not validated.
      subGroupSize: orDefault(sub.subGroupSize, 1),
    };
  }
  if (lwt.volumeClaimTemplates !== undefined && lwt.volumeClaimTemplates !== null && lwt.volumeClaimTemplates.length) {
    out.leaderWorkerTemplate.volumeClaimTemplates = cloneJson(lwt.volumeClaimTemplates);
  }
  if (lwt.persistentVolumeClaimRetentionPolicy !== undefined && lwt.persistentVolumeClaimRetentionPolicy !== null) {
    out.leaderWorkerTemplate.persistentVolumeClaimRetentionPolicy = cloneJson(lwt.persistentVolumeClaimRetentionPolicy);
  }
  // Absent stays absent: "no leader template" means "use the worker template", and the hash must not tell apart
  // two ways of writing the same thing (see revision.ts).
  if (lwt.leaderTemplate !== undefined && lwt.leaderTemplate !== null) {
    out.leaderWorkerTemplate.leaderTemplate = cloneJson(lwt.leaderTemplate);
  }
  return out;
}

export function applyDefaults(lws: LeaderWorkerSet): DefaultedLeaderWorkerSet {
  const out: DefaultedLeaderWorkerSet = { ...lws, metadata: { ...lws.metadata }, spec: applySpecDefaults(lws.spec) };
  if (lws.status !== undefined) out.status = { ...lws.status };
  return out;
}
