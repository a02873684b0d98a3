// Pure builders of the objects the controller creates for an LWS (DESIGN.md section 2): the headless Service(s), the
// leader StatefulSet and one worker StatefulSet per group. Activities send the results to the API server as they are.
//
// Upstream puts per-pod labels and env vars in with a mutating pod webhook. This controller has none, so everything
// goes into the StatefulSet pod templates, and what differs per pod comes from the StatefulSet controller's
// `apps.kubernetes.io/pod-index` label through the downward API (see env.ts). Per-pod labels that a template cannot
// carry (a leader's group-index and group-key, a worker's worker-index) are for the caller to patch onto the pods.
import type { V1OwnerReference, V1PodTemplateSpec, V1Service, V1StatefulSet } from '@kubernetes/client-node';
import { applyDefaults } from './defaults.js';
import { leaderEnvVars, withLwsEnv, workerEnvVars } from './env.js';
import { cloneJson } from './json.js';
import {
  ANNOTATION_POD_TERMINATION_POLICY,
  ANNOTATION_LEADER_NAME,
  ANNOTATION_SIZE,
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
import { templateRevisionHash } from './revision.js';
import { leaderStatefulSetMaxUnavailable } from './rollout.js';
import type { DefaultedLeaderWorkerSet, LeaderWorkerSet, PodTerminationPolicy } from './types.js';

/** A leader pod as the worker StatefulSet's owner: name and uid of the live pod. */
export interface LeaderPodRef {
  name: string;
  uid: string;
}

interface LwsIdentity {
  name: string;
  namespace: string;
  uid: string;
}

/** Name, namespace and uid, which every owned object needs; a missing one is a caller bug, so it throws. */
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
): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels: { [LABEL_NAME]: lwsName }, ownerReferences: [owner] },
    // publishNotReadyAddresses: group members must find each other while they start, before they are ready.
    spec: { clusterIP: 'None', publishNotReadyAddresses: true, selector },
  };
}

/**
 * The headless Service named after the LWS, owned by it; the leader StatefulSet's serviceName. Under Shared it
 * selects every pod of the LWS; under UniquePerReplica only the leaders, since each group's workers get their own
 * Service (buildGroupService).
 */
export function buildHeadlessService(lws: LeaderWorkerSet): V1Service {
  const d = applyDefaults(lws);
  const { name, namespace } = identity(d);
  const selector: Record<string, string> =
    d.spec.networkConfig.subdomainPolicy === 'UniquePerReplica'
      ? { [LABEL_NAME]: name, [LABEL_WORKER_INDEX]: '0' }
      : { [LABEL_NAME]: name };
  return headless(headlessServiceName(name), namespace, name, selector, lwsOwnerReference(d));
}

/**
 * Under UniquePerReplica, the group's own headless Service `<lws>-<i>`, owned by the leader pod (as upstream), the
 * serviceName of the group's worker StatefulSet. Undefined under Shared, where no such Service exists.
 */
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
  return headless(groupServiceName(name, groupIndex), namespace, name, selector, leaderPodOwnerReference(leaderPod));
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

/**
 * The leader pod template: leaderTemplate (else workerTemplate) with labels name, worker-index "0" and the revision
 * hash, annotations size (and subdomainPolicy under UniquePerReplica), and the LWS env vars. The termination policy
 * is deliberately not in the template: changing it must apply to the next teardown without rolling any group, so the
 * controller records it on each live leader pod instead (see leaderPodPatch).
 */
export function buildLeaderPodTemplate(lws: DefaultedLeaderWorkerSet, revisionHash: string): V1PodTemplateSpec {
  const { name, namespace } = identity(lws);
  const { leaderWorkerTemplate: lwt, networkConfig } = lws.spec;
  const annotations: Record<string, string> = { [ANNOTATION_SIZE]: String(lwt.size) };
  if (networkConfig.subdomainPolicy === 'UniquePerReplica') {
    annotations[ANNOTATION_SUBDOMAIN_POLICY] = networkConfig.subdomainPolicy;
  }
  const template = decorate(
    lwt.leaderTemplate ?? lwt.workerTemplate,
    { [LABEL_NAME]: name, [LABEL_WORKER_INDEX]: '0', [LABEL_TEMPLATE_REVISION_HASH]: revisionHash },
    annotations,
  );
  template.spec = withLwsEnv(template.spec ?? { containers: [] }, leaderEnvVars(name, namespace, lwt.size));
  return template;
}

export interface LeaderStatefulSetOptions {
  /** Template revision hash label; default: templateRevisionHash(lws.spec). */
  revisionHash?: string;
  /** Leader pods wanted now (e.g. replicas plus surge during a rolling update); default: spec.replicas. */
  replicas?: number;
  /** Ordinals below this keep the old template; default: spec.rolloutStrategy.rollingUpdateConfiguration.partition. */
  partition?: number;
}

