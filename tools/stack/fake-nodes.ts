// KWOK's fake nodes: the local cluster's own, and extra ones a test adds for pods that need what those lack (GPUs,
// TPUs, node-pool labels), or to kill (a dead node's pods stay Terminating). Extra nodes are removed only once no pod
// is left on them: deleting a node takes its pods.
import * as k8s from '@kubernetes/client-node';
import { waitFor } from '../../src/dev-server/processes.js';

/** The label KWOK manages nodes by (`--manage-nodes-with-label-selector=type=kwok`): without it a node has no kubelet. */
export const KWOK_MANAGED_LABEL = { key: 'type', value: 'kwok' } as const;

/** The cluster's fake nodes hold any number of test pods. */
export const FAKE_NODE_CAPACITY: Record<string, string> = { cpu: '1000', memory: '4Ti', pods: '5000' };

export function fakeNode(
  name: string,
  labels: Record<string, string> = {},
  capacity: Record<string, string> = FAKE_NODE_CAPACITY,
): k8s.V1Node {
  return {
    metadata: {
      name,
      labels: {
        [KWOK_MANAGED_LABEL.key]: KWOK_MANAGED_LABEL.value,
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        ...labels,
      },
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
    },
    status: { capacity, allocatable: capacity },
  };
}

const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
const strategicMergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch);
const isNodeReady = (node: k8s.V1Node) =>
  node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** Fake nodes with capacity and labels of their own, for one test suite. */
export class ExtraFakeNodes {
  private readonly core: k8s.CoreV1Api;

  constructor(
    kc: k8s.KubeConfig,
    readonly nodes: { name: string; labels?: Record<string, string> }[],
    private readonly capacity: Record<string, string>,
  ) {
    this.core = kc.makeApiClient(k8s.CoreV1Api);
  }

  get names(): string[] {
    return this.nodes.map((n) => n.name);
  }

  /** Created, then Ready with the whole capacity: KWOK's node stage writes only cpu, memory and pods. */
  async create(): Promise<void> {
    for (const { name, labels } of this.nodes)
      await this.core.createNode({ body: fakeNode(name, labels, this.capacity) });
    const extended = Object.keys(this.capacity).filter((k) => !(k in FAKE_NODE_CAPACITY));
    await waitFor(
      `${this.nodes.length} extra fake nodes Ready with ${Object.keys(this.capacity).join(', ')}`,
      async () => {
        for (const name of this.names) {
          const node = await this.core.readNode({ name });
          if (!isNodeReady(node)) return undefined;
          if (extended.some((k) => node.status?.allocatable?.[k] !== this.capacity[k])) {
            const body = { status: { capacity: this.capacity, allocatable: this.capacity } };
            await this.core.patchNodeStatus({ name, body }, mergePatch);
            return undefined;
          }
        }
        return true;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
  }

  async setSchedulable(schedulable: boolean, names: string[] = this.names): Promise<void> {
    for (const name of names) {
      await this.core.patchNode({ name, body: { spec: { unschedulable: !schedulable } } }, mergePatch);
    }
  }

  /**
   * The node's kubelet dies, or comes back: KWOK manages only nodes of its label, so without it nothing heartbeats the
   * node or plays its pods' stages, and the pod finisher leaves its terminating pods, as a dead machine leaves them.
   */
  async setKubelet(name: string, running: boolean): Promise<void> {
    const value = running ? KWOK_MANAGED_LABEL.value : `${KWOK_MANAGED_LABEL.value}-stopped`;
    await this.core.patchNode(
      { name, body: { metadata: { labels: { [KWOK_MANAGED_LABEL.key]: value } } } },
      mergePatch,
    );
  }

  /** Added to the node's taints (a merge patch would replace the list, the controllers' own taints with it). */
  async taint(name: string, taint: k8s.V1Taint): Promise<void> {
    const taints = (await this.core.readNode({ name })).spec?.taints ?? [];
    await this.core.patchNode({ name, body: { spec: { taints: [...taints, taint] } } }, mergePatch);
  }

  /** Ready False from now: what a node whose kubelet stopped shows (KWOK sets its own nodes Ready again). */
  async markNotReady(name: string): Promise<void> {
    const now = new Date().toISOString();
    const ready = {
      type: 'Ready',
      status: 'False',
      reason: 'KubeletNotReady',
      message: 'the test stopped the kubelet',
      lastHeartbeatTime: now,
      lastTransitionTime: now,
    };
    await this.core.patchNodeStatus({ name, body: { status: { conditions: [ready] } } }, strategicMergePatch);
  }

  /** Cordoned, then deleted once empty; left cordoned (and said so) if other suites' pods stay on them. */
  async remove(timeoutMs = 120_000): Promise<void> {
    await this.setSchedulable(false).catch(() => undefined);
    const empty = await waitFor(
      `no pod left on ${this.names.join(', ')}`,
      async () => {
        for (const name of this.names) {
          const pods = await this.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${name}` });
          if (pods.items.length > 0) return undefined;
        }
        return true;
      },
      { timeoutMs, intervalMs: 1000 },
    ).catch(() => false);
    if (!empty) {
      console.warn(`[fake-nodes] left cordoned nodes with pods on them: ${this.names.join(', ')}`);
      return;
    }
    for (const name of this.names) await this.core.deleteNode({ name }).catch(() => undefined);
  }
}
