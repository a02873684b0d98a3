// Follows every pod of one namespace through a watch and answers, per group, when its old pods were gone and when a
// new set of pods was Ready: the two times the benchmark reports, measured from the API rather than the controller.
import * as k8s from '@kubernetes/client-node';
import { createLogger } from '../../src/log.js';
import { isPodReady, LABEL_NAME, parsePodName } from '../../src/model/index.js';
import { watchResource, type RunningWatch } from '../../src/kube/informer.js';
import { provisionPhases, type ProvisionPhases } from './provision-phases.js';

interface PodState {
  uid: string;
  lws: string;
  groupIndex: number;
  leader: boolean;
  seenAt: number;
  ready: boolean;
  /** When it was first seen Ready. */
  readyAt?: number;
  deleting: boolean;
  gone?: number;
  terminatingAt?: number;
}

/** A pending `until`: re-checked on its group's events (every event if it has no group) and once a second. */
interface Waiter {
  group?: string;
  check(): boolean;
}

const groupKey = (lws: string, groupIndex: number) => `${lws}/${groupIndex}`;

export class PodTracker {
  private readonly pods = new Map<string, PodState>();
  /** The same pods by group: a check looks at one group's pods, not the namespace's. */
  private readonly groups = new Map<string, PodState[]>();
  private readonly waiters = new Set<Waiter>();
  private watch?: RunningWatch;
  private ticker?: NodeJS.Timeout;
  /** The arrival of the watch event being handled. */
  private eventAt?: number;

  constructor(
    private readonly kc: k8s.KubeConfig,
    private readonly namespace: string,
  ) {}

  /** List + watch, listing again after any error: a silently ended watch would stall the benchmark. */
  async start(): Promise<void> {
    const core = this.kc.makeApiClient(k8s.CoreV1Api);
    this.watch = watchResource<k8s.V1Pod>({
      kc: this.kc,
      log: createLogger('bench-pod-tracker'),
      what: `pods of ${this.namespace}`,
      path: `/api/v1/namespaces/${this.namespace}/pods`,
      labelSelector: LABEL_NAME,
      list: () => core.listNamespacedPod({ namespace: this.namespace, labelSelector: LABEL_NAME }),
      handlers: {
        upsert: (pod) => this.onEvent('MODIFIED', pod),
        remove: (pod) => this.onEvent('DELETED', pod),
      },
    });
    // Deadlines, and a safety net: one timer for every waiter.
    this.ticker = setInterval(() => this.recheck(() => true), 1000);
    this.ticker.unref();
    await this.watch.synced;
  }

  stop(): void {
    clearInterval(this.ticker);
    void this.watch?.stop();
  }

  private onEvent(type: string, pod: k8s.V1Pod): void {
    const m = pod.metadata;
    const lws = m?.labels?.[LABEL_NAME];
    if (!m?.uid || !m.name || !lws) return;
    const parsed = parsePodName(lws, m.name);
    if (!parsed) return;
    const now = Date.now();
    let state = this.pods.get(m.uid);
    if (!state) {
      state = {
        uid: m.uid,
        lws,
        groupIndex: parsed.groupIndex,
        leader: parsed.workerIndex === 0,
        seenAt: now,
        ready: false,
        deleting: false,
      };
      this.pods.set(m.uid, state);
      const key = groupKey(lws, parsed.groupIndex);
      this.groups.set(key, [...(this.groups.get(key) ?? []), state]);
    }
    state.ready = isPodReady(pod);
    if (state.ready) state.readyAt ??= now;
    state.deleting = Boolean(m.deletionTimestamp);
    if (state.deleting) state.terminatingAt ??= now;
    if (type === 'DELETED') state.gone ??= now;
    // Times are taken here, so the waiters of other groups (hundreds in a large scenario) are not woken.
    const key = groupKey(lws, parsed.groupIndex);
    this.eventAt = now;
    this.recheck((w) => w.group === undefined || w.group === key);
    this.eventAt = undefined;
  }

  /**
   * When the watch event being handled arrived (now, outside one): waiters that resolve on the same event take the
   * same time, whatever order they are checked in.
   */
  now(): number {
    return this.eventAt ?? Date.now();
  }

