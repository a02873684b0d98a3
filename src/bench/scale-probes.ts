// What a scale scenario reads of the controller that runs it (ScaleProbes): its own count of API requests from its
// Prometheus endpoint, its processes' resident memory, and, for this project, the bytes of its Temporal histories.
import type { Client } from '@temporalio/client';
import { parseWorkflowId } from '../model/index.js';
import type { ControllerProcess } from '../stack/controller-processes.js';
import type { UpstreamLws } from '../stack/upstream-lws.js';
import { residentMb } from './process-stats.js';
import { UPSTREAM_PROCESS } from './results.js';

/** How a scale scenario reads the controller that runs it. */
export interface ScaleProbes {
  /** Requests it has made to the API server so far (its own client-side counter). */
  apiRequests(): Promise<number>;
  /** Resident memory of its processes now, MB. */
  residentMb(): Record<string, number>;
  /** Temporal history bytes of the namespace's workflows, by lifecycle (this project only). */
  historyBytes?(namespace: string): Promise<Record<string, { runs: number; bytes: number }>>;
}

/** The sum of every sample of a counter in Prometheus text (all label sets); 0 when it has none. */
export function sumMetric(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) sum += value;
  }
  return sum;
}

/** The port a process logged for its metrics server (METRICS_PORT=0 picks a free one). */
export function metricsPortOf(lines: string[]): number {
  for (const line of lines) {
    if (!line.includes('metrics server listening')) continue;
    const port = /"port":(\d+)|port=(\d+)/.exec(line);
    if (port) return Number(port[1] ?? port[2]);
  }
  throw new Error('the process did not log its metrics port ("metrics server listening")');
}

export function controllerProbes(
  controllers: ControllerProcess[],
  temporal: Client,
  name: (c: ControllerProcess) => string,
): ScaleProbes {
  return {
    async apiRequests() {
      let sum = 0;
      for (const c of controllers) {
        const res = await fetch(`http://127.0.0.1:${metricsPortOf(c.lines)}/metrics`);
        sum += sumMetric(await res.text(), 'lws_kube_api_requests_total');
      }
      return sum;
    },
    residentMb: () => Object.fromEntries(controllers.map((c) => [name(c), residentMb(c.child.pid!)])),
    async historyBytes(namespace) {
      const byKind: Record<string, { runs: number; bytes: number }> = {};
      for await (const wf of temporal.workflow.list({ query: `WorkflowId STARTS_WITH "lws/${namespace}/"` })) {
        // Visibility records a history's size when the run closes: a running one's (the reconcile) is described.
        const size =
          wf.status.name === 'RUNNING'
            ? (await temporal.workflow.getHandle(wf.workflowId, wf.runId).describe()).historySize
            : wf.historySize;
        if (!size) continue;
        const kind = parseWorkflowId(wf.workflowId)?.op.kind ?? 'other';
        const row = (byKind[kind] ??= { runs: 0, bytes: 0 });
        row.runs += 1;
        row.bytes += size;
      }
      return byKind;
    },
  };
}

export function upstreamProbes(controller: UpstreamLws): ScaleProbes {
  return {
    apiRequests: async () => sumMetric(await controller.metrics(), 'rest_client_requests_total'),
    residentMb: () => ({ [UPSTREAM_PROCESS]: residentMb(controller.pid) }),
  };
}
