// `npm run api-chaos`: the controller under API faults. The worker and the trigger talk to the API server through the
// fault proxy (api-proxy.ts); for each fault kind, trials provision an LWS, run a lifecycle (rebuild, scale-down,
// rolling update, LWS deletion) under either policy with the fault active until the LWS settles (429s, 5xx, reset
// connections, cut watches, slow answers), or restart the API server or etcd mid-lifecycle, then check the same
// invariants as `npm run chaos` (invariants.ts). Each trial also counts the faults injected and the retries the
// controller's metrics (lws_kube_api_retries_total) counted meanwhile.
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { trialFigures } from './report.js';
import { createLogger, formatDuration } from '../../src/log.js';
import type { PodTerminationPolicy } from '../../src/model/index.js';
import {
  clusterCommands,
  localKubeConfig,
  readClusterState,
  restartComponent,
  reviveExited,
  startCluster,
  type RestartableComponent,
} from '../stack/cluster.js';
import type { ControllerProcess } from '../stack/controller-processes.js';
import { installCrd } from '../stack/crd.js';
import { stateDir } from '../stack/paths.js';
import { isAlive } from '../../src/dev-server/processes.js';
import type { TemporalTarget } from '../stack/temporal-target.js';
import { PROXY_FAULT_KINDS, type FaultRule, type ProxyFaultKind } from './api-faults.js';
import { ApiProxy } from './api-proxy.js';
import { Kube, PARALLEL_BOUND_MS, runLifecycle, Stack, type LwsShape, type TrialFault } from './campaign.js';
import type { FaultWindow, PodHistory } from './invariants.js';
import { CHAOS_LIFECYCLES, type ChaosLifecycle } from './plan.js';
import { PodWatch } from './pod-watch.js';
import { SeededRandom } from './random.js';
import { startChaosTemporal } from './temporal-faults.js';

export const API_FAULT_KINDS = [...PROXY_FAULT_KINDS, 'apiserver-restart', 'etcd-restart'] as const;
export type ApiFaultKind = (typeof API_FAULT_KINDS)[number];
const RESTARTS: Record<'apiserver-restart' | 'etcd-restart', RestartableComponent> = {
  'apiserver-restart': 'kube-apiserver',
  'etcd-restart': 'etcd',
};

/** What the proxy does to the controller's requests during a lifecycle, per fault kind. */
export const FAULT_RULES: Record<ProxyFaultKind, FaultRule[]> = {
  // API priority and fairness under load: a share of every kind of request turned away, to come back in a second.
  '429': [{ kind: '429', fraction: 0.3, retryAfterSeconds: 1 }],
  '5xx': [{ kind: '5xx', fraction: 0.2, statuses: [500, 503] }],
  // With HTTP/2 a reset takes every stream of the connection with it (the worker's waits too): a smaller share.
  reset: [{ kind: 'reset', fraction: 0.05 }],
  'watch-cut': [{ kind: 'watch-cut', fraction: 0.5, cutAfterMs: [200, 3000] }],
  slow: [{ kind: 'slow', fraction: 1, latencyMs: [100, 500] }],
};

/**
 * The Parallel bound (PARALLEL_BOUND_MS, 3 s from the leader terminating to its workers terminating) assumes an API
 * server that answers. Relaxed here, only by what the fault itself costs by design:
 * - slow: every call waits up to the added latency, and from the leader terminating to its workers terminating the
 *   worker makes up to SEQUENTIAL_TEARDOWN_CALLS calls one after the other (read and delete of the worker StatefulSet,
 *   list and delete of its pods), so the bound grows by that many times the longest added latency.
 * - 5xx, reset: a failed call is retried after the activity retry policy's backoff (200 ms, doubling); the bound
 *   grows by RETRY_BUDGET_MS, four failures in a row on the teardown's path.
 * - 429: retried after the Retry-After the proxy sends, as the API server asks; four in a row on that path.
 * - restarts of the API server or etcd: checkTrial already starts the bound once the API server serves again; the
 *   watches and the activities then come back after their backoff, which doubles while the server is away, so it is at
 *   most about as long as the outage was: the bound grows by the outage.
 * - watch-cut: a cut watch is opened again at once and its events are not lost (it resumes from its resourceVersion):
 *   no relaxation.
 */
export const SEQUENTIAL_TEARDOWN_CALLS = 4;
export const RETRIES_BUDGETED = 4;
export const RETRY_BUDGET_MS = 200 + 400 + 800 + 1600;

