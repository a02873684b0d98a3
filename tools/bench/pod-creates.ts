// How fast the API server took pod creates while a provisioning ran: their count, their mean latency as the API
// server measured it (its mutating webhooks included), and the webhooks' time per create, from the differences of
// its /metrics counters. The StatefulSet controller creates a set's pods in batches, each waiting for its slowest
// create, so this latency paces both the leaders and each group's workers.
import { metricBy, requestsSince } from './scale-probes.js';

export interface PodCreates {
  count: number;
  meanMs: number;
  /** The admission webhooks' time on CREATEs in the window, over the pod creates (an LWS's own create is one more). */
  webhookMsPerCreate: number;
}

const REQUEST = 'apiserver_request_duration_seconds';
const WEBHOOK = 'apiserver_admission_webhook_admission_duration_seconds';

/** From two scrapes of the API server's /metrics; undefined when no pod was created between them. */
export function podCreatesBetween(before: string, after: string): PodCreates | undefined {
  const since = (name: string, labels: string[]) =>
    requestsSince(metricBy(before, name, labels), metricBy(after, name, labels));
  const creates = since(`${REQUEST}_count`, ['verb', 'resource', 'subresource'])['POST pods '] ?? 0;
  if (creates === 0) return undefined;
  const seconds = since(`${REQUEST}_sum`, ['verb', 'resource', 'subresource'])['POST pods '] ?? 0;
  const webhookSeconds = since(`${WEBHOOK}_sum`, ['operation']).CREATE ?? 0;
  return { count: creates, meanMs: ms(seconds / creates), webhookMsPerCreate: ms(webhookSeconds / creates) };
}

const ms = (seconds: number) => Math.round(seconds * 10_000) / 10;

/** `40 x 12 ms (webhooks 5 ms)`: how many pods were created, their mean, and the webhooks' share of it. */
export function formatPodCreates(creates: PodCreates | undefined): string {
  return creates ? `${creates.count} x ${creates.meanMs} ms (webhooks ${creates.webhookMsPerCreate} ms)` : '-';
}
