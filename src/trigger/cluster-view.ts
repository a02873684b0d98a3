// What the trigger knows of the cluster: the objects its watches delivered, trimmed to what decisions need. It is
// rebuilt from a list after every restart, so losing it loses nothing.
import {
  ANNOTATION_SIZE,
  applyDefaults,
  isDeleting,
  LABEL_NAME,
  LABEL_WORKER_INDEX,
  leaderStatefulSetReplicas,
  type LeaderWorkerSet,
  type ObjectKey,
  type PodFacts,
  type StatefulSetFacts,
} from '../model/index.js';
import type { SeenWorkers } from '../activities/types.js';
import type { Knowledge } from './decide.js';

const key = (namespace: string, name: string) => `${namespace}/${name}`;
const identity = (o: { namespace: string; name: string; uid: string }) => ({
  namespace: o.namespace,
  name: o.name,
  uid: o.uid,
});

/** Object uids by the uid of their controlling owner, kept in step with the objects: lookups stay O(group size). */
class OwnerIndex {
  private readonly byOwner = new Map<string, Set<string>>();

  update(uid: string, before: string | undefined, after: string | undefined): void {
    if (before === after) return;
    if (before !== undefined) this.remove(uid, before);
    if (after !== undefined) {
      const owned = this.byOwner.get(after) ?? new Set<string>();
      owned.add(uid);
      this.byOwner.set(after, owned);
    }
  }

  remove(uid: string, owner: string | undefined): void {
    const owned = owner === undefined ? undefined : this.byOwner.get(owner);
    owned?.delete(uid);
    if (owned?.size === 0) this.byOwner.delete(owner!);
  }

  of(owner: string): string[] {
    return [...(this.byOwner.get(owner) ?? [])];
  }
}

export class ClusterView implements Knowledge {
  private readonly lwsByKey = new Map<string, LeaderWorkerSet>();
  private readonly pods = new Map<string, PodFacts>();
  private readonly statefulSets = new Map<string, StatefulSetFacts>();
  private readonly podsByOwner = new OwnerIndex();
  private readonly statefulSetsByOwner = new OwnerIndex();
  /** The names of the namespaces being deleted: all that a decision needs of namespaces. */
  private readonly terminatingNamespaces = new Set<string>();

  lws(ref: ObjectKey): LeaderWorkerSet | undefined {
    return this.lwsByKey.get(key(ref.namespace, ref.name));
  }

  allLws(): LeaderWorkerSet[] {
    return [...this.lwsByKey.values()];
  }

  allPods(): PodFacts[] {
    return [...this.pods.values()];
  }

  leaderOfWorker(worker: PodFacts): PodFacts | undefined {
    const sts = worker.ownerUid ? this.statefulSets.get(worker.ownerUid) : undefined;
    return sts?.ownerUid ? this.pods.get(sts.ownerUid) : undefined;
  }

  /** The group of this leader is Ready now: the leader Ready, and every worker of its own StatefulSet ready. */
  groupReady(leaderUid: string): boolean {
    const leader = this.pods.get(leaderUid);
    if (!leader || leader.labels[LABEL_WORKER_INDEX] !== '0' || !leader.ready || isDeleting(leader)) return false;
    const size = this.groupSize(leader);
    if (size === undefined) return false;
    const workers = this.workerStatefulSetOf(leaderUid);
    return size === 1 || (workers !== undefined && workers.readyReplicas >= size - 1);
  }

  /** A group's own size (its leader's size annotation, written from its revision), else its LWS's. */
  private groupSize(leader: PodFacts): number | undefined {
    const lwsName = leader.labels[LABEL_NAME];
    const lws = lwsName ? this.lws({ namespace: leader.namespace, name: lwsName }) : undefined;
    if (!lws) return undefined;
    const annotated = Number(leader.annotations[ANNOTATION_SIZE]);
    return Number.isInteger(annotated) && annotated >= 1
      ? annotated
      : applyDefaults(lws).spec.leaderWorkerTemplate.size;
  }

