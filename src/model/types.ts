// TypeScript shape of the LeaderWorkerSet v1 API. Pod templates use the Kubernetes client's type as a type-only
// import, which vanishes at runtime: workflow code that imports this module stays free of the client.
import type {
  V1PersistentVolumeClaim,
  V1PodTemplateSpec,
  V1StatefulSetPersistentVolumeClaimRetentionPolicy,
} from '@kubernetes/client-node';

// Each enum is a const tuple so that validation, defaults and the CRD test share one source of allowed values.

/** `Default` is upstream's deprecated name of `None`, still accepted; applyDefaults turns it into `None`. */
export const RESTART_POLICIES = ['RecreateGroupOnPodRestart', 'None', 'RecreateGroupAfterStart', 'Default'] as const;
/** What a container restart or a deleted pod in a group does to the rest of the group. */
export type RestartPolicy = (typeof RESTART_POLICIES)[number];

export const STARTUP_POLICIES = ['LeaderCreated', 'LeaderReady'] as const;
/** When the worker StatefulSet of a group is created: once the leader pod exists, or once it is ready. */
export type StartupPolicy = (typeof STARTUP_POLICIES)[number];

export const ROLLOUT_STRATEGY_TYPES = ['RollingUpdate'] as const;
export type RolloutStrategyType = (typeof ROLLOUT_STRATEGY_TYPES)[number];

export const SUBDOMAIN_POLICIES = ['Shared', 'UniquePerReplica'] as const;
/** One headless Service for all groups, or one per group for the workers. */
export type SubdomainPolicy = (typeof SUBDOMAIN_POLICIES)[number];

export const SUBGROUP_POLICY_TYPES = ['LeaderWorker', 'LeaderExcluded'] as const;
/** Whether the leader counts as a member of subgroup 0 (LeaderWorker) or stands outside every subgroup. */
export type SubGroupPolicyType = (typeof SUBGROUP_POLICY_TYPES)[number];

export interface SubGroupPolicy {
  subGroupPolicyType?: SubGroupPolicyType;
  /** Pods per subgroup; size or size - 1 must be divisible by it. Immutable once set. */
  subGroupSize?: number;
}

export const POD_TERMINATION_POLICIES = ['Sequential', 'Parallel'] as const;
/** How a terminating group's leader and workers go away: one after the other, or together. */
export type PodTerminationPolicy = (typeof POD_TERMINATION_POLICIES)[number];
/** spec.podTerminationPolicy as the API takes and stores it: `Default` is upstream's name (KEP-956) for Sequential. */
export const POD_TERMINATION_POLICY_VALUES = ['Default', 'Sequential', 'Parallel'] as const;
export type PodTerminationPolicyValue = (typeof POD_TERMINATION_POLICY_VALUES)[number];

export const CONDITION_TYPES = ['Available', 'Progressing', 'UpdateInProgress'] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];

/** An absolute number (5) or a percentage of replicas ("10%"), like Kubernetes' IntOrString. */
export type IntOrString = number | string;

export interface RollingUpdateConfiguration {
  /** Groups with an index below this keep their old revision during a rolling update. */
  partition?: number;
  /** Groups that may be unavailable during an update; a percentage rounds down. */
  maxUnavailable?: IntOrString;
  /** Extra groups that may exist above spec.replicas during an update; a percentage rounds up. */
  maxSurge?: IntOrString;
}

export interface RolloutStrategy {
  type?: RolloutStrategyType;
  rollingUpdateConfiguration?: RollingUpdateConfiguration;
}

export interface NetworkConfig {
  subdomainPolicy?: SubdomainPolicy;
  /**
   * Copied to the headless Services' spec.publishNotReadyAddresses (KEP-820, alpha); unset means true, what LWS has
   * always done (see publishNotReadyAddresses in network.ts).
   */
  publishNotReadyAddresses?: boolean;
}

/** Each field unset takes its default (DEFAULT_GROUP_RESTART_BACKOFF). */
export interface GroupRestartBackoff {
  initialIntervalSeconds?: number;
  maximumIntervalSeconds?: number;
  resetAfterSeconds?: number;
}