export function parallelBoundMs(fault: ApiFaultKind, window: FaultWindow): number {
  switch (fault) {
    case 'slow':
      return PARALLEL_BOUND_MS + SEQUENTIAL_TEARDOWN_CALLS * Math.max(...FAULT_RULES.slow.map((r) => r.latencyMs![1]));
    case '429':
      return (
        PARALLEL_BOUND_MS + RETRIES_BUDGETED * Math.max(...FAULT_RULES['429'].map((r) => r.retryAfterSeconds! * 1000))
      );
    case '5xx':
    case 'reset':
      return PARALLEL_BOUND_MS + RETRY_BUDGET_MS;
    case 'apiserver-restart':
    case 'etcd-restart':
      return PARALLEL_BOUND_MS + (window.recoveredAt - window.at);
    case 'watch-cut':
      return PARALLEL_BOUND_MS;
  }
}

export interface ApiTrialPlan {
  index: number;
  fault: ApiFaultKind;
  lifecycle: ChaosLifecycle;
  policy: PodTerminationPolicy;
  /** The group a rebuild breaks. */
  groupIndex: number;
  /** Restarts: after the lifecycle's first call. */
  faultDelayMs: number;
  /** Restarts: between the kill and the start. */
  downMs: number;
}

export interface ApiPlanOptions {
  seed: number;
  trialsPerFault: number;
  faults: readonly ApiFaultKind[];
  replicas: number;
  graceSeconds: number;
}

const POLICIES: PodTerminationPolicy[] = ['Sequential', 'Parallel'];

/**
 * Trial t of fault kind f: lifecycle (f + t div 2) mod 4 of a seeded order, policy (f + f div 4 + t) mod 2. Every 8
 * trials of a kind cover each lifecycle under both policies, every 2 both policies; with one trial per kind, the 7
 * kinds make 7 different pairs. Restarts strike at a seeded instant, half of them in the first 300 ms (as plan.ts).
 */
export function planApiTrials(opts: ApiPlanOptions): ApiTrialPlan[] {
  const random = new SeededRandom(opts.seed);
  const lifecycles = random.shuffle(CHAOS_LIFECYCLES);
  const plans: ApiTrialPlan[] = [];
  opts.faults.forEach((fault, f) => {
    for (let t = 0; t < opts.trialsPerFault; t++) {
      const early = random.next() < 0.5;
      plans.push({
        index: plans.length,
        fault,
        lifecycle: lifecycles[(f + Math.floor(t / 2)) % lifecycles.length]!,
        policy: POLICIES[(f + Math.floor(f / lifecycles.length) + t) % 2]!,
        groupIndex: random.int(0, opts.replicas - 1),
        faultDelayMs: early ? random.int(0, 300) : random.int(300, opts.graceSeconds * 1000),
        downMs: random.int(500, 3000),
      });
    }
  });
  return plans;
}

/** Retries by `component/reason` (lws_kube_api_retries_total). */
export type RetryCounts = Record<string, number>;

/** The port a controller process logged its metrics server on (it starts with METRICS_PORT=0). */
export function metricsPort(lines: readonly string[]): number | undefined {
  for (const line of lines) {
    if (!line.includes('metrics server listening')) continue;
    const port = /"?port"?[=:]\s*(\d+)/.exec(line)?.[1];
    if (port) return Number(port);
  }
  return undefined;
}

/** lws_kube_api_retries_total from a Prometheus text exposition. */
export function parseRetries(text: string): RetryCounts {
  const out: RetryCounts = {};
  for (const line of text.split('\n')) {
    const m = /^lws_kube_api_retries_total\{([^}]*)\}\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    out[`${labels.component}/${labels.reason}`] = Number(m[2]);
  }
  return out;
}

/** after - before; a counter that went down belongs to a restarted process and counts from 0. */
export function retriesBetween(before: RetryCounts, after: RetryCounts): RetryCounts {
  const out: RetryCounts = {};
  for (const [key, value] of Object.entries(after)) {
    const delta = value >= (before[key] ?? 0) ? value - (before[key] ?? 0) : value;
    if (delta > 0) out[key] = delta;
  }
  return out;
}

