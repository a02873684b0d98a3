// Names of the objects an LWS owns (upstream's, so that existing tools find them), the leader's DNS address, and
// Temporal workflow IDs: deterministic, so a start again after a trigger restart meets the run already going.
import type { Lifecycle } from './lifecycle.js';
import type { ObjectKey } from './objects.js';
import type { SubdomainPolicy } from './types.js';

export function leaderStatefulSetName(lwsName: string): string {
  return lwsName;
}

export function leaderPodName(lwsName: string, groupIndex: number): string {
  return `${lwsName}-${groupIndex}`;
}

export function workerStatefulSetName(lwsName: string, groupIndex: number): string {
  return leaderPodName(lwsName, groupIndex);
}

/** Worker pods: `<lws>-<groupIndex>-<workerIndex>`, workerIndex 1..size-1 (the worker StatefulSet starts at 1). */
export function workerPodName(lwsName: string, groupIndex: number, workerIndex: number): string {
  return `${workerStatefulSetName(lwsName, groupIndex)}-${workerIndex}`;
}

/** This project's ControllerRevision of a template revision (one per hash, so a create is idempotent). */
export function controllerRevisionName(lwsName: string, revisionHash: string): string {
  return `${lwsName}-${revisionHash}`;
}

/** Kubernetes' limit on a label value and a DNS-1035 label, which pod names and group Services are. */
const MAX_LABEL = 63;
/** The StatefulSet controller labels each pod `controller-revision-hash=<StatefulSet>-<hash of up to 10 characters>`. */
const REVISION_SUFFIX = 11;

/**
 * The longest LWS name whose derived names all fit: leader StatefulSet `<lws>`, leader pods and worker StatefulSets
 * `<lws>-<g>`, worker pods `<lws>-<g>-<w>`, with g up to the last surge group. The CRD's CEL rule computes the same.
 */
export function longestLwsName(input: { replicas: number; size: number; surge: number }): number {
  const lastGroup = Math.max(input.replicas + Math.min(input.surge, input.replicas) - 1, 0);
  const groupDigits = String(lastGroup).length;
  const leaderLimit = MAX_LABEL - REVISION_SUFFIX; // `<lws>-<hash>`
  if (input.size <= 1) return Math.min(leaderLimit, MAX_LABEL - 1 - groupDigits);
  const workerDigits = String(input.size - 1).length;
  return Math.min(
    MAX_LABEL - REVISION_SUFFIX - 1 - groupDigits, // `<lws>-<g>-<hash>`
    MAX_LABEL - 2 - groupDigits - workerDigits, // `<lws>-<g>-<w>`
  );
}

/** Always exists: as the leader StatefulSet's serviceName, it gives leader pods DNS names under both policies. */
export function headlessServiceName(lwsName: string): string {
  return lwsName;
}

/** The per-group headless Service of the UniquePerReplica subdomain policy, named after the leader pod (as upstream). */
export function groupServiceName(lwsName: string, groupIndex: number): string {
  return leaderPodName(lwsName, groupIndex);
}

/** serviceName of a group's worker StatefulSet, i.e. the DNS subdomain of its worker pods. */
export function workerServiceName(lwsName: string, groupIndex: number, policy: SubdomainPolicy): string {
  return policy === 'UniquePerReplica' ? groupServiceName(lwsName, groupIndex) : headlessServiceName(lwsName);
}

/**
 * The DNS name of a group's leader, as upstream gives it: under Shared `<lws>-<i>.<lws>.<ns>`; under UniquePerReplica
 * `<lws>-<i>.<lws>-<i>.<ns>`, the leader's subdomain being its own name (set by the pod webhook) and its group's
 * Service answering for it.
 */
export function leaderAddress(
  lwsName: string,
  groupIndex: number | string,
  namespace: string,
  policy: SubdomainPolicy = 'Shared',
): string {
  const leader = `${lwsName}-${groupIndex}`;
  return `${leader}.${policy === 'UniquePerReplica' ? leader : headlessServiceName(lwsName)}.${namespace}`;
}

/** The text whose sha1 hex is a group's group-key label: `<namespace>/<leaderPodName>` (as upstream). */
export function groupKeyInput(namespace: string, leaderPod: string): string {
  return `${namespace}/${leaderPod}`;
}

/** A StatefulSet ordinal as Kubernetes writes it: decimal, no leading zeros. */
const ORDINAL = '(0|[1-9][0-9]*)';

export function parseGroupIndex(lwsName: string, podName: string): number | undefined {
  const prefix = `${lwsName}-`;
  if (!podName.startsWith(prefix)) return undefined;
  const rest = podName.slice(prefix.length);
  return new RegExp(`^${ORDINAL}$`).test(rest) ? Number(rest) : undefined;
}

