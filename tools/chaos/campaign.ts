// `npm run chaos`: the project's own fault campaign on the real stack (API server with its controllers, KWOK, a
// Temporal server, the worker and the trigger as processes). Each trial provisions an LWS, runs one lifecycle, kills
// (kill -9) the worker, the trigger, both or the Temporal server at a seeded instant, starts it again, and checks the
// invariants once the LWS settles.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { createLogger, formatDuration } from '../../src/log.js';
import {
  API_GROUP,
  API_VERSION,
  LABEL_NAME,
  PLURAL,
  isPodReady,
  parsePodName,
  type LeaderWorkerSet,
  type PodTerminationPolicy,
} from '../../src/model/index.js';
import { localKubeConfig, startCluster } from '../stack/cluster.js';
import { startControllerProcess, type ControllerProcess } from '../stack/controller-processes.js';
import { installCrd } from '../stack/crd.js';
import { kubeconfigPath, stateDir } from '../stack/paths.js';
import type { TemporalTarget } from '../stack/temporal-target.js';
import { checkTrial, unsettled, type FaultWindow, type LiveState, type TrialShape } from './invariants.js';
import { planTrials, type FaultKind, type TrialPlan } from './plan.js';
import { PodWatch } from './pod-watch.js';
import { startChaosTemporal, type ChaosTemporal } from './temporal-faults.js';

/** The bound of a Parallel teardown whose controller was hit: workers terminating within this of the survivor. */
export const PARALLEL_BOUND_MS = 3000;

export interface CampaignOptions {
  seed: number;
  trials: number;
  temporal: TemporalTarget;
  graceSeconds: number;
  replicas: number;
  size: number;
  faults?: readonly FaultKind[];
  progress: (line: string) => void;
}

export interface TrialResult {
  plan: TrialPlan;
  settleMs?: number;
  parallelLagMs?: number;
  parallelKept?: { kept: number; of: number };
  /** Parallel, fault before the workers were due: the delay the crash added after the killed process served again. */
  afterRecoveryMs?: number;
  /** How long the killed part took to serve again (restart delay included). */
  outageMs: number;
  violations: string[];
}

export interface CampaignResult {
  seed: number;
  temporal: TemporalTarget;
  graceSeconds: number;
  replicas: number;
  size: number;
  date: string;
  durationMs: number;
  trials: TrialResult[];
}

const SETTLE_TIMEOUT_MS = 180_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The sizes a trial's LWS is made with. */
export type LwsShape = Pick<CampaignOptions, 'graceSeconds' | 'replicas' | 'size'>;

function lwsOf(name: string, opts: LwsShape, policy: PodTerminationPolicy): LeaderWorkerSet {
  const template = (role: string) => ({
    spec: {
      terminationGracePeriodSeconds: opts.graceSeconds,
      containers: [{ name: role, image: 'registry.invalid/ai:1' }],
    },
  });
  return {
    apiVersion: `${API_GROUP}/${API_VERSION}`,
    kind: 'LeaderWorkerSet',
    metadata: { name },
    spec: {
      podTerminationPolicy: policy,
      replicas: opts.replicas,
      leaderWorkerTemplate: { size: opts.size, leaderTemplate: template('leader'), workerTemplate: template('worker') },
    },
  };
}

/** The worker and the trigger as processes, with the faults this campaign strikes them with. */
export class Stack {
  worker!: ControllerProcess;
  trigger!: ControllerProcess;

  constructor(
    readonly temporal: ChaosTemporal,
    private readonly env: NodeJS.ProcessEnv,
    private readonly logDir = join(stateDir, 'chaos-logs'),
  ) {}

  async start(role: 'worker' | 'trigger'): Promise<void> {
    this[role] = await startControllerProcess(role, this.env, this.logDir);
  }

  /** kill -9 of what the fault names, then, after the delay, a start of the same. Resolves once it serves again. */
  async strike(fault: FaultKind, restartDelayMs: number): Promise<FaultWindow> {
    const at = Date.now();
    const roles: ('worker' | 'trigger')[] =
      fault === 'both' ? ['worker', 'trigger'] : fault === 'temporal' ? [] : [fault];
    await Promise.all(roles.map((r) => this[r].kill9()));
    if (fault === 'temporal') await this.temporal.kill();
    await sleep(restartDelayMs);
    if (fault === 'temporal') await this.temporal.start();
    await Promise.all(roles.map((r) => this.start(r)));
    return { at, recoveredAt: Date.now() };
  }

