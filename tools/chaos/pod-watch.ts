// Every pod of the campaign's namespace through a watch: when each was first seen, seen terminating and gone. The
// invariants compare these times (a Sequential worker must not terminate before its leader is gone).
import * as k8s from '@kubernetes/client-node';
import { watchResource, type RunningWatch } from '../../src/kube/informer.js';
import type { Logger } from '../../src/log.js';
import { controllerUid, LABEL_NAME, parsePodName } from '../../src/model/index.js';
import type { PodHistory } from './invariants.js';

export class PodWatch {
  private readonly byUid = new Map<string, PodHistory & { lws: string }>();
  private watch?: RunningWatch;

  constructor(
    private readonly kc: k8s.KubeConfig,
    private readonly namespace: string,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    const core = this.kc.makeApiClient(k8s.CoreV1Api);
    this.watch = watchResource<k8s.V1Pod>({
      kc: this.kc,
      log: this.log,
      what: `pods of ${this.namespace}`,
      path: `/api/v1/namespaces/${this.namespace}/pods`,
      labelSelector: LABEL_NAME,
      list: () => core.listNamespacedPod({ namespace: this.namespace, labelSelector: LABEL_NAME }),
      handlers: { upsert: (pod) => this.seen(pod, false), remove: (pod) => this.seen(pod, true) },
    });
    await this.watch.synced;
  }

  private seen(pod: k8s.V1Pod, gone: boolean): void {
    const m = pod.metadata;
    const lws = m?.labels?.[LABEL_NAME];
    const parsed = lws && m?.name ? parsePodName(lws, m.name) : undefined;
    if (!m?.uid || !lws || !parsed) return;
    const now = Date.now();
    let h = this.byUid.get(m.uid);
    if (!h) {
      const owner = controllerUid(m);
      h = {
        lws,
        name: m.name!,
        uid: m.uid,
        groupIndex: parsed.groupIndex,
        leader: parsed.workerIndex === 0,
        seenAt: now,
        ...(owner !== undefined && { ownerUid: owner }),
        ...(m.managedFields?.[0]?.manager !== undefined && { createdBy: m.managedFields[0].manager }),
      };
      this.byUid.set(m.uid, h);
    }
    if (m.deletionTimestamp) h.terminatingAt ??= now;
    if (gone) {
      h.terminatingAt ??= now;
      h.goneAt ??= now;
    }
  }

  /** The histories of one LWS's pods. */
  of(lws: string): PodHistory[] {
    return [...this.byUid.values()].filter((h) => h.lws === lws).map(({ lws: _lws, ...h }) => h);
  }

  async stop(): Promise<void> {
    await this.watch?.stop();
  }
}
