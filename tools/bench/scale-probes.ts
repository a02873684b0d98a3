// What a scale scenario reads of the controller that runs it (ScaleProbes): its own count of API requests from its
// Prometheus endpoint, its processes' resident memory, and, for this project, the bytes of its Temporal histories.
import type { Client } from '@temporalio/client';
// A CommonJS package: Node's ESM loader gives it as a default export only.
import protoPackage, { type temporal as proto } from '@temporalio/proto';
import { parseWorkflowId } from '../../src/model/index.js';
import type { ControllerProcess } from '../stack/controller-processes.js';
import type { UpstreamLws } from '../stack/upstream-lws.js';
import { residentMb } from './process-stats.js';
import { UPSTREAM_PROCESS, type WorkflowTaskCounts } from './results.js';

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
  /** How the namespace's workflow tasks ended, by lifecycle, from their histories (this project only). */
  workflowTasks?(namespace: string): Promise<Record<string, WorkflowTaskCounts>>;
}

const { EventType, TimeoutType } = protoPackage.temporal.api.enums.v1;

/** Adds the workflow task endings among `events` (a history, or a page of one) to `into`. */
export function countWorkflowTasks(events: proto.api.history.v1.IHistoryEvent[], into: WorkflowTaskCounts): void {
  for (const e of events) {
    if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) into.completed += 1;
    else if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED) into.failed += 1;
    else if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT) {
      if (e.workflowTaskTimedOutEventAttributes?.timeoutType === TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START)
        into.scheduleToStartTimedOut += 1;
      else into.startToCloseTimedOut += 1;
    }
  }
}

export const noWorkflowTasks = (): WorkflowTaskCounts => ({
  runs: 0,
  completed: 0,
  startToCloseTimedOut: 0,
  scheduleToStartTimedOut: 0,
  failed: 0,
});

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
  /** The cluster's name, first in every workflow ID. */
  clusterName: string,
): ScaleProbes {
  const runsOf = (namespace: string) =>
    temporal.workflow.list({ query: `WorkflowId STARTS_WITH "lws/${clusterName}/${namespace}/"` });
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
      for await (const wf of runsOf(namespace)) {
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
    async workflowTasks(namespace) {
      const runs: { workflowId: string; runId: string }[] = [];
      for await (const wf of runsOf(namespace)) runs.push({ workflowId: wf.workflowId, runId: wf.runId });
      const byKind: Record<string, WorkflowTaskCounts> = {};
      // A few at a time: a thousand histories read one by one would take minutes, all at once would load the server.
      for (let i = 0; i < runs.length; i += 16) {
        await Promise.all(
          runs.slice(i, i + 16).map(async ({ workflowId, runId }) => {
            const kind = parseWorkflowId(workflowId)?.op.kind ?? 'other';
            const counts = (byKind[kind] ??= noWorkflowTasks());
            counts.runs += 1;
            for await (const events of historyPages(temporal, workflowId, runId)) countWorkflowTasks(events, counts);
          }),
        );
      }
      return byKind;
    },
  };
}

/**
 * A history's events, a page at a time: a reconcile of 1,000 groups writes pages past gRPC's 4 MB limit at the
 * server's default page size, which fetchHistory uses (and 200 events of its passes came to 4.8 MB once: the bench's
 * connection takes 64 MB).
 */
async function* historyPages(temporal: Client, workflowId: string, runId: string) {
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await temporal.workflowService.getWorkflowExecutionHistory({
      namespace: temporal.options.namespace,
      execution: { workflowId, runId },
      maximumPageSize: 200,
      ...(nextPageToken && { nextPageToken }),
    });
    yield page.history?.events ?? [];
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
}

export function upstreamProbes(controller: UpstreamLws): ScaleProbes {
  return {
    apiRequests: async () => metricBy(await controller.metrics(), 'rest_client_requests_total', ['method']),
    residentMb: () => ({ [UPSTREAM_PROCESS]: residentMb(controller.pid) }),
  };
}