  /** A controller process that exited by itself is a crash: the campaign reports it and starts it again. */
  async crashed(): Promise<string[]> {
    const out: string[] = [];
    for (const role of ['worker', 'trigger'] as const) {
      const child = this[role].child;
      if (child.exitCode !== null || child.signalCode !== null) {
        out.push(`the ${role} exited by itself (${child.exitCode ?? child.signalCode})`);
        await this.start(role);
      }
    }
    return out;
  }

  async stop(): Promise<void> {
    await Promise.all([this.worker?.stop(), this.trigger?.stop()]);
  }
}

/** The campaign's own view of the cluster, straight to the API server: what it changes and what it checks. */
export class Kube {
  readonly core: k8s.CoreV1Api;
  readonly apps: k8s.AppsV1Api;
  readonly custom: k8s.CustomObjectsApi;

  constructor(
    kc: k8s.KubeConfig,
    readonly namespace: string,
  ) {
    this.core = kc.makeApiClient(k8s.CoreV1Api);
    this.apps = kc.makeApiClient(k8s.AppsV1Api);
    this.custom = kc.makeApiClient(k8s.CustomObjectsApi);
  }

  private lwsCall(name: string) {
    return { group: API_GROUP, version: API_VERSION, plural: PLURAL, namespace: this.namespace, name };
  }

  async live(name: string): Promise<LiveState> {
    const selector = `${LABEL_NAME}=${name}`;
    const [pods, sets, lws] = await Promise.all([
      this.core.listNamespacedPod({ namespace: this.namespace, labelSelector: selector }),
      this.apps.listNamespacedStatefulSet({ namespace: this.namespace, labelSelector: selector }),
      this.custom.getNamespacedCustomObject(this.lwsCall(name)).then(
        () => true,
        (err: { code?: number }) => (err.code === 404 ? false : Promise.reject(err)),
      ),
    ]);
    return {
      lwsExists: lws,
      pods: pods.items.flatMap((p) => {
        const parsed = parsePodName(name, p.metadata!.name!);
        return parsed
          ? [
              {
                name: p.metadata!.name!,
                uid: p.metadata!.uid!,
                groupIndex: parsed.groupIndex,
                leader: parsed.workerIndex === 0,
                ready: isPodReady(p),
                terminating: Boolean(p.metadata!.deletionTimestamp),
                image: p.spec?.containers[0]?.image ?? '',
              },
            ]
          : [];
      }),
      statefulSets: sets.items.map((s) => {
        const suffix = s.metadata!.name!.slice(name.length + 1);
        return {
          name: s.metadata!.name!,
          ...(s.metadata!.name === name ? {} : { groupIndex: Number(suffix) }),
          ...(s.metadata!.ownerReferences?.[0]?.uid ? { ownerUid: s.metadata!.ownerReferences[0].uid } : {}),
        };
      }),
    };
  }