  /**
   * Upstream's test for RecreateGroupAfterStart: every pod of the group exists (its own size, from the leader's size
   * annotation) and none is Pending. Looked at when a restart is seen, not remembered.
   */
  groupStarted(leaderUid: string): boolean {
    const leader = this.pods.get(leaderUid);
    const size = leader && this.groupSize(leader);
    if (!leader || size === undefined) return false;
    const sts = this.workerStatefulSetOf(leaderUid);
    const workers = sts ? this.podsByOwner.of(sts.uid).flatMap((uid) => this.pods.get(uid) ?? []) : [];
    const pods = [leader, ...workers];
    return pods.length === size && pods.every((p) => p.phase !== 'Pending');
  }

  workersOf(leaderUid: string): SeenWorkers | undefined {
    const sts = this.workerStatefulSetOf(leaderUid);
    // Already being deleted: someone else acts on it; the workflow's checked path says so.
    if (!sts || isDeleting(sts)) return undefined;
    const pods = this.podsByOwner
      .of(sts.uid)
      .map((uid) => this.pods.get(uid))
      .filter((p): p is PodFacts => p !== undefined && !isDeleting(p));
    return { statefulSet: identity(sts), pods: pods.map(identity) };
  }

  private workerStatefulSetOf(leaderUid: string): StatefulSetFacts | undefined {
    const [uid] = this.statefulSetsByOwner.of(leaderUid);
    return uid === undefined ? undefined : this.statefulSets.get(uid);
  }

  leaderReplicas(ref: ObjectKey): number | undefined {
    const lws = this.lws(ref);
    const uid = lws?.metadata.uid;
    if (lws === undefined || uid === undefined) return undefined;
    // The LWS owns its leader StatefulSet (of its own name) and nothing else of that kind.
    return this.statefulSetsByOwner
      .of(uid)
      .map((u) => this.statefulSets.get(u))
      .filter((s) => s?.name === ref.name)
      .map((s) => leaderStatefulSetReplicas(lws, s))
      .find((replicas) => replicas !== undefined);
  }

  namespaceTerminating(namespace: string): boolean {
    return this.terminatingNamespaces.has(namespace);
  }

  /** A namespace as its watch shows it; `terminating` once it has a deletionTimestamp. */
  setNamespace(name: string, terminating: boolean): void {
    if (terminating) this.terminatingNamespaces.add(name);
    else this.terminatingNamespaces.delete(name);
  }

  deleteNamespace(name: string): void {
    this.terminatingNamespaces.delete(name);
  }

  setLws(lws: LeaderWorkerSet): void {
    const { namespace, name } = lws.metadata;
    if (namespace && name) this.lwsByKey.set(key(namespace, name), lws);
  }

  deleteLws(lws: LeaderWorkerSet): void {
    const { namespace, name } = lws.metadata;
    if (namespace && name) this.lwsByKey.delete(key(namespace, name));
  }

  /** Stores the pod; returns its previous facts, so callers can tell what changed. */
  setPod(pod: PodFacts): PodFacts | undefined {
    const before = this.pods.get(pod.uid);
    this.pods.set(pod.uid, pod);
    this.podsByOwner.update(pod.uid, before?.ownerUid, pod.ownerUid);
    return before;
  }

  deletePod(uid: string): PodFacts | undefined {
    const before = this.pods.get(uid);
    this.pods.delete(uid);
    this.podsByOwner.remove(uid, before?.ownerUid);
    return before;
  }

  setStatefulSet(sts: StatefulSetFacts): StatefulSetFacts | undefined {
    const before = this.statefulSets.get(sts.uid);
    this.statefulSets.set(sts.uid, sts);
    this.statefulSetsByOwner.update(sts.uid, before?.ownerUid, sts.ownerUid);
    return before;
  }

  deleteStatefulSet(uid: string): StatefulSetFacts | undefined {
    const before = this.statefulSets.get(uid);
    this.statefulSets.delete(uid);
    this.statefulSetsByOwner.remove(uid, before?.ownerUid);
    return before;
  }
}
