// Pure builders of the objects the controller creates for an LWS (docs/api.md, "What the controller builds"). Upstream
// sets per-pod labels and env vars with a mutating webhook; here they go into the pod templates, per-pod values come
// from the pod-index label through the downward API (env.ts), and what a template cannot carry the caller patches onto
// the pods.
import { publishNotReadyAddresses } from './network.js';
import type {
  V1OwnerReference,
  V1PersistentVolumeClaim,
  V1PodTemplateSpec,
  V1Service,
  V1StatefulSet,
  V1StatefulSetSpec,
} from '@kubernetes/client-node';
import { applyDefaults } from './defaults.js';
import { leaderEnvVars, withLwsEnv, workerEnvVars } from './env.js';
import { cloneJson } from './json.js';
import {
  ANNOTATION_EXCLUSIVE_TOPOLOGY,
  ANNOTATION_POD_TERMINATION_POLICY,
  ANNOTATION_LEADER_NAME,
  ANNOTATION_LEADER_REQUESTS_TPUS,
  ANNOTATION_REPLICAS,
  ANNOTATION_SIZE,
  ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY,
  ANNOTATION_SUBGROUP_POLICY_TYPE,
  ANNOTATION_SUBGROUP_SIZE,
  ANNOTATION_SUBDOMAIN_POLICY,
  API_GROUP_VERSION,
  KIND,
  LABEL_GROUP_INDEX,
  LABEL_GROUP_KEY,
  LABEL_NAME,
  LABEL_TEMPLATE_REVISION_HASH,
  LABEL_WORKER_INDEX,
} from './labels.js';
import {
  groupServiceName,
  headlessServiceName,
  leaderPodName,
  leaderStatefulSetName,
  workerServiceName,
  workerStatefulSetName,
} from './names.js';
import { revisionKey } from './revision.js';
import { podRequestsTpus } from './tpu-env.js';
import { leaderStatefulSetMaxUnavailable } from './rollout.js';
import type { DefaultedLeaderWorkerSet, LeaderWorkerSet, PodTerminationPolicyValue } from './types.js';

export interface LeaderPodRef {
  name: string;
  uid: string;
}

interface LwsIdentity {
  name: string;
  namespace: string;
  uid: string;
}

function identity(lws: LeaderWorkerSet): LwsIdentity {
  const { name, namespace, uid } = lws.metadata;
  if (!name || !namespace || !uid) {
    throw new Error('LeaderWorkerSet needs metadata.name, metadata.namespace and metadata.uid to build owned objects');
  }
  return { name, namespace, uid };
}

/** Owner reference to the LWS: controller, and blockOwnerDeletion so a foreground delete of the LWS waits for it. */
export function lwsOwnerReference(lws: LeaderWorkerSet): V1OwnerReference {
  const { name, uid } = identity(lws);
  return { apiVersion: API_GROUP_VERSION, kind: KIND, name, uid, controller: true, blockOwnerDeletion: true };
}

/** Owner reference to a leader pod: the garbage collector removes the group's workers when the leader goes. */
export function leaderPodOwnerReference(leaderPod: LeaderPodRef): V1OwnerReference {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    name: leaderPod.name,
    uid: leaderPod.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

function headless(
  name: string,
  namespace: string,
  lwsName: string,
  selector: Record<string, string>,
  owner: V1OwnerReference,
  publish: boolean,
): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels: { [LABEL_NAME]: lwsName }, ownerReferences: [owner] },
    // publishNotReadyAddresses (spec.networkConfig, true unless set): group members must find each other while they
    // start, before they are ready.
    spec: { clusterIP: 'None', publishNotReadyAddresses: publish, selector },
  };
}

/** Shared only: every pod of the LWS. Under UniquePerReplica each group has its own (buildGroupService), as upstream. */
export function buildHeadlessService(lws: LeaderWorkerSet): V1Service | undefined {
  const d = applyDefaults(lws);
  if (d.spec.networkConfig.subdomainPolicy === 'UniquePerReplica') return undefined;
  const { name, namespace } = identity(d);
  const publish = publishNotReadyAddresses(d.spec);
  return headless(headlessServiceName(name), namespace, name, { [LABEL_NAME]: name }, lwsOwnerReference(d), publish);
}

