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
  /**
   * Requests it has made to the API server so far (its own client-side counter), by kind: this project's by verb and
   * resource (`list pods`), upstream's by method (its counter has no resource).
   */
  apiRequests(): Promise<Record<string, number>>;
  /** Resident memory of its processes now, MB. */
  residentMb(): Record<string, number>;
  /** Temporal history bytes of the namespace's workflows, by lifecycle (this project only). */
  historyBytes?(namespace: string): Promise<Record<string, { runs: number; bytes: number }>>;
}

/** A counter's samples summed by some of their labels, joined by a space (`get pods`); 0-valued keys omitted. */
export function metricBy(text: string, name: string, labels: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (!Number.isFinite(value) || value === 0) continue;
    const labelText = line.startsWith(`${name}{`) ? line.slice(name.length + 1, line.lastIndexOf('}')) : '';
    const has = Object.fromEntries([...labelText.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const key = labels.map((l) => has[l] ?? '?').join(' ');
    out[key] = (out[key] ?? 0) + value;
  }
  return out;
}

/** b - a, kind by kind (counters only grow; a kind absent from `a` counts from 0). */
export function requestsSince(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [kind, n] of Object.entries(b)) if (n - (a[kind] ?? 0) > 0) out[kind] = n - (a[kind] ?? 0);
  return out;
}

export const totalOf = (byKind: Record<string, number>): number => Object.values(byKind).reduce((sum, n) => sum + n, 0);

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
      const texts = await Promise.all(
        controllers.map(async (c) => (await fetch(`http://127.0.0.1:${metricsPortOf(c.lines)}/metrics`)).text()),
      );
      return metricBy(texts.join('\n'), 'lws_kube_api_requests_total', ['verb', 'resource']);
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
    apiRequests: async () => metricBy(await controller.metrics(), 'rest_client_requests_total', ['method']),
    residentMb: () => ({ [UPSTREAM_PROCESS]: residentMb(controller.pid) }),
  };
}
