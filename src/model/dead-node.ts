// When a teardown may force-delete a pod stuck Terminating: only once its grace period is over, and only when its node
// will never finish it (docs/operations.md, "Dead nodes"). A force delete of a pod whose node still runs it can leave
// two copies of its process on the same GPUs and network identity, so NotReady alone counts only when the user opted in.
import type { V1Node } from '@kubernetes/client-node';
import { isoTime } from './objects.js';

/** Kubernetes' non-graceful node shutdown: an operator's word that the node is off and its pods can go. */
export const TAINT_OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';

/**
 * Past the deletionTimestamp before a pod counts as past its grace period: the timestamp has whole seconds (cut, not
 * rounded), and the API server's clock is not the worker's.
 */
export const FORCE_DELETE_MARGIN_MS = 2_000;

/** The field that opts in to a force delete on NotReady alone. */
export const FORCE_DELETE_NOT_READY_FIELD = 'spec.forceDeleteOnNodeNotReadySeconds';

/** What the rule reads of a terminating pod. */
export interface TerminatingPodFacts {
  /** RFC 3339: when its grace period ends. */
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  nodeName?: string;
}

/** What the rule reads of a node. */
export interface NodeFacts {
  taintKeys: string[];
  /** The Ready condition, absent when the node reports none. */
  ready?: { status: string; lastTransitionTime?: string };
}

export function nodeFacts(node: Pick<V1Node, 'spec' | 'status'>): NodeFacts {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  const since = isoTime(ready?.lastTransitionTime);
  return {
    taintKeys: (node.spec?.taints ?? []).map((t) => t.key),
    ...(ready && { ready: { status: ready.status, ...(since !== undefined && { lastTransitionTime: since }) } }),
  };
}

/**
 * When (ms since the epoch) the pod counts as past its grace period; undefined when no force delete can ever apply: not
 * terminating, never scheduled (the API server removes it itself), or already deleted with grace 0 (its finalizers
 * hold it, and a force delete would change nothing).
 */
export function pastGracePeriodAt(pod: TerminatingPodFacts): number | undefined {
  if (!pod.deletionTimestamp || !pod.nodeName || pod.deletionGracePeriodSeconds === 0) return undefined;
  const end = Date.parse(pod.deletionTimestamp);
  return Number.isNaN(end) ? undefined : end + FORCE_DELETE_MARGIN_MS;
}

/**
 * Why a pod past its grace period may be force-deleted, in words (the Event and the timeline say it); undefined: leave
 * it to its kubelet. `node` null: the Node object is gone. `notReadySeconds`: the LWS's opt-in, unset = never on
 * NotReady alone.
 */
export function deadNodeSignal(
  pod: TerminatingPodFacts,
  node: NodeFacts | null,
  now: number,
  notReadySeconds?: number,
): string | undefined {
  const due = pastGracePeriodAt(pod);
  if (due === undefined || now < due) return undefined;
  if (node === null) return 'node gone';
  if (node.taintKeys.includes(TAINT_OUT_OF_SERVICE)) return 'node tainted out-of-service';
  if (notReadySeconds === undefined || node.ready === undefined || node.ready.status === 'True') return undefined;
  const since = Date.parse(node.ready.lastTransitionTime ?? '');
  if (Number.isNaN(since)) return undefined;
  const notReadyFor = Math.floor((now - since) / 1000);
  if (notReadyFor < notReadySeconds) return undefined;
  return `node NotReady for ${notReadyFor} s (${FORCE_DELETE_NOT_READY_FIELD} ${notReadySeconds})`;
}