/** UniquePerReplica only: the group's Service, owned by its leader pod (as upstream), its workers' serviceName. */
export function buildGroupService(
  lws: LeaderWorkerSet,
  groupIndex: number,
  leaderPod: LeaderPodRef,
): V1Service | undefined {
  const d = applyDefaults(lws);
  if (d.spec.networkConfig.subdomainPolicy !== 'UniquePerReplica') return undefined;
  const { name, namespace } = identity(d);
  checkLeaderPod(name, groupIndex, leaderPod);
  const selector = { [LABEL_NAME]: name, [LABEL_GROUP_INDEX]: String(groupIndex) };
  const owner = leaderPodOwnerReference(leaderPod);
  return headless(
    groupServiceName(name, groupIndex),
    namespace,
    name,
    selector,
    owner,
    publishNotReadyAddresses(d.spec),
  );
}

function checkLeaderPod(lwsName: string, groupIndex: number, leaderPod: LeaderPodRef): void {
  const expected = leaderPodName(lwsName, groupIndex);
  if (leaderPod.name !== expected) {
    throw new Error(`leader pod of group ${groupIndex} must be named ${expected}, got ${leaderPod.name}`);
  }
  if (!leaderPod.uid) throw new Error(`leader pod ${leaderPod.name} needs a uid to own the group's objects`);
}

/** A copy of `base` with labels and annotations merged in (ours win over the user's for our own keys). */
function decorate(
  base: V1PodTemplateSpec,
  labels: Record<string, string>,
  annotations: Record<string, string>,
): V1PodTemplateSpec {
  const out = cloneJson(base);
  out.metadata = {
    ...out.metadata,
    labels: { ...out.metadata?.labels, ...labels },
    annotations: { ...out.metadata?.annotations, ...annotations },
  };
  return out;
}

/** Ours win over the user's for our own keys (as upstream's mergeMetadata). */
function merged(user: Record<string, string> | undefined, ours: Record<string, string>): Record<string, string> {
  return { ...user, ...ours };
}

/** The node label whose domains each hold one group only (upstream's exclusive placement), if the LWS asks for it. */
export function exclusiveTopologyKey(lws: Pick<LeaderWorkerSet, 'metadata'>): string | undefined {
  return lws.metadata.annotations?.[ANNOTATION_EXCLUSIVE_TOPOLOGY] || undefined;
}

/**
 * The pod annotations that tell the admission webhook (src/admission) how to place and label each pod: the group
 * size, exclusive placement and the subgroup policy. The LWS annotations are read from the live LWS, as upstream.
 */
function placementAnnotations(lws: DefaultedLeaderWorkerSet): Record<string, string> {
  const { size, subGroupPolicy } = lws.spec.leaderWorkerTemplate;
  const lwsAnnotations = lws.metadata.annotations ?? {};
  const out: Record<string, string> = { [ANNOTATION_SIZE]: String(size) };
  const exclusive = exclusiveTopologyKey(lws);
  if (exclusive !== undefined) out[ANNOTATION_EXCLUSIVE_TOPOLOGY] = exclusive;
  if (subGroupPolicy !== undefined) {
    out[ANNOTATION_SUBGROUP_POLICY_TYPE] = subGroupPolicy.subGroupPolicyType;
    out[ANNOTATION_SUBGROUP_SIZE] = String(subGroupPolicy.subGroupSize);
    const subExclusive = lwsAnnotations[ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY];
    if (subExclusive) out[ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY] = subExclusive;
  }
  return out;
}

/**
 * Upstream copies only these fields of each claim template, and its namespace: the StatefulSet controller names each
 * claim per pod. The same fields as upstream's, so that its server-side apply, taking over, changes nothing (they are
 * immutable on a StatefulSet).
 */
function claimTemplates(lws: DefaultedLeaderWorkerSet): V1PersistentVolumeClaim[] | undefined {
  const templates = lws.spec.leaderWorkerTemplate.volumeClaimTemplates;
  if (templates === undefined || templates.length === 0) return undefined;
  return templates.map((t) => {
    const spec: NonNullable<V1PersistentVolumeClaim['spec']> = {};
    if (t.spec?.accessModes !== undefined) spec.accessModes = [...t.spec.accessModes];
    if (t.spec?.storageClassName !== undefined) spec.storageClassName = t.spec.storageClassName;
    if (t.spec?.volumeMode !== undefined) spec.volumeMode = t.spec.volumeMode;
    if (t.spec?.resources?.requests !== undefined || t.spec?.resources?.limits !== undefined) {
      spec.resources = cloneJson(t.spec.resources);
    }
    const metadata = { name: t.metadata?.name ?? '', namespace: lws.metadata.namespace ?? '' };
    return { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata, spec };
  });
}

