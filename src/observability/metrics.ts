// Prometheus metrics and the health endpoint of the worker, the trigger and the admission webhook: one small HTTP
// server per process on METRICS_PORT (default 9464, 9465 and 9466, so all fit one host; 0 picks a free port).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import type { KubeConfig } from '@kubernetes/client-node';
import { observeKubeRequests } from '../kube/requests.js';
import { KUBE_RETRY_REASONS } from '../kube/retry-reasons.js';
import type { Logger } from '../log.js';

/**
 * Kubernetes API calls that failed and are made again, by process and reason (KUBE_RETRY_REASONS): a throttled or
 * failing API server slows the controller down, and this says how much it retried meanwhile. Every reason starts at 0,
 * so a scrape tells "no retries" from "not counted".
 */
function retriesCounter(registry: Registry, component: 'worker' | 'trigger'): Counter<'component' | 'reason'> {
  const counter = new Counter({
    name: 'lws_kube_api_retries_total',
    help: 'Kubernetes API calls made again after a failure, by reason: 429, 5xx, network, watch-restart, other',
    labelNames: ['component', 'reason'] as const,
    registers: [registry],
  });
  for (const reason of KUBE_RETRY_REASONS) counter.inc({ component, reason }, 0);
  return counter;
}

/**
 * Requests to the API server, by process, verb, resource and HTTP status (0: no answer), as the API server would
 * count them: what the controller costs the API server per group lifecycle (docs/benchmarks.md).
 */
function requestsCounter(
  registry: Registry,
  component: 'worker' | 'trigger',
): { counter: Counter<'component' | 'verb' | 'resource' | 'code'>; observe(kc: KubeConfig): void } {
  const counter = new Counter({
    name: 'lws_kube_api_requests_total',
    help: 'Requests to the Kubernetes API server, by verb, resource and HTTP status (0: the connection failed)',
    labelNames: ['component', 'verb', 'resource', 'code'] as const,
    registers: [registry],
  });
  return {
    counter,
    observe: (kc) =>
      observeKubeRequests(kc, ({ verb, resource, code }) =>
        counter.inc({ component, verb, resource, code: String(code) }),
      ),
  };
}

/** Seconds: teardowns sit around 1-2 x the grace period, which is 5 s to several minutes for AI workloads. */
const durationBuckets = [0.5, 1, 2, 5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 240, 300, 600];

export class WorkerMetrics {
  readonly registry = new Registry();
  readonly teardown = new Histogram({
    name: 'lws_teardown_duration_seconds',
    help: 'Group teardown: leader terminating until the last old pod is gone',
    labelNames: ['policy', 'lifecycle'] as const,
    buckets: durationBuckets,
    registers: [this.registry],
  });
  readonly recovery = new Histogram({
    name: 'lws_recovery_duration_seconds',
    help: 'Group rebuild: leader terminating until the replacement group is ready',
    labelNames: ['policy', 'lifecycle'] as const,
    buckets: durationBuckets,
    registers: [this.registry],
  });
  readonly activityErrors = new Counter({
    name: 'lws_activity_errors_total',
    help: 'Failed activity attempts, by activity and kind (transient: retried; permanent: non-retryable)',
    labelNames: ['activity', 'kind'] as const,
    registers: [this.registry],
  });
  readonly kubeApiRetries = retriesCounter(this.registry, 'worker');
  /** `observe(kc)` counts each request made with that KubeConfig. */
  readonly kubeApiRequests = requestsCounter(this.registry, 'worker');

  constructor() {
    // Unprefixed, as every Node.js exporter names them: standard dashboards find them. The role is the scrape's job.
    collectDefaultMetrics({ register: this.registry });
  }
}

export class TriggerMetrics {
  readonly registry = new Registry();
  readonly started = new Counter({
    name: 'lws_trigger_workflows_started_total',
    help: 'Workflows the trigger started',
    labelNames: ['workflow'] as const,
    registers: [this.registry],
  });
  readonly deduplicated = new Counter({
    name: 'lws_trigger_workflows_deduplicated_total',
    help: 'Starts the server rejected because that workflow ID already ran (a repeat after a re-list)',
    labelNames: ['workflow'] as const,
    registers: [this.registry],
  });
  readonly signalled = new Counter({
    name: 'lws_trigger_workflows_signalled_total',
    help: 'Signal-with-start calls to reconcile workflows',
    registers: [this.registry],
  });
  readonly reaction = new Histogram({
    name: 'lws_trigger_reaction_seconds',
    help: 'Watch event received until the workflow start was accepted',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly watchRestarts = new Counter({
    name: 'lws_trigger_watch_restarts_total',
    help: 'Watches that ended with an error and were listed again',
    labelNames: ['resource'] as const,
    registers: [this.registry],
  });
  readonly kubeApiRetries = retriesCounter(this.registry, 'trigger');
  /** `observe(kc)` counts each request made with that KubeConfig. */
  readonly kubeApiRequests = requestsCounter(this.registry, 'trigger');

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }
}

/** The admission webhook's: what it answered and how fast, since the API server waits on it for each pod. */
export class AdmissionMetrics {
  readonly registry = new Registry();
  readonly reviews = new Counter({
    name: 'lws_admission_reviews_total',
    help: 'Admission reviews, by webhook (pod, leaderworkerset) and outcome: patched, unchanged, denied, or error (the request was refused; the API server applies the failure policy)',
    labelNames: ['webhook', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: 'lws_admission_review_duration_seconds',
    help: 'Admission review received until answered, by webhook',
    labelNames: ['webhook'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  observe(webhook: 'pod' | 'leaderworkerset', outcome: 'patched' | 'unchanged' | 'denied' | 'error', ms: number): void {
    this.reviews.inc({ webhook, outcome });
    this.duration.observe({ webhook }, ms / 1000);
  }
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/** Each role's default METRICS_PORT: `npm run worker` and `npm run trigger` on one machine must not collide. */
export const defaultMetricsPorts = { worker: 9464, trigger: 9465, admission: 9466 } as const;

/** GET /metrics (Prometheus text) and GET /healthz (200 while `healthy()`, else 503). */
export async function serveMetrics(opts: {
  registry: Registry;
  role: keyof typeof defaultMetricsPorts;
  healthy: () => boolean;
  log: Logger;
  env?: NodeJS.ProcessEnv;
}): Promise<MetricsServer> {
  const raw = (opts.env ?? process.env).METRICS_PORT ?? String(defaultMetricsPorts[opts.role]);
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`METRICS_PORT=${raw}: expected a port from 0 to 65535 (0 picks a free one)`);
  }
  const server: Server = createServer((req, res) => {
    if (req.url === '/healthz') {
      const ok = opts.healthy();
      res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? 'ok\n' : 'not ready\n');
    } else if (req.url === '/metrics') {
      opts.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': opts.registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500).end(String(err)),
      );
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new Error(
              `METRICS_PORT=${port} is in use by another process: set METRICS_PORT to a free port (0 picks one)`,
            )
          : err,
      ),
    );
    server.listen(port, resolve);
  });
  const actual = (server.address() as AddressInfo).port;
  opts.log.info('metrics server listening', { port: actual, paths: '/metrics /healthz' });
  return { port: actual, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