/** By name alone, which is ambiguous between LWSes `x` and `x-1`: prefer the pod's labels where they exist. */
export function parsePodName(
  lwsName: string,
  podName: string,
): { groupIndex: number; workerIndex: number } | undefined {
  const prefix = `${lwsName}-`;
  if (!podName.startsWith(prefix)) return undefined;
  const match = new RegExp(`^${ORDINAL}(?:-${ORDINAL})?$`).exec(podName.slice(prefix.length));
  if (match === null) return undefined;
  const workerIndex = match[2] === undefined ? 0 : Number(match[2]);
  if (match[2] !== undefined && workerIndex === 0) return undefined; // worker ordinals start at 1
  return { groupIndex: Number(match[1]), workerIndex };
}

/** The lifecycles that run as Temporal workflows, with what makes each run unique. */
export type WorkflowOp =
  | { kind: 'reconcile'; generation: number }
  | { kind: 'provision'; groupIndex: number; leaderUid: string }
  | { kind: 'teardown'; groupIndex: number; oldLeaderUid: string; lifecycle?: Lifecycle }
  /** Restart policy: a pod of the group restarted or was deleted, so the whole group is recreated via its leader. */
  | { kind: 'recreate'; groupIndex: number; leaderUid: string; beforeStart?: boolean; recover?: boolean };

/**
 * Every workflow ID of one LWS starts with this: the cluster's name first, so that clusters sharing a Temporal
 * namespace never meet on an ID.
 */
export function lwsWorkflowIdPrefix(cluster: string, ref: ObjectKey): string {
  return `lws/${cluster}/${ref.namespace}/${ref.name}/`;
}

/** Readable in the Temporal UI and a function of the inputs; a teardown's lifecycle is in its search attributes. */
export function workflowId(cluster: string, ref: ObjectKey, op: WorkflowOp): string {
  const base = lwsWorkflowIdPrefix(cluster, ref).slice(0, -1);
  switch (op.kind) {
    case 'reconcile':
      return `${base}/reconcile/${op.generation}`;
    case 'provision':
      return `${base}/group-${op.groupIndex}/provision/${op.leaderUid}`;
    case 'teardown':
      return `${base}/group-${op.groupIndex}/teardown/${op.oldLeaderUid}`;
    case 'recreate':
      // A restart before the group fully started gets its own ID, so that an ignored one (RecreateGroupAfterStart)
      // does not use up the ID of a later restart that must recreate the group.
      // A recover of a failed group too: the recreate of that leader has already run (and spent the budget).
      return `${base}/group-${op.groupIndex}/recreate/${op.leaderUid}${op.beforeStart ? '/before-start' : ''}${op.recover ? '/recover' : ''}`;
  }
}

export function workflowSummary(ref: ObjectKey, op: WorkflowOp): string {
  const lws = `${ref.namespace}/${ref.name}`;
  switch (op.kind) {
    case 'reconcile':
      return `reconcile ${lws} at generation ${op.generation}`;
    case 'provision':
      return `provision group ${op.groupIndex} of ${lws}`;
    case 'teardown':
      return `tear down group ${op.groupIndex} of ${lws}${op.lifecycle ? ` (${op.lifecycle})` : ''}`;
    case 'recreate':
      return op.recover
        ? `recover failed group ${op.groupIndex} of ${lws}`
        : `recreate group ${op.groupIndex} of ${lws} after a pod restart`;
  }
}

const SEG = '([^/]+)';

/** The inverse of workflowId: which cluster, LWS and lifecycle an ID belongs to, or undefined for any other ID. */
export function parseWorkflowId(id: string): { cluster: string; ref: ObjectKey; op: WorkflowOp } | undefined {
  const head = new RegExp(`^lws/${SEG}/${SEG}/${SEG}/(.+)$`).exec(id);
  if (head === null) return undefined;
  const cluster = head[1] ?? '';
  const ref: ObjectKey = { namespace: head[2] ?? '', name: head[3] ?? '' };
  const tail = head[4] ?? '';
  let m: RegExpExecArray | null;
  if ((m = new RegExp(`^reconcile/${ORDINAL}$`).exec(tail)) !== null) {
    return { cluster, ref, op: { kind: 'reconcile', generation: Number(m[1]) } };
  }
  if ((m = new RegExp(`^group-${ORDINAL}/recreate/${SEG}/(before-start|recover)$`).exec(tail)) !== null) {
    const op: WorkflowOp = {
      kind: 'recreate',
      groupIndex: Number(m[1]),
      leaderUid: m[2] ?? '',
      ...(m[3] === 'recover' ? { recover: true } : { beforeStart: true }),
    };
    return { cluster, ref, op };
  }
  if ((m = new RegExp(`^group-${ORDINAL}/(provision|teardown|recreate)/${SEG}$`).exec(tail)) !== null) {
    const groupIndex = Number(m[1]);
    const uid = m[3] ?? '';
    if (m[2] === 'teardown') return { cluster, ref, op: { kind: 'teardown', groupIndex, oldLeaderUid: uid } };
    return { cluster, ref, op: { kind: m[2] === 'provision' ? 'provision' : 'recreate', groupIndex, leaderUid: uid } };
  }
  return undefined;
}