export interface LeaderWorkerTemplate {
  /** Pod template of the leader; the worker template is used when absent. */
  leaderTemplate?: V1PodTemplateSpec;
  workerTemplate: V1PodTemplateSpec;
  /** Pods per group, leader included; 1 means a leader without workers. */
  size?: number;
  restartPolicy?: RestartPolicy;
  /**
   * Group recreations allowed per group before it is failed for good (KEP-820, alpha); unset: no limit, 0: the first
   * group-level failure is terminal. Only with restartPolicy RecreateGroupOnPodRestart or RecreateGroupAfterStart.
   */
  maxGroupRestarts?: number;
  /** Ours (an extension): the wait between recreations of the same group (model/recreate-backoff.ts). */
  groupRestartBackoff?: GroupRestartBackoff;
  subGroupPolicy?: SubGroupPolicy;
  /** Claims each pod of both StatefulSets gets, as StatefulSet volumeClaimTemplates. */
  volumeClaimTemplates?: V1PersistentVolumeClaim[];
  persistentVolumeClaimRetentionPolicy?: V1StatefulSetPersistentVolumeClaimRetentionPolicy;
}

export interface LeaderWorkerSetSpec {
  /** Number of groups. */
  replicas?: number;
  leaderWorkerTemplate: LeaderWorkerTemplate;
  startupPolicy?: StartupPolicy;
  rolloutStrategy?: RolloutStrategy;
  networkConfig?: NetworkConfig;
  podTerminationPolicy?: PodTerminationPolicyValue;
  /**
   * Ours (an extension): a teardown force-deletes a pod past its grace period whose node's Ready condition has not been
   * True for this long (model/dead-node.ts). Unset: never on NotReady alone.
   */
  forceDeleteOnNodeNotReadySeconds?: number;
}

/** A metav1.Condition; timestamps as RFC 3339 strings, the form they take in JSON (and in Temporal payloads). */
export interface Condition {
  type: ConditionType | string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface LeaderWorkerSetStatus {
  /** Groups that exist (updated or not, ready or not). */
  replicas?: number;
  /** Groups whose pods are all ready. */
  readyReplicas?: number;
  /** Groups on the current template revision. */
  updatedReplicas?: number;
  /** Label selector string of the leader pods, for the scale subresource (HPA). */
  hpaPodSelector?: string;
  observedGeneration?: number;
  conditions?: Condition[];
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** Timestamps: Dates from the typed client, strings after a JSON round trip; model code tests them for presence. */
export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  creationTimestamp?: string | Date;
  deletionTimestamp?: string | Date;
}

export interface LeaderWorkerSet {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: LeaderWorkerSetSpec;
  status?: LeaderWorkerSetStatus;
}

export interface DefaultedLeaderWorkerSetSpec {
  replicas: number;
  leaderWorkerTemplate: {
    leaderTemplate?: V1PodTemplateSpec;
    workerTemplate: V1PodTemplateSpec;
    size: number;
    /** Never `Default`: defaulting turns it into `None`. */
    restartPolicy: Exclude<RestartPolicy, 'Default'>;
    /** Absent when unset (no limit): it has no default. */
    maxGroupRestarts?: number;
    /** Absent when unset; its defaults are applied where it is read (recreate-backoff.ts). */
    groupRestartBackoff?: GroupRestartBackoff;
    subGroupPolicy?: { subGroupPolicyType: SubGroupPolicyType; subGroupSize: number };
    volumeClaimTemplates?: V1PersistentVolumeClaim[];
    persistentVolumeClaimRetentionPolicy?: V1StatefulSetPersistentVolumeClaimRetentionPolicy;
  };
  startupPolicy: StartupPolicy;
  rolloutStrategy: {
    type: RolloutStrategyType;
    rollingUpdateConfiguration: { partition: number; maxUnavailable: IntOrString; maxSurge: IntOrString };
  };
  /** publishNotReadyAddresses absent when unset; read it through publishNotReadyAddresses() for its default. */
  networkConfig: { subdomainPolicy: SubdomainPolicy; publishNotReadyAddresses?: boolean };
  podTerminationPolicy: PodTerminationPolicyValue;
  /** Absent when unset: never on NotReady alone (dead-node.ts). */
  forceDeleteOnNodeNotReadySeconds?: number;
}

export interface DefaultedLeaderWorkerSet extends Omit<LeaderWorkerSet, 'spec'> {
  spec: DefaultedLeaderWorkerSetSpec;
}
