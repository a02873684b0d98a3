// Pods stuck Terminating on a dead node, for a teardown's pod waits: once a watched pod is past its grace period, its
// node is read every few seconds until the pod goes or model/dead-node.ts names a signal. Nothing more is read while
// pods go in time. And the force delete of exactly the pods such a wait named.
import type { V1Pod } from '@kubernetes/client-node';
import {
  deadNodeSignal,
  isoTime,
  nodeFacts,
  pastGracePeriodAt,
  type NodeFacts,
  type ObjectIdentity,
  type TerminatingPodFacts,
} from '../model/index.js';
import { allSettledOrThrow } from '../shared/all-settled.js';
import { log } from './activity-context.js';
import type { KubeClients } from './clients.js';
import { isHttpConflict, isHttpNotFound } from '../kube/api-errors.js';
import { classify, orNull } from './kube-errors.js';
import type { DeadNodeOptions, ForceDeleteResult, StuckPod, StuckResult } from './types.js';
import { now } from './wait-support.js';

/** How often the node of a pod past its grace period is read. */
export const NODE_LOOK_INTERVAL_MS = 3_000;

const factsOf = (pod: V1Pod): TerminatingPodFacts => ({
  deletionTimestamp: isoTime(pod.metadata?.deletionTimestamp),
  deletionGracePeriodSeconds: pod.metadata?.deletionGracePeriodSeconds,
  nodeName: pod.spec?.nodeName,
});

/** Follows the pod a wait watches (as its watch shows it) and tells when it, and any of `others`, is stuck. */
export class StuckWatch {
  private pod: { target: ObjectIdentity; seen: V1Pod } | null = null;
  private wake?: () => void;
  private lookedAt = 0;

  constructor(
    private readonly c: KubeClients,
    private readonly opts: DeadNodeOptions,
    /** The wait's pods not yet seen gone besides the watched one: read only once the watched one is stuck. */
    private readonly others: () => ObjectIdentity[] = () => [],
  ) {}

  /** The watched pod as its watch shows it now; null once it is gone (or the name is another uid's). */
  seen(target: ObjectIdentity, pod: V1Pod | null): void {
    this.pod = pod === null ? null : { target, seen: pod };
    this.wake?.();
  }

  /** The stuck pods, once the watched one is; [] only when stopped (nobody reads it then). */
  async stuck(stop: AbortSignal): Promise<StuckPod[]> {
    while (!stop.aborted) {
      const watched = this.pod;
      const due = watched ? pastGracePeriodAt(factsOf(watched.seen)) : undefined;
      const lookAt = due === undefined ? undefined : Math.max(due, this.lookedAt + NODE_LOOK_INTERVAL_MS);
      if (watched === null || lookAt === undefined || Date.now() < lookAt) {
        await this.sleep(stop, lookAt === undefined ? undefined : lookAt - Date.now());
        continue;
      }
      this.lookedAt = Date.now();
      const nodes = new Map<string, Promise<NodeFacts | null | undefined>>();
      const first = await this.judge(watched.target, watched.seen, nodes);
      if (first === undefined) continue;
      const rest = await Promise.all(
        this.others().map(async (target) => {
          const pod = await orNull(() => this.c.pods.read(target)).catch(() => null);
          return pod?.metadata?.uid === target.uid ? this.judge(target, pod, nodes) : undefined;
        }),
      );
      return [first, ...rest.filter((s) => s !== undefined)];
    }
    return [];
  }

  private async judge(
    target: ObjectIdentity,
    pod: V1Pod,
    nodes: Map<string, Promise<NodeFacts | null | undefined>>,
  ): Promise<StuckPod | undefined> {
    const facts = factsOf(pod);
    const node = facts.nodeName;
    const due = pastGracePeriodAt(facts);
    if (node === undefined || due === undefined || Date.now() < due) return undefined;
    if (!nodes.has(node)) nodes.set(node, this.readNode(node));
    const read = await nodes.get(node);
    if (read === undefined) return undefined;
    const signal = deadNodeSignal(facts, read, Date.now(), this.opts.forceDeleteOnNodeNotReadySeconds);
    if (signal === undefined) return undefined;
    log('info', 'pod stuck on a dead node', { pod: `${target.namespace}/${target.name}`, node, signal });
    return { pod: target, node, signal };
  }

  /** null: the Node is gone; undefined: no answer (never a reason to force-delete: the next look comes soon). */
  private async readNode(name: string): Promise<NodeFacts | null | undefined> {
    try {
      const node = await orNull(() => this.c.nodes.read({ namespace: '', name }));
      return node && nodeFacts(node);
    } catch (err) {
      log('debug', 'could not read the node of a pod past its grace period', { node: name, error: String(err) });
      return undefined;
    }
  }

  /** Until the watched pod changes, `ms` pass, or the wait stops. */
  private sleep(stop: AbortSignal, ms?: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stop.removeEventListener('abort', done);
        this.wake = undefined;
        resolve();
      };
      const timer = ms === undefined ? undefined : setTimeout(done, Math.max(0, ms));
      this.wake = done;
      stop.addEventListener('abort', done, { once: true });
    });
  }
}

/** The wait's own end, or the stuck pods if the watch finds them first; the loser is stopped. */
export async function orStuck<R>(
  watch: StuckWatch,
  waiting: (stop: AbortSignal) => Promise<R>,
): Promise<R | StuckResult> {
  const stop = new AbortController();
  try {
    return await Promise.race([waiting(stop.signal), watch.stuck(stop.signal).then((stuck) => ({ stuck }))]);
  } finally {
    stop.abort();
  }
}

/**
 * Grace period 0, each with its uid as a precondition: a pod of that name made since is never touched (409), and one
 * gone meanwhile (404, podgc's own force delete, say) is left out of `deleted`, as is one a retry finds gone.
 */
export async function forceDeletePods(c: KubeClients, input: { pods: StuckPod[] }): Promise<ForceDeleteResult> {
  const at = now();
  const outcomes = await allSettledOrThrow(
    input.pods.map(async (stuck) => {
      const { pod } = stuck;
      try {
        await c.pods.delete(pod, { gracePeriodSeconds: 0, preconditions: { uid: pod.uid } });
      } catch (err) {
        if (isHttpNotFound(err) || isHttpConflict(err)) return undefined;
        throw classify(err);
      }
      log('warn', 'pod force-deleted: its node will never finish it', {
        pod: `${pod.namespace}/${pod.name}`,
        uid: pod.uid,
        node: stuck.node,
        signal: stuck.signal,
      });
      return stuck;
    }),
  );
  return { at, deleted: outcomes.filter((s) => s !== undefined) };
}