/** The volume claims and their retention, the same on the leader and the worker StatefulSets. */
function volumeClaims(
  lws: DefaultedLeaderWorkerSet,
): Pick<V1StatefulSetSpec, 'volumeClaimTemplates' | 'persistentVolumeClaimRetentionPolicy'> {
  const out: Pick<V1StatefulSetSpec, 'volumeClaimTemplates' | 'persistentVolumeClaimRetentionPolicy'> = {};
  const templates = claimTemplates(lws);
  if (templates !== undefined) out.volumeClaimTemplates = templates;
  const retention = lws.spec.leaderWorkerTemplate.persistentVolumeClaimRetentionPolicy;
  if (retention !== undefined) out.persistentVolumeClaimRetentionPolicy = cloneJson(retention);
  return out;
}

/** Not the termination policy: a change must not roll any group, so live leader pods carry it (leaderPodPatch). */
export function buildLeaderPodTemplate(lws: DefaultedLeaderWorkerSet, revisionHash: string): V1PodTemplateSpec {
  const { name, namespace } = identity(lws);
  const { leaderWorkerTemplate: lwt, networkConfig } = lws.spec;
  const annotations = placementAnnotations(lws);
  if (networkConfig.subdomainPolicy === 'UniquePerReplica') {
    annotations[ANNOTATION_SUBDOMAIN_POLICY] = networkConfig.subdomainPolicy;
  }
  const template = decorate(
    lwt.leaderTemplate ?? lwt.workerTemplate,
    { [LABEL_NAME]: name, [LABEL_WORKER_INDEX]: '0', [LABEL_TEMPLATE_REVISION_HASH]: revisionHash },
    annotations,
  );
  template.spec = withLwsEnv(
    template.spec ?? { containers: [] },
    leaderEnvVars(name, namespace, lwt.size, networkConfig.subdomainPolicy),
  );
  return template;
}

export interface LeaderStatefulSetOptions {
  /** Template revision hash label; default: revisionKey(lws). */
  revisionHash?: string;
  /** Leader pods wanted now (e.g. replicas plus surge during a rolling update); default: spec.replicas. */
  replicas?: number;
  /** Ordinals below this keep the old template; default: spec.rolloutStrategy.rollingUpdateConfiguration.partition. */
  partition?: number;
}

export type LeaderStatefulSetStep = Required<Pick<LeaderStatefulSetOptions, 'replicas' | 'partition'>>;

/** Parallel pod management: groups start and stop independently. */
export function buildLeaderStatefulSet(lws: LeaderWorkerSet, options: LeaderStatefulSetOptions = {}): V1StatefulSet {
  const d = applyDefaults(lws);
  const { name, namespace } = identity(d);
  const revisionHash = options.revisionHash ?? revisionKey(d);
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {
      name: leaderStatefulSetName(name),
      namespace,
      labels: merged(d.metadata.labels, { [LABEL_NAME]: name, [LABEL_TEMPLATE_REVISION_HASH]: revisionHash }),
      annotations: merged(d.metadata.annotations, { [ANNOTATION_REPLICAS]: String(d.spec.replicas) }),
      ownerReferences: [lwsOwnerReference(d)],
    },
    spec: {
      ...volumeClaims(d),
      replicas: options.replicas ?? d.spec.replicas,
      serviceName: headlessServiceName(name),
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: { [LABEL_NAME]: name, [LABEL_WORKER_INDEX]: '0' } },
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: {
          partition: options.partition ?? d.spec.rolloutStrategy.rollingUpdateConfiguration.partition,
          // Honoured where the MaxUnavailableStatefulSet feature is on; dropped by the API server elsewhere.
          maxUnavailable: leaderStatefulSetMaxUnavailable(d.spec),
        },
      },
      template: buildLeaderPodTemplate(d, revisionHash),
    },
  };
}

