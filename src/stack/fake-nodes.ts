// KWOK's fake nodes: the local cluster's own, and extra ones a test adds for pods that need what those lack (GPUs,
// TPUs, node-pool labels). Extra nodes are removed only once no pod is left on them: deleting a node takes its pods.
import * as k8s from '@kubernetes/client-node';
import { waitFor } from './processes.js';

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
        type: 'kwok',
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

  async setSchedulable(schedulable: boolean): Promise<void> {
    for (const name of this.names) {
      await this.core.patchNode({ name, body: { spec: { unschedulable: !schedulable } } }, mergePatch);
    }
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