/** A leader StatefulSet's size and partition, as one rolling-update step wrote them. */
export type LeaderStatefulSetStep = Required<Pick<LeaderStatefulSetOptions, 'replicas' | 'partition'>>;

/**
 * The leader StatefulSet (DESIGN.md section 2): named after the LWS and owned by it, serviceName the LWS's headless
 * Service, Parallel pod management (groups start and stop independently), selector name + worker-index "0".
 */
export function buildLeaderStatefulSet(lws: LeaderWorkerSet, options: LeaderStatefulSetOptions = {}): V1StatefulSet {
  const d = applyDefaults(lws);
  const { name, namespace } = identity(d);
  const revisionHash = options.revisionHash ?? templateRevisionHash(d.spec);
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {
      name: leaderStatefulSetName(name),
      namespace,
      labels: { [LABEL_NAME]: name, [LABEL_TEMPLATE_REVISION_HASH]: revisionHash },
      ownerReferences: [lwsOwnerReference(d)],
    },
    spec: {
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
  /** The live leader pod of the group, which will own the StatefulSet. */
  leaderPod: LeaderPodRef;
  /** Value of the group-key label: sha1 hex of names.groupKeyInput(namespace, leaderPod.name), computed by the caller. */
  groupKey: string;
  /**
   * The leader pod's template-revision-hash label, so that workers match their leader's revision; default:
   * templateRevisionHash(lws.spec). Pass the spec of that revision as `lws` when it is not the current one.
   */
  revisionHash?: string;
}

/**
 * The worker pod template of one group: workerTemplate with labels name, group-index, group-key and the revision
 * hash, annotations size and leader-name, and the LWS env vars.
 */
export function buildWorkerPodTemplate(
  lws: DefaultedLeaderWorkerSet,
  input: Required<WorkerStatefulSetInput>,
): V1PodTemplateSpec {
  const { name, namespace } = identity(lws);
  const { size, workerTemplate } = lws.spec.leaderWorkerTemplate;
  const template = decorate(
    workerTemplate,
    {
      [LABEL_NAME]: name,
      [LABEL_GROUP_INDEX]: String(input.groupIndex),
      [LABEL_GROUP_KEY]: input.groupKey,
      [LABEL_TEMPLATE_REVISION_HASH]: input.revisionHash,
    },
    { [ANNOTATION_SIZE]: String(size), [ANNOTATION_LEADER_NAME]: input.leaderPod.name },
  );
  template.spec = withLwsEnv(
    template.spec ?? { containers: [] },
    workerEnvVars(name, namespace, input.groupIndex, size),
  );
  return template;
}

/**
 * The worker StatefulSet of group `groupIndex` (DESIGN.md section 2): named after the leader pod and owned by it
 * (controller, blockOwnerDeletion), size-1 replicas with ordinals from 1, so worker pods are `<lws>-<i>-1..size-1`.
 * Undefined when size is 1: such a group is its leader alone, and no worker StatefulSet is created.
 */
export function buildWorkerStatefulSet(lws: LeaderWorkerSet, input: WorkerStatefulSetInput): V1StatefulSet | undefined {
  const d = applyDefaults(lws);
  const { size } = d.spec.leaderWorkerTemplate;
  if (size <= 1) return undefined;
  const { name, namespace } = identity(d);
  checkLeaderPod(name, input.groupIndex, input.leaderPod);
  if (!input.groupKey) throw new Error('worker StatefulSet needs the group key');
  const full: Required<WorkerStatefulSetInput> = {
    ...input,
    revisionHash: input.revisionHash ?? templateRevisionHash(d.spec),
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
      labels: { ...selector, [LABEL_TEMPLATE_REVISION_HASH]: full.revisionHash },
      ownerReferences: [leaderPodOwnerReference(input.leaderPod)],
    },
    spec: {
      replicas: size - 1,
      ordinals: { start: 1 },
      serviceName: workerServiceName(name, input.groupIndex, d.spec.networkConfig.subdomainPolicy),
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: selector },
      template: buildWorkerPodTemplate(d, full),
    },
  };
}

/**
 * The labels and annotation the controller sets on a live leader pod (a template cannot carry them per pod): its
 * group index and group key, and the termination policy, which must stay readable once the LWS is gone.
 */
export function leaderPodPatch(input: {
  groupIndex: number;
  groupKey: string;
  podTerminationPolicy: PodTerminationPolicy;
}): { metadata: { labels: Record<string, string>; annotations: Record<string, string> } } {
  return {
    metadata: {
      labels: { [LABEL_GROUP_INDEX]: String(input.groupIndex), [LABEL_GROUP_KEY]: input.groupKey },
      annotations: { [ANNOTATION_POD_TERMINATION_POLICY]: input.podTerminationPolicy },
    },
  };
}