function getText(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, timeout: 5000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve(text));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET 127.0.0.1:${port}${path}: timeout`)));
    req.on('error', reject);
    req.end();
  });
}

/** Both processes' retry counters; a process that cannot be read (restarting) contributes nothing. */
async function scrapeRetries(processes: ControllerProcess[]): Promise<RetryCounts> {
  const all: RetryCounts = {};
  for (const p of processes) {
    const port = metricsPort(p.lines);
    if (port === undefined) continue;
    const text = await getText(port, '/metrics').catch(() => '');
    Object.assign(all, parseRetries(text));
  }
  return all;
}

export interface ApiCampaignOptions extends LwsShape {
  seed: number;
  trialsPerFault: number;
  faults: readonly ApiFaultKind[];
  temporal: TemporalTarget;
  progress: (line: string) => void;
}

export interface ApiTrialResult {
  plan: ApiTrialPlan;
  settleMs?: number;
  parallelLagMs?: number;
  parallelKept?: { kept: number; of: number };
  /** Restarts: kill until the API server was ready again. */
  outageMs?: number;
  /** Faults the proxy injected while the lifecycle ran (none for restarts: the proxy injects nothing then). */
  injected?: number;
  retries: RetryCounts;
  /** Cluster processes that exited during the trial and were started again (as a kubelet would). */
  revived?: string[];
  violations: string[];
  /** A failed trial's record, in ms from the lifecycle's first call: the fault's window and every pod's history. */
  evidence?: { fault?: { at: number; recoveredAt: number }; pods: PodHistory[] };
}

export interface ApiCampaignResult extends LwsShape {
  seed: number;
  trialsPerFault: number;
  temporal: TemporalTarget;
  date: string;
  durationMs: number;
  trials: ApiTrialResult[];
}

/** The trial's fault: the proxy's rules from the lifecycle's start until it settled, or one restart. */
function faultOf(plan: ApiTrialPlan, proxy: ApiProxy): TrialFault {
  if (plan.fault === 'apiserver-restart' || plan.fault === 'etcd-restart') {
    const component = RESTARTS[plan.fault];
    return {
      strike: async (startedAt) => {
        await new Promise((r) => setTimeout(r, Math.max(0, startedAt + plan.faultDelayMs - Date.now())));
        const { killedAt, readyAt } = await restartComponent(component, {
          downMs: plan.downMs,
          // The controller's connections end with the API server, as they would without the proxy in between.
          onKilled: () => (component === 'kube-apiserver' ? proxy.dropConnections() : undefined),
        });
        return { at: killedAt, recoveredAt: readyAt };
      },
    };
  }
  const rules = FAULT_RULES[plan.fault];
  return {
    strike: async () => {
      proxy.setFaults(rules);
      // The controller keeps serving throughout: no outage for checkTrial to start the bound after.
      const now = Date.now();
      return { at: now, recoveredAt: now };
    },
    lift: async () => proxy.clearFaults(),
  };
}

/**
 * The campaign's stand-in for the kubelet of a control plane: every second, a cluster process that exited is started
 * again with the command it ran (kube-scheduler exits by design when its cache turns out corrupted, which an API server
 * restart can cause, and relies on being restarted). What it started is reported with the trial, not hidden.
 */
class ClusterSupervisor {
  private revived: string[] = [];
  private running = true;
  private loop?: Promise<void>;

  start(commands: Awaited<ReturnType<typeof clusterCommands>>, log: ReturnType<typeof createLogger>): void {
    this.loop = (async () => {
      while (this.running) {
        await new Promise((r) => setTimeout(r, 1000));
        const state = await readClusterState();
        const exited = Object.keys(commands).filter((n) => {
          const pid = state?.pids[n as keyof typeof state.pids];
          return pid === undefined || !isAlive(pid);
        });
        // A restart under way holds the cluster's lock: reviveExited waits for it and then finds nothing to do.
        if (exited.length === 0 || !this.running) continue;
        const revived = await reviveExited(commands).catch((err: unknown) => {
          log.warn('could not start an exited cluster process again', { error: String(err) });
          return [];
        });
        if (revived.length) log.warn('cluster processes had exited; started again', { revived: revived.join(', ') });
        this.revived.push(...revived);
      }
    })();
  }

  /** What it started again since the last call. */
  take(): string[] {
    const out = this.revived;
    this.revived = [];
    return out;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

async function runApiTrial(
  plan: ApiTrialPlan,
  opts: ApiCampaignOptions,
  kube: Kube,
  stack: Stack,
  pods: PodWatch,
  proxy: ApiProxy,
  supervisor: ClusterSupervisor,
): Promise<ApiTrialResult> {
  const fault = faultOf(plan, proxy);
  supervisor.take();
  let startedAt = 0;
  const injectedBefore = Object.values(proxy.injected).reduce((a, b) => a + b, 0);
  let retriesBefore: RetryCounts = {};
  let retries: RetryCounts = {};
  let injected: number | undefined;
  // Counted from the strike to the lift: the lifecycle's retries, not the provisioning's or the cleanup's.
  const counted: TrialFault = {
    strike: async (at) => {
      startedAt = at;
      retriesBefore = await scrapeRetries([stack.worker, stack.trigger]);
      return fault.strike(at);
    },
    lift: async () => {
      await fault.lift?.();
      injected = Object.values(proxy.injected).reduce((a, b) => a + b, 0) - injectedBefore;
      retries = retriesBetween(retriesBefore, await scrapeRetries([stack.worker, stack.trigger]));
    },
  };
  const name = `api-${plan.index}`;
  const {
    fault: window,
    violations,
    ...figures
  } = await runLifecycle({ ...plan, name }, opts, kube, pods, counted, {
    boundMs: (w) => parallelBoundMs(plan.fault, w),
    crashed: () => stack.crashed(),
  });
  const restart = plan.fault === 'apiserver-restart' || plan.fault === 'etcd-restart';
  const revived = supervisor.take();
  const since = (t: number | undefined) => (t === undefined ? undefined : t - startedAt);
  return {
    plan,
    ...figures,
    ...(restart && window ? { outageMs: window.recoveredAt - window.at } : {}),
    ...(restart ? {} : { injected: injected ?? 0 }),
    retries,
    ...(revived.length ? { revived } : {}),
    violations,
    ...(violations.length
      ? {
          evidence: {
            ...(window ? { fault: { at: window.at - startedAt, recoveredAt: window.recoveredAt - startedAt } } : {}),
            pods: pods.of(name).map((p) => ({
              ...p,
              seenAt: p.seenAt - startedAt,
              ...(p.terminatingAt === undefined ? {} : { terminatingAt: since(p.terminatingAt) }),
              ...(p.goneAt === undefined ? {} : { goneAt: since(p.goneAt) }),
            })),
          },
        }
      : {}),
  };
}

export async function runApiCampaign(opts: ApiCampaignOptions): Promise<ApiCampaignResult> {
  const started = Date.now();
  const log = createLogger('api-chaos');
  await startCluster({ log: createLogger('cluster') });
  const kc = localKubeConfig();
  await installCrd(kc);
  opts.progress(`starting Temporal (${opts.temporal}) and the API proxy`);
  const temporal = await startChaosTemporal(opts.temporal, createLogger('temporal'));
  const proxy = await ApiProxy.start({ upstream: kc, seed: opts.seed, log: createLogger('api-proxy') });
  const proxyKubeconfig = join(stateDir, `api-proxy-${process.pid}.kubeconfig`);
  await proxy.writeKubeconfig(proxyKubeconfig);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KUBECONFIG: proxyKubeconfig,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    TEMPORAL_TASK_QUEUE: `lws-api-chaos-${randomBytes(3).toString('hex')}`,
  };
  const stack = new Stack(temporal, env, join(stateDir, 'api-chaos-logs'));
  const supervisor = new ClusterSupervisor();
  const commands = await clusterCommands();
  supervisor.start(commands, log);
  const namespace = `api-chaos-${randomBytes(3).toString('hex')}`;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  let watch: PodWatch | undefined;
  try {
    await Promise.all([stack.start('worker'), stack.start('trigger')]);
    await core.createNamespace({ body: { metadata: { name: namespace, labels: { 'lws-temporal/chaos': 'true' } } } });
    watch = new PodWatch(kc, namespace, log);
    await watch.start();
    const kube = new Kube(kc, namespace);
    const plans = planApiTrials(opts);
    const trials: ApiTrialResult[] = [];
    for (const plan of plans) {
      const restart = plan.fault.endsWith('-restart');
      opts.progress(
        `[${plan.index + 1}/${plans.length}] api-${plan.index}: ${plan.lifecycle} (${plan.policy}) under ${plan.fault}` +
          (restart ? ` at +${plan.faultDelayMs} ms, down ${plan.downMs} ms` : '') +
          ` (elapsed ${formatDuration(Date.now() - started)})`,
      );
      const result = await runApiTrial(plan, opts, kube, stack, watch, proxy, supervisor);
      trials.push(result);
      const retries = Object.values(result.retries).reduce((a, b) => a + b, 0);
      if (result.revived) opts.progress(`  cluster processes that exited, started again: ${result.revived.join(', ')}`);
      opts.progress(
        result.violations.length
          ? `  FAILED: ${result.violations.join('; ')}`
          : `  ok: settled in ${formatDuration(result.settleMs ?? 0)}, ${result.injected ?? 0} faults injected, ${retries} retries counted` +
              (result.parallelLagMs === undefined ? '' : `, Parallel lag ${result.parallelLagMs} ms`),
      );
    }
    return {
      seed: opts.seed,
      trialsPerFault: opts.trialsPerFault,
      temporal: opts.temporal,
      graceSeconds: opts.graceSeconds,
      replicas: opts.replicas,
      size: opts.size,
      date: new Date().toISOString(),
      durationMs: Date.now() - started,
      trials,
    };
  } finally {
    await supervisor.stop();
    // The cluster outlives the campaign (other suites use it): whatever exited by now starts again once more.
    const revived = await reviveExited(commands).catch(() => []);
    if (revived.length) log.warn('cluster processes had exited; started again', { revived: revived.join(', ') });
    proxy.clearFaults();
    await watch?.stop();
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
    await stack.stop();
    await temporal.stop();
    await proxy.close();
    await rm(proxyKubeconfig, { force: true });
  }
}

export interface ApiFaultRow {
  fault: ApiFaultKind;
  trials: number;
  failed: number;
  settle: string;
  parallelLag: string;
  outage: string;
  injected: string;
  /** Per process, by reason: "429 12, watch-restart 3". */
  workerRetries: string;
  triggerRetries: string;
}

function retriesOf(trials: ApiTrialResult[], component: string): string {
  const sums = new Map<string, number>();
  for (const t of trials) {
    for (const [key, n] of Object.entries(t.retries)) {
      const [c, reason] = key.split('/');
      if (c === component) sums.set(reason!, (sums.get(reason!) ?? 0) + n);
    }
  }
  return [...sums].map(([reason, n]) => `${reason} ${n}`).join(', ') || '0';
}

export function apiFaultRows(trials: ApiTrialResult[]): ApiFaultRow[] {
  return API_FAULT_KINDS.map((fault) => {
    const of = trials.filter((t) => t.plan.fault === fault);
    return {
      fault,
      ...trialFigures(of),
      injected: of.some((t) => t.injected !== undefined) ? String(of.reduce((a, t) => a + (t.injected ?? 0), 0)) : '-',
      workerRetries: retriesOf(of, 'worker'),
      triggerRetries: retriesOf(of, 'trigger'),
    };
  }).filter((r) => r.trials > 0);
}

export function apiCampaignMarkdown(result: ApiCampaignResult): string {
  const faults = [...new Set(result.trials.map((t) => t.plan.fault))].join(',');
  const lines = [
    `\`npm run api-chaos -- --seed ${result.seed} --trials-per-fault ${result.trialsPerFault} --faults ${faults}` +
      ` --temporal ${result.temporal} --grace ${result.graceSeconds}\` on ${result.date.slice(0, 10)}:` +
      ` ${result.replicas} groups of ${result.size}, G = ${result.graceSeconds} s, ${formatDuration(result.durationMs)}.`,
    '',
    '| fault | trials | failed | settle p50 / max | Parallel lag p50 / max | outage p50 / max | injected | worker retries | trigger retries |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...apiFaultRows(result.trials).map(
      (r) =>
        `| ${r.fault} | ${r.trials} | ${r.failed} | ${r.settle} | ${r.parallelLag} | ${r.outage} | ${r.injected} | ${r.workerRetries} | ${r.triggerRetries} |`,
    ),
  ];
  const failures = result.trials.filter((t) => t.violations.length);
  if (failures.length) {
    lines.push('', 'Failed trials:', '');
    for (const t of failures) {
      lines.push(
        `- ${t.plan.index}: ${t.plan.lifecycle} (${t.plan.policy}) under ${t.plan.fault}: ${t.violations.join('; ')}`,
      );
    }
  }
  const revived = result.trials.filter((t) => t.revived?.length);
  if (revived.length) {
    lines.push('', 'Cluster processes that exited and were started again (as a kubelet would):', '');
    for (const t of revived) lines.push(`- ${t.plan.index} (${t.plan.fault}): ${t.revived!.join(', ')}`);
  }
  return lines.join('\n') + '\n';
}