export interface WorkerStatefulSetInput {
  groupIndex: number;
  leaderPod: LeaderPodRef;
  /** Value of the group-key label: sha1 hex of names.groupKeyInput(namespace, leaderPod.name), computed by the caller. */
  groupKey: string;
  /** The leader's, so that workers match its revision (with that revision's spec as `lws`); default: the spec's. */
  revisionHash?: string;
  /** Exclusive placement: the leader's node's value of the topology key, so the workers follow it onto that domain. */
  topology?: { key: string; value: string };
}

type WorkerPodTemplateInput = WorkerStatefulSetInput & { revisionHash: string };

export function buildWorkerPodTemplate(
  lws: DefaultedLeaderWorkerSet,
  input: WorkerPodTemplateInput,
): V1PodTemplateSpec {
  const { name, namespace } = identity(lws);
  const { size, workerTemplate } = lws.spec.leaderWorkerTemplate;
  const annotations: Record<string, string> = {
    ...placementAnnotations(lws),
    [ANNOTATION_LEADER_NAME]: input.leaderPod.name,
  };
  // The workers' TPU env then counts the leader as a TPU worker (the leader pod runs the leader template).
  const leaderTemplate = lws.spec.leaderWorkerTemplate.leaderTemplate ?? workerTemplate;
  if (leaderTemplate.spec && podRequestsTpus(leaderTemplate.spec))
    annotations[ANNOTATION_LEADER_REQUESTS_TPUS] = 'true';
  const template = decorate(
    workerTemplate,
    {
      [LABEL_NAME]: name,
      [LABEL_GROUP_INDEX]: String(input.groupIndex),
      [LABEL_GROUP_KEY]: input.groupKey,
      [LABEL_TEMPLATE_REVISION_HASH]: input.revisionHash,
    },
    annotations,
  );
  template.spec = withLwsEnv(
    template.spec ?? { containers: [] },
    workerEnvVars(name, namespace, input.groupIndex, size, lws.spec.networkConfig.subdomainPolicy),
  );
  if (input.topology !== undefined) {
    template.spec.nodeSelector = { ...template.spec.nodeSelector, [input.topology.key]: input.topology.value };
  }
  return template;
}

/** Undefined for size 1: such a group is its leader alone. */
export function buildWorkerStatefulSet(lws: LeaderWorkerSet, input: WorkerStatefulSetInput): V1StatefulSet | undefined {
  const d = applyDefaults(lws);
  const { size } = d.spec.leaderWorkerTemplate;
  if (size <= 1) return undefined;
  const { name, namespace } = identity(d);
  checkLeaderPod(name, input.groupIndex, input.leaderPod);
  if (!input.groupKey) throw new Error('worker StatefulSet needs the group key');
  const full: WorkerPodTemplateInput = {
    ...input,
    revisionHash: input.revisionHash ?? revisionKey(d),
  };
  const selector = {
    [LABEL_NAME]: name,
    [LABEL_GROUP_INDEX]: String(input.groupIndex),
    [LABEL_GROUP_KEY]: input.groupKey,
  };
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {
      name: workerStatefulSetName(name, input.groupIndex),
      namespace,
      labels: merged(d.metadata.labels, { ...selector, [LABEL_TEMPLATE_REVISION_HASH]: full.revisionHash }),
      ...(d.metadata.annotations !== undefined && { annotations: { ...d.metadata.annotations } }),
      ownerReferences: [leaderPodOwnerReference(input.leaderPod)],
    },
    spec: {
      ...volumeClaims(d),
      replicas: size - 1,
      ordinals: { start: 1 },
      serviceName: workerServiceName(name, input.groupIndex, d.spec.networkConfig.subdomainPolicy),
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: selector },
      template: buildWorkerPodTemplate(d, full),
    },
  };
}

/** What a template cannot carry per pod; the termination policy must stay readable once the LWS is gone. */
export function leaderPodPatch(input: {
  groupIndex: number;
  groupKey: string;
  podTerminationPolicy: PodTerminationPolicyValue;
}): { metadata: { labels: Record<string, string>; annotations: Record<string, string> } } {
  return {
    metadata: {
      labels: { [LABEL_GROUP_INDEX]: String(input.groupIndex), [LABEL_GROUP_KEY]: input.groupKey },
      annotations: { [ANNOTATION_POD_TERMINATION_POLICY]: input.podTerminationPolicy },
    },
  };
}