  private recheck(which: (w: Waiter) => boolean): void {
    for (const w of [...this.waiters]) if (which(w) && w.check()) this.waiters.delete(w);
  }

  private groupPods(lws: string, groupIndex: number): PodState[] {
    return this.groups.get(groupKey(lws, groupIndex)) ?? [];
  }

  /** UIDs of the live pods of a group now. */
  groupUids(lws: string, groupIndex: number): string[] {
    return this.groupPods(lws, groupIndex)
      .filter((p) => !p.gone)
      .map((p) => p.uid);
  }

  /**
   * Resolves when `check` returns a value, re-evaluated on every watch event of `group` (of any group if none is
   * given) and every second.
   */
  until<T>(
    check: () => T | undefined,
    timeoutMs: number,
    what: string,
    group?: { lws: string; groupIndex: number },
  ): Promise<T> {
    return new Promise((resolve, reject) => {
      const deadline = Date.now() + timeoutMs;
      const waiter: Waiter = {
        group: group && groupKey(group.lws, group.groupIndex),
        check: () => {
          const value = check();
          if (value !== undefined) resolve(value);
          else if (Date.now() > deadline) reject(new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}`));
          else return false;
          return true;
        },
      };
      if (!waiter.check()) this.waiters.add(waiter);
    });
  }

  /** When the last of these pods was gone, once all are. */
  goneAt(uids: string[]): number | undefined {
    const times = uids.map((u) => this.pods.get(u)?.gone);
    return times.every((t) => t !== undefined) ? Math.max(...(times as number[])) : undefined;
  }

  /** When the first of these pods started terminating. */
  terminatingAt(uids: string[]): number | undefined {
    const times = uids.map((u) => this.pods.get(u)?.terminatingAt).filter((t): t is number => t !== undefined);
    return times.length ? Math.min(...times) : undefined;
  }

  /** A group of `size` Ready pods, none of them in `old`: the replacement group. */
  replacementReady(lws: string, groupIndex: number, size: number, old: Set<string>): boolean {
    const fresh = this.groupPods(lws, groupIndex).filter((p) => !p.gone && !p.deleting && !old.has(p.uid) && p.ready);
    return fresh.length >= size;
  }

  /** Leader pods of a group, other than the `old` ones, that appeared since `since` (gone or not). */
  newLeaders(lws: string, groupIndex: number, old: Set<string>, since: number): number {
    return this.groupPods(lws, groupIndex).filter((p) => p.leader && !old.has(p.uid) && p.seenAt >= since).length;
  }

  /** Every one of these pods is there, Ready and not terminating: the group they make up is Ready. */
  allReadyAmong(uids: string[]): boolean {
    return uids.every((u) => {
      const p = this.pods.get(u);
      return p !== undefined && !p.gone && !p.deleting && p.ready;
    });
  }

  /** Groups at index `from` and above (surge groups of a rolling update) with `size` Ready pods. */
  readyGroupsFrom(lws: string, from: number, size: number): number {
    const ready = new Map<number, number>();
    for (const p of this.pods.values()) {
      if (p.lws === lws && p.groupIndex >= from && !p.gone && !p.deleting && p.ready)
        ready.set(p.groupIndex, (ready.get(p.groupIndex) ?? 0) + 1);
    }
    return [...ready.values()].filter((n) => n >= size).length;
  }

  /** Pods of groups at or above `replicas` not gone yet: surge groups of a rolling update, or a scale-down's. */
  podsFrom(lws: string, replicas: number): number {
    return [...this.pods.values()].filter((p) => p.lws === lws && !p.gone && p.groupIndex >= replicas).length;
  }

  /** Where the provisioning of this LWS's pods first seen after `createdAt` spent its time. */
  provisionPhases(lws: string, createdAt: number): ProvisionPhases | undefined {
    return provisionPhases(
      [...this.pods.values()].filter((p) => p.lws === lws && p.seenAt >= createdAt),
      createdAt,
    );
  }

  /** `replicas` groups of `size` Ready pods each. */
  allReady(lws: string, replicas: number, size: number): boolean {
    const ready = [...this.pods.values()].filter((p) => p.lws === lws && !p.gone && !p.deleting && p.ready);
    return ready.length >= replicas * size;
  }
}