  create(lws: LeaderWorkerSet) {
    return this.custom.createNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      plural: PLURAL,
      namespace: this.namespace,
      body: lws,
    });
  }

  patchSpec(name: string, spec: Record<string, unknown>) {
    return this.custom.patchNamespacedCustomObject(
      { ...this.lwsCall(name), body: { spec } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
  }

  deleteLws(name: string) {
    return this.custom.deleteNamespacedCustomObject(this.lwsCall(name));
  }

  deletePod(name: string) {
    return this.core.deleteNamespacedPod({ name, namespace: this.namespace });
  }

  /**
   * Ends the grace period of these terminating pods: a trial's cleanup, which no check looks at, then waits for no
   * grace period. Only pods already terminating, so that no StatefulSet still there makes them again.
   */
  async endGracePeriods(podNames: string[]): Promise<void> {
    await Promise.all(
      podNames.map((pod) =>
        this.core
          .deleteNamespacedPod({ name: pod, namespace: this.namespace, gracePeriodSeconds: 0 })
          .catch(() => undefined),
      ),
    );
  }
}

/** Polls until `pending` finds nothing left to wait for; the time it took, or what was still missing. */
export async function until(
  pending: () => Promise<string[]>,
  timeoutMs: number,
): Promise<{ ms: number; missing?: undefined } | { ms?: undefined; missing: string[] }> {
  const started = Date.now();
  for (;;) {
    const missing = await pending().catch((err: unknown) => [`reading the cluster failed: ${String(err)}`]);
    if (missing.length === 0) return { ms: Date.now() - started };
    if (Date.now() - started > timeoutMs) return { missing };
    await sleep(200);
  }
}

/** One lifecycle of one LWS: what it is, and under which policy. */
export interface LifecycleSpec {
  name: string;
  lifecycle: TrialPlan['lifecycle'];
  policy: PodTerminationPolicy;
  /** The group a rebuild breaks. */
  groupIndex: number;
}

/** What a trial does to the system while the lifecycle runs. */
export interface TrialFault {
  /** Right after the lifecycle's first call; resolves with the window in which the fault kept the controller away. */
  strike(startedAt: number): Promise<FaultWindow>;
  /** Once the LWS settled (or the wait gave up), before the LWS is cleaned up. */
  lift?(): Promise<void>;
}

export interface LifecycleOutcome {
  settleMs?: number;
  parallelLagMs?: number;
  parallelKept?: { kept: number; of: number };
  /** Undefined when the LWS was never provisioned (nothing struck). */
  fault?: FaultWindow;
  violations: string[];
}

/**
 * Provisions the LWS, runs its lifecycle, strikes the fault, waits until the LWS settles, then checks the invariants
 * (the Parallel bound `boundMs`) and cleans up. `crashed` reports controller processes that exited by themselves.
 */
export async function runLifecycle(
  trial: LifecycleSpec,
  opts: LwsShape,
  kube: Kube,
  pods: PodWatch,
  strike: TrialFault,
  /** `boundMs`: a number, or one worked out from the fault's window (a bound that grows with an outage). */
  checks: { boundMs: number | ((fault: FaultWindow) => number); crashed: () => Promise<string[]> },
): Promise<LifecycleOutcome> {
  const { name } = trial;
  const newImage = 'registry.invalid/ai:2';
  await kube.create(lwsOf(name, opts, trial.policy));
  const readyShape: TrialShape = {
    lifecycle: 'rebuild',
    policy: trial.policy,
    lwsName: name,
    replicas: opts.replicas,
    size: opts.size,
    groupIndex: -1,
    newImage,
    leadersBefore: new Map(),
    podsBefore: new Set(),
  };
  const provisioned = await until(async () => {
    const live = await kube.live(name);
    // Any leader counts as "before" here: only readiness and the object graph are checked.
    const leaders = new Map(live.pods.filter((p) => p.leader).map((p) => [p.groupIndex, p.uid]));
    return unsettled({ ...readyShape, leadersBefore: leaders }, live);
  }, SETTLE_TIMEOUT_MS);
  if (provisioned.missing) return { violations: [`not provisioned: ${provisioned.missing.join('; ')}`] };

  const before = await kube.live(name);
  const shape: TrialShape = {
    ...readyShape,
    lifecycle: trial.lifecycle,
    groupIndex: trial.groupIndex,
    leadersBefore: new Map(before.pods.filter((p) => p.leader).map((p) => [p.groupIndex, p.uid])),
    podsBefore: new Set(before.pods.map((p) => p.uid)),
  };
  const startedAt = Date.now();
  switch (trial.lifecycle) {
    case 'rebuild':
      await kube.deletePod(`${name}-${trial.groupIndex}`);
      break;
    case 'scale-down':
      await kube.patchSpec(name, { replicas: opts.replicas - 1 });
      break;
    case 'rolling-update': {
      const spec = lwsOf(name, opts, trial.policy).spec;
      const withImage = (t: typeof spec.leaderWorkerTemplate.workerTemplate) => ({
        spec: { ...t.spec, containers: [{ ...t.spec!.containers[0]!, image: newImage }] },
      });
      await kube.patchSpec(name, {
        leaderWorkerTemplate: {
          ...spec.leaderWorkerTemplate,
          leaderTemplate: withImage(spec.leaderWorkerTemplate.leaderTemplate!),
          workerTemplate: withImage(spec.leaderWorkerTemplate.workerTemplate),
        },
      });
      break;
    }
    case 'lws-deletion':
      await kube.deleteLws(name);
      break;
  }
  const fault = await strike.strike(startedAt);
  const settled = await until(async () => unsettled(shape, await kube.live(name)), SETTLE_TIMEOUT_MS);
  const settleMs = settled.missing ? undefined : Date.now() - startedAt;
  await strike.lift?.();
  const boundMs = typeof checks.boundMs === 'number' ? checks.boundMs : checks.boundMs(fault);
  const verdict = checkTrial(shape, pods.of(name), fault, boundMs);
  const violations = [
    ...(settled.missing ? [`did not settle in ${SETTLE_TIMEOUT_MS / 1000} s: ${settled.missing.join('; ')}`] : []),
    ...verdict.violations,
    ...(await checks.crashed()),
  ];
  if (trial.lifecycle !== 'lws-deletion') {
    await kube.deleteLws(name).catch(() => undefined);
    await until(async () => {
      const { pods } = await kube.live(name);
      await kube.endGracePeriods(pods.filter((p) => p.terminating).map((p) => p.name));
      return pods.length ? ['pods left'] : [];
    }, SETTLE_TIMEOUT_MS);
  }
  return {
    ...(settleMs === undefined ? {} : { settleMs }),
    ...(verdict.parallelLagMs === undefined ? {} : { parallelLagMs: verdict.parallelLagMs }),
    ...(verdict.parallelKept ? { parallelKept: verdict.parallelKept } : {}),
    ...(verdict.afterRecoveryMs === undefined ? {} : { afterRecoveryMs: verdict.afterRecoveryMs }),
    fault,
    violations,
  };
}

async function runTrial(
  plan: TrialPlan,
  opts: CampaignOptions,
  kube: Kube,
  stack: Stack,
  pods: PodWatch,
): Promise<TrialResult> {
  const kill: TrialFault = {
    strike: async (startedAt) => {
      await sleep(Math.max(0, startedAt + plan.faultDelayMs - Date.now()));
      return stack.strike(plan.fault, plan.restartDelayMs);
    },
  };
  const { fault, violations, ...figures } = await runLifecycle(
    { ...plan, name: `chaos-${plan.index}` },
    opts,
    kube,
    pods,
    kill,
    {
      boundMs: PARALLEL_BOUND_MS,
      crashed: () => stack.crashed(),
    },
  );
  return { plan, ...figures, outageMs: fault ? fault.recoveredAt - fault.at : 0, violations };
}

export async function runCampaign(opts: CampaignOptions): Promise<CampaignResult> {
  const started = Date.now();
  const log = createLogger('chaos');
  await startCluster({ log: createLogger('cluster') });
  const kc = localKubeConfig();
  await installCrd(kc);
  opts.progress(`starting Temporal (${opts.temporal})`);
  const temporal = await startChaosTemporal(opts.temporal, createLogger('temporal'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KUBECONFIG: kubeconfigPath,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    // A queue of its own: a cluster that outlives the campaign keeps no earlier run's tasks on it.
    TEMPORAL_TASK_QUEUE: `lws-chaos-${randomBytes(3).toString('hex')}`,
  };
  const stack = new Stack(temporal, env);
  const namespace = `chaos-${randomBytes(3).toString('hex')}`;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  let watch: PodWatch | undefined;
  try {
    await Promise.all([stack.start('worker'), stack.start('trigger')]);
    await core.createNamespace({ body: { metadata: { name: namespace, labels: { 'lws-temporal/chaos': 'true' } } } });
    watch = new PodWatch(kc, namespace, log);
    await watch.start();
    const kube = new Kube(kc, namespace);
    const plans = planTrials({ ...opts, replicas: opts.replicas });
    const trials: TrialResult[] = [];
    for (const plan of plans) {
      opts.progress(
        `[${plan.index + 1}/${plans.length}] ${plan.lifecycle} (${plan.policy}), kill -9 ${plan.fault} at +${plan.faultDelayMs} ms, restart after ${plan.restartDelayMs} ms (elapsed ${formatDuration(Date.now() - started)})`,
      );
      // The first pods need the namespace's ServiceAccount: a trial fails fast rather than waiting on it.
      const result = await runTrial(plan, opts, kube, stack, watch);
      trials.push(result);
      opts.progress(
        result.violations.length
          ? `  FAILED: ${result.violations.join('; ')}`
          : `  ok: settled in ${formatDuration(result.settleMs ?? 0)}${result.parallelLagMs === undefined ? '' : `, Parallel lag ${result.parallelLagMs} ms`}`,
      );
    }
    return {
      seed: opts.seed,
      temporal: opts.temporal,
      graceSeconds: opts.graceSeconds,
      replicas: opts.replicas,
      size: opts.size,
      date: new Date().toISOString(),
      durationMs: Date.now() - started,
      trials,
    };
  } finally {
    await watch?.stop();
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
    await stack.stop();
    await temporal.stop();
  }
}
