// The last step of a kubelet for KWOK's fake nodes: once a terminating pod's grace period is over, delete it for
// good (grace period 0) with its UID as a precondition, as the kubelet does.
//
// Why not KWOK's own delete stage: it deletes by name, and it sometimes plays the stage twice for one pod. The late
// second delete then hit the replacement pod a StatefulSet had just created under the same name, so a fresh worker
// pod vanished, the restart policy saw a deleted worker, and the new group was recreated again and again.
//
// A dead node has no kubelet: the pods of a node that is gone, or that KWOK no longer manages (a test took its label),
// are left Terminating, as a real cluster leaves them (docs/operations.md, "Dead nodes"). They are finished once their
// node has a kubelet again.
import * as k8s from '@kubernetes/client-node';
import { podsJson, type JsonResource } from '../../src/kube/kube-json.js';
import type { Logger } from '../../src/log.js';
import { watchResource, type RunningWatch } from '../../src/kube/informer.js';
import { KWOK_MANAGED_LABEL } from './fake-nodes.js';

interface Pending {
  timer: NodeJS.Timeout;
  dueAt: number;
}

type Target = { namespace: string; name: string; uid: string };

export class PodFinisher {
  private readonly pending = new Map<string, Pending>();
  /** Pods past their grace period whose node has no kubelet, by uid, with that node. */
  private readonly parked = new Map<string, { pod: Target; node: string }>();
  /** Node name -> whether KWOK manages it (a kubelet answers); a node not here is gone. */
  private readonly nodes = new Map<string, boolean>();
  private nodeWatch?: RunningWatch;
  private watch?: RunningWatch;
  private readonly core: k8s.CoreV1Api;
  /**
   * The final deletes as streams on a shared HTTP/2 connection, as a kubelet sends them. Over HTTP/1.1 a burst of
   * grace periods ending together (150 pods in the 50-group benchmark) opened a TLS connection per concurrent delete.
   */
  private readonly pods: JsonResource<k8s.V1Pod>;

  constructor(
    private readonly kc: k8s.KubeConfig,
    private readonly log: Logger,
  ) {
    this.core = kc.makeApiClient(k8s.CoreV1Api);
    this.pods = podsJson(kc);
  }

  async start(): Promise<void> {
    // The nodes first: a pod's node is looked up in memory when its grace period ends, never read per pod.
    this.nodeWatch = watchResource<k8s.V1Node>({
      kc: this.kc,
      log: this.log,
      what: 'nodes',
      path: '/api/v1/nodes',
      list: () => this.core.listNode(),
      trim: (node) => {
        delete node.status;
        delete node.spec;
        delete node.metadata?.managedFields;
      },
      handlers: { upsert: (node) => this.onNode(node), remove: (node) => this.nodes.delete(node.metadata?.name ?? '') },
    });
    await this.nodeWatch.synced;
    this.watch = watchResource<k8s.V1Pod>({
      kc: this.kc,
      log: this.log,
      what: 'pods',
      path: '/api/v1/pods',
      list: () => this.core.listPodForAllNamespaces(),
      handlers: { upsert: (pod) => this.onPod(pod), remove: (pod) => this.forget(pod.metadata?.uid) },
    });
    await this.watch.synced;
  }

  async stop(): Promise<void> {
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
    this.parked.clear();
    await Promise.all([this.watch?.stop(), this.nodeWatch?.stop()]);
  }

  private onNode(node: k8s.V1Node): void {
    const name = node.metadata?.name;
    if (!name) return;
    const managed = node.metadata?.labels?.[KWOK_MANAGED_LABEL.key] === KWOK_MANAGED_LABEL.value;
    this.nodes.set(name, managed);
    if (!managed) return;
    // Its kubelet is back: it finishes what it left.
    for (const [uid, p] of this.parked) {
      if (p.node !== name) continue;
      this.parked.delete(uid);
      void this.removeNow(p.pod);
    }
  }

  /** The grace period is over: the pod's kubelet removes it, if its node has one. */
  private due(pod: Target, node: string): void {
    if (this.nodes.get(node) === true) {
      void this.removeNow(pod);
      return;
    }
    this.pending.delete(pod.uid);
    this.parked.set(pod.uid, { pod, node });
    this.log.debug('pod left terminating: its node has no kubelet', { ...pod, node });
  }

  private onPod(pod: k8s.V1Pod): void {
    const m = pod.metadata;
    // Unscheduled pods are removed by the API server itself; pods with no deletion are not ours to touch.
    const node = pod.spec?.nodeName;
    if (!m?.uid || !m.name || !m.namespace || !m.deletionTimestamp || !node || this.parked.has(m.uid)) return;
    // Counted from when the deletion is seen: deletionTimestamp has whole seconds, which would end pods up to 1 s
    // early. A later delete may shorten the grace period, never lengthen it.
    const dueAt = Date.now() + (m.deletionGracePeriodSeconds ?? 0) * 1000;
    const existing = this.pending.get(m.uid);
    if (existing && existing.dueAt <= dueAt) return;
    if (existing) clearTimeout(existing.timer);
    const target = { namespace: m.namespace, name: m.name, uid: m.uid };
    const timer = setTimeout(() => this.due(target, node), Math.max(0, dueAt - Date.now()));
    this.pending.set(m.uid, { timer, dueAt });
  }

  private forget(uid: string | undefined): void {
    if (!uid) return;
    this.parked.delete(uid);
    const p = this.pending.get(uid);
    if (!p) return;
    clearTimeout(p.timer);
    this.pending.delete(uid);
  }

  /** The final delete of one pod incarnation; a pod that now has another UID under that name is left alone. */
  async removeNow(pod: { namespace: string; name: string; uid: string }): Promise<void> {
    try {
      const sentAt = Date.now();
      const p = this.pending.get(pod.uid);
      await this.pods.delete(pod, { gracePeriodSeconds: 0, preconditions: { uid: pod.uid } });
      // How late the timer fired and how long the API server took: the finisher's share above the grace period.
      this.log.debug('pod removed after its grace period', {
        ...pod,
        timerLateMs: p ? sentAt - p.dueAt : undefined,
        deleteMs: Date.now() - sentAt,
      });
      this.pending.delete(pod.uid);
    } catch (err) {
      const code = (err as { code?: number }).code;
      // 404: already gone. 409: the name now belongs to another pod (the precondition did its job).
      if (code === 404 || code === 409) {
        this.pending.delete(pod.uid);
        return;
      }
      this.log.warn('could not remove a terminating pod; retrying in 1 s', { ...pod, error: String(err) });
      const timer = setTimeout(() => void this.removeNow(pod), 1000);
      this.pending.set(pod.uid, { timer, dueAt: Date.now() + 1000 });
    }
  }
}
