// `npm run bench`: Sequential and Parallel side by side on the local cluster: each scenario has one LWS per policy in
// one namespace, and each round rebuilds one policy's groups alone, then the other's (`--together`: both at once).
// Times come from a watch on the API server (PodTracker), not from the controller's own view.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { podsJson } from '../../src/kube/kube-json.js';
import { formatDuration } from '../../src/log.js';
import {
  API_GROUP,
  API_VERSION,
  lwsWorkflowIdPrefix,
  PLURAL,
  workflowId,
  type PodTerminationPolicy,
} from '../../src/model/index.js';
import { distStaleReason } from '../build/build.js';
import { isClusterRunning, localKubeConfig, startCluster, stopCluster } from '../stack/cluster.js';
import { startControllerProcess, type ControllerProcess, type ControllerRole } from '../stack/controller-processes.js';
import { installCrd } from '../stack/crd.js';
import { sampleLeaderWorkerSet } from '../stack/sample-lws.js';
import { scrapeMetrics } from '../stack/metrics-scrape.js';
import { kubeconfigPath, repoRoot, stateDir } from '../stack/paths.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { clusterBinaries, isProvisioned, provision, upstreamLwsBinaries } from '../stack/provision.js';
import { postgresBinDir } from '../stack/temporal-cluster.js';
import {
  startTemporal,
  temporalBinaries,
  type RunningTemporal,
  type TemporalTarget,
} from '../stack/temporal-target.js';
import { cleanUpUpstreamLws, startUpstreamLws } from '../stack/upstream-lws.js';
import { versions } from '../stack/versions.js';
import { createLogger } from '../../src/log.js';
import { PodTracker } from './pod-tracker.js';
import { formatPhases, type ProvisionPhases } from './provision-phases.js';
import {
  isTemporalProcess,
  percentile,
  type BenchResult,
  type GroupSample,
  type RolloutRound,
  type ScenarioKind,
  type ScenarioLoad,
  type ScaleFigures,
  type ScenarioResult,
  UPSTREAM_PROCESS,
} from './results.js';
import { ActionLedger } from './action-ledger.js';
import { scrapeActions } from './actions.js';
import { cpuSnapshot, loadBetween, type CpuSnapshot } from './cpu-load.js';
import { monotonicUs, type ProfileWindow } from './cpu-profile.js';
import { podCreatesBetween, type PodCreates } from './pod-creates.js';
import { processStats } from './process-stats.js';
import { measureStartFloor } from './temporal-floor.js';
import { controllerProbes, requestsSince, totalOf, upstreamProbes, type ScaleProbes } from './scale-probes.js';
import { settle } from './settle.js';
import { teardownStarts, type TeardownStart } from './teardown-starts.js';
import { resolveClusterName } from '../../src/config/cluster.js';
import { temporalConfigFromEnv } from '../../src/config/temporal.js';

export interface Scenario {
  id: string;
  title: string;
  kind: ScenarioKind;
  groups: number;
  size: number;
  /** Rebuild rounds on the same LWS (more samples). */
  rounds: number;
  /** The LWS's rolling-update limits, in groups (the defaults when absent). */
  rollingUpdate?: { maxUnavailable: number; maxSurge: number };
  /**
   * Rebuilds only: groups rebuilt at once in each round, in order, while the others stand (one round per entry);
   * every group in each of `rounds` when absent.
   */
  rebuiltPerRound?: number[];
  /** This project's policies it measures (both when absent). */
  policies?: PodTerminationPolicy[];
  /** Records how the cost grows: memory with every group standing, API requests, history bytes (ScaleFigures). */
  scale?: boolean;
}

/** Groups of size 4 at 10, 100 and 1,000 (KWOK): one rebuilt three times while the others stand, then a tenth at once. */
export function scaleScenarios(quick: boolean): Scenario[] {
  return (quick ? [4, 8] : [10, 100, 1000]).map((groups) => ({
    id: `scale-${groups}`,
    title: `${groups} groups standing: one rebuilt, then ${Math.max(1, groups / 10)} at once`,
    kind: 'rebuild' as const,
    groups,
    size: 4,
    rounds: 4,
    rebuiltPerRound: [1, 1, 1, Math.max(1, groups / 10)],
    // Parallel is the policy whose share is this controller's (Sequential's is the grace period and the GC's).
    policies: ['Parallel' as const],
    scale: true,
  }));
}

export function scenarios(quick: boolean): Scenario[] {
  const all: Scenario[] = [
    { id: 'rebuild-1', title: 'one group rebuilt', kind: 'rebuild', groups: 1, size: 4, rounds: quick ? 1 : 5 },
    {
      id: 'rebuild-10',
      title: '10 groups rebuilt at once',
      kind: 'rebuild',
      groups: 10,
      size: 4,
      rounds: quick ? 1 : 2,
    },
    {
      id: 'rebuild-50',
      title: '50 groups rebuilt at once',
      kind: 'rebuild',
      groups: quick ? 12 : 50,
      size: 4,
      // One round gives 50 samples per policy, and its p95 moved by 3-4 s between runs of the same code.
      rounds: quick ? 1 : 2,
    },
    {
      id: 'scale-down',
      title: `scale-down ${quick ? 4 : 10} -> 0`,
      kind: 'scale-down',
      groups: quick ? 4 : 10,
      size: 4,
      rounds: 1,
    },
    { id: 'delete', title: 'LWS deletion', kind: 'delete', groups: quick ? 4 : 10, size: 4, rounds: 1 },
    { id: 'size-2', title: 'one group of size 2 rebuilt', kind: 'rebuild', groups: 1, size: 2, rounds: quick ? 1 : 3 },
    { id: 'size-8', title: 'one group of size 8 rebuilt', kind: 'rebuild', groups: 1, size: 8, rounds: quick ? 1 : 3 },
    // A new template for every group, one group at a time (the defaults), then with a surge group and no group down.
    {
      id: 'rollout',
      title: `rolling update of ${quick ? 2 : 4} groups (maxUnavailable 1)`,
      kind: 'rolling-update',
      groups: quick ? 2 : 4,
      size: 4,
      rounds: 1,
      rollingUpdate: { maxUnavailable: 1, maxSurge: 0 },
    },
    {
      id: 'rollout-surge',
      title: `rolling update of ${quick ? 2 : 4} groups (maxSurge 1, maxUnavailable 0)`,
      kind: 'rolling-update',
      groups: quick ? 2 : 4,
      size: 4,
      rounds: 1,
      rollingUpdate: { maxUnavailable: 0, maxSurge: 1 },
    },
    // Many groups, a fifth of them down at a time: the rollout slides (the next group goes as soon as one is back),
    // so the reconcile steers many steps at once while dozens of groups tear down and come back.
    {
      id: 'rollout-wide',
      title: quick
        ? 'rolling update of 6 groups (maxUnavailable 3)'
        : 'rolling update of 50 groups (maxUnavailable 10)',
      kind: 'rolling-update',
      groups: quick ? 6 : 50,
      size: 4,
      rounds: 1,
      rollingUpdate: { maxUnavailable: quick ? 3 : 10, maxSurge: 0 },
    },
  ];
  if (quick) all[2]!.title = '12 groups rebuilt at once';
  return all;
}

const policies: PodTerminationPolicy[] = ['Sequential', 'Parallel'];

/** What one LWS of a scenario is measured with: this project under a policy, or upstream's controller. */
export type Contender = PodTerminationPolicy | 'upstream';

/** The policy a contender's LWS asks for: none for upstream, which has no podTerminationPolicy. */
const policyOf = (c: Contender): PodTerminationPolicy | undefined => (c === 'upstream' ? undefined : c);

export interface BenchOptions {
  graceSeconds: number;
  quick: boolean;
  /** Only these scenario ids (all when empty). */
  only: string[];
  /**
   * Run worker and trigger as production does: compiled JavaScript (`npm run build`), the worker from a workflow
   * bundle built ahead of time. false: TypeScript through tsx, webpack at worker start (development).
   */
  compiled: boolean;
  /** Worker and trigger in one process (`dist/main.js`, the entry `npm start` runs), instead of two. */
  oneProcess: boolean;
  /**
   * Rebuild both policies' groups at the same moment, as the benchmark did before each policy got rounds of its own
   * (a scenario of N groups then puts 2N on the machine at once).
   */
  together: boolean;
  /** The Temporal the controller runs on: a fresh dev server, or the cluster of `npm run temporal:up`. */
  temporal: TemporalTarget;
  /** `upstream`: every scenario again with upstream LeaderWorkerSet's controller, after this project's. */
  against?: 'upstream';
  /** The scale scenarios too (scaleScenarios), after the others; `only` may also name them. */
  scale?: boolean;
  /**
   * A folder for V8 CPU profiles of the controller's processes (`node --cpu-prof`, one per thread, written when they
   * stop) and the windows the bench measured (windows.json), which `npm run cpu-profile` cuts them to.
   */
  cpuProfile?: string;
  progress: (line: string) => void;
}

async function runScenario(
  kc: k8s.KubeConfig,
  scenario: Scenario,
  graceSeconds: number,
  /** This project's trigger, whose log has its reactions; none for upstream. */
  trigger: ControllerProcess | undefined,
  /** The processes of the stack, by name, whose CPU the scenario reports. */
  pids: Record<string, number | undefined>,
  progress: (line: string) => void,
  opts: {
    together: boolean;
    settle(): Promise<void>;
    contenders: Contender[];
    /** This project's cluster name (config/cluster.ts), in its workflow IDs; none for upstream. */
    clusterName?: string;
    /** Scale scenarios: what ScaleFigures records, from the controller that runs (one contender at a time). */
    scale?: ScaleProbes;
    /** Where each provisioning and each round is recorded, for the CPU profiles (--cpu-profile). */
    profileWindows?: ProfileWindow[];
    /** This project's: when each teardown run started and took its first task, read after the rounds. */
    teardownStarts?(workflowIds: string[]): Promise<Map<string, TeardownStart>>;
    /** This project's: where each provisioning's and each policy's rounds' Temporal Actions go. */
    actions?: ActionLedger;
  },
): Promise<{ results: ScenarioResult[]; load: ScenarioLoad }> {
  const { contenders } = opts;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  // The leaders of a round are deleted as streams on one HTTP/2 connection. Through client-node (HTTP/1.1, a TLS
  // connection per concurrent call) the 50th delete of a round was answered up to 1.4 s after the first, and that
  // time counted against every later group.
  const pods = podsJson(kc);
  const namespace = `bench-${scenario.id}-${Date.now().toString(36)}`;
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await waitFor(
    'the default ServiceAccount',
    async () => (await core.readNamespacedServiceAccount({ name: 'default', namespace })) && true,
    {
      timeoutMs: 30_000,
    },
  );
  const tracker = new PodTracker(kc, namespace);
  await tracker.start();
  const g = scenario.groups;
  const names = Object.fromEntries(contenders.map((p) => [p, `${scenario.id}-${p.toLowerCase()}`])) as Record<
    Contender,
    string
  >;
  const samples = Object.fromEntries(contenders.map((c) => [c, []])) as unknown as Record<Contender, GroupSample[]>;
  const shareLoads = Object.fromEntries(contenders.map((c) => [c, []])) as unknown as Record<Contender, ScenarioLoad[]>;
  /** Each sample's teardown run, by workflow ID, and the time its sample counts from. */
  const teardowns: { workflowId: string; sample: GroupSample; from: number }[] = [];
  const rollouts = Object.fromEntries(contenders.map((c) => [c, []])) as unknown as Record<Contender, RolloutRound[]>;
  const provisionMs = {} as Record<Contender, number>;
  const provisionPhases = {} as Record<Contender, ProvisionPhases | undefined>;
  const provisionLoad = {} as Record<Contender, ScenarioLoad>;
  const provisionPodCreates = {} as Record<Contender, PodCreates | undefined>;
  const apiServerMetrics = () =>
    scrapeMetrics(kc, `${kc.getCurrentCluster()?.server ?? ''}/metrics`, { what: 'the API server', verify: true });
  const timeout = (20 * graceSeconds + 60 + g * 2) * 1000;
  const lwsBody = (contender: Contender, image: string) =>
    sampleLeaderWorkerSet({
      name: names[contender],
      policy: policyOf(contender),
      replicas: g,
      size: scenario.size,
      graceSeconds,
      image,
      rollingUpdate: scenario.rollingUpdate,
    });
  /** A JSON merge patch of `policy`'s LWS spec. */
  const patchSpec = (policy: Contender, spec: object) =>
    custom.patchNamespacedCustomObject(
      { group: API_GROUP, version: API_VERSION, plural: PLURAL, namespace, name: names[policy], body: { spec } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
  /**
   * One round: the leaders of the policies in `batch` deleted (or their LWS scaled down, deleted, or given the image
   * of round `round`) at once.
   */
  const runRound = async (batch: Contender[], round: number) => {
    const indices = roundGroups(scenario, round);
    const old = Object.fromEntries(
      batch.map((p) => [p, indices.map((i) => tracker.groupUids(names[p], i))]),
    ) as Partial<Record<Contender, string[][]>>;
    // Parallel rebuilds: the CPU of the share itself, from the deletions until every group's workers terminate.
    const shareFrom =
      scenario.kind === 'rebuild' && batch.length === 1 && batch[0] === 'Parallel'
        ? cpuSnapshot(pids, isTemporalProcess)
        : undefined;
    const t0 = Date.now();
    const shareOver =
      shareFrom &&
      tracker
        .until(
          () =>
            old[batch[0]!]!.every((uids) => tracker.terminatingAt(uids.slice(1)) !== undefined)
              ? tracker.now()
              : undefined,
          timeout,
          'every group of the round terminating',
        )
        .then(() => shareLoads[batch[0]!].push(loadBetween(shareFrom, cpuSnapshot(pids, isTemporalProcess))));
    shareOver?.catch(() => undefined);
    const leaderDeletedAt = new Map<string, number>();
    const rollingOut = batch.map((p) => watchRollout(p, old[p]!));
    // Awaited after the groups' samples; a failure of those must not leave this one unhandled meanwhile.
    for (const r of rollingOut) r?.catch(() => undefined);
    await Promise.all(
      batch.map(async (p) => {
        if (scenario.kind === 'rebuild') {
          await Promise.all(
            indices.map(async (i) => {
              const leader = `${names[p]}-${i}`;
              await pods.delete({ namespace, name: leader }, {});
              leaderDeletedAt.set(leader, Date.now());
            }),
          );
        } else if (scenario.kind === 'rolling-update') {
          // A new image for leaders and workers: a new template revision, which every group is rolled onto.
          const next = lwsBody(p, `registry.invalid/inference:${round + 1}`); // round 1 rolls :1 onto :2
          await patchSpec(p, { leaderWorkerTemplate: next.spec.leaderWorkerTemplate });
        } else if (scenario.kind === 'scale-down') {
          await patchSpec(p, { replicas: 0 });
        } else {
          await custom.deleteNamespacedCustomObject({
            group: API_GROUP,
            version: API_VERSION,
            plural: PLURAL,
            namespace,
            name: names[p],
          });
        }
      }),
    );
    await Promise.all(
      batch.flatMap((p) =>
        old[p]!.map(async (uids, j) => {
          const i = indices[j]!;
          const leader = `${names[p]}-${i}`;
          const group = { lws: names[p], groupIndex: i };
          // A rolling update deletes the leaders one after another (the StatefulSet controller, as the reconcile
          // steers it): a group's times count from its own leader's deletion.
          const from =
            scenario.kind === 'rolling-update'
              ? await tracker.until(
                  () => tracker.terminatingAt(uids.slice(0, 1)) ?? tracker.goneAt(uids.slice(0, 1)),
                  timeout,
                  `the rolling update to delete ${leader}`,
                  group,
                )
              : t0;
          const gone = await tracker.until(
            () => tracker.goneAt(uids),
            timeout,
            `old group ${i} of ${names[p]} gone`,
            group,
          );
          const sample: GroupSample = {
            roundStartedAt: t0,
            ...(scenario.rebuiltPerRound && { rebuiltAtOnce: indices.length }),
            ...(scenario.kind === 'rolling-update' && { updateToLeaderDeletionMs: from - t0 }),
            teardownMs: gone - from,
            ...(leaderDeletedAt.has(leader) ? { leaderDeletedMs: leaderDeletedAt.get(leader)! - t0 } : {}),
            leaderGoneMs: (tracker.goneAt(uids.slice(0, 1)) ?? gone) - from,
            workersTerminatingMs: (tracker.terminatingAt(uids.slice(1)) ?? from) - from,
          };
          if (scenario.kind === 'rebuild' || scenario.kind === 'rolling-update') {
            const oldSet = new Set(uids);
            const ready = await tracker.until(
              () => (tracker.replacementReady(names[p], i, scenario.size, oldSet) ? tracker.now() : undefined),
              timeout,
              `replacement of ${leader}`,
              group,
            );
            sample.recoveryMs = ready - from;
            sample.newLeaders = tracker.newLeaders(names[p], i, oldSet, t0);
            if (sample.newLeaders !== 1) {
              progress(`  WARNING ${leader} got ${sample.newLeaders} new leader pods; one rebuild should make one`);
            }
          }
          samples[p].push(sample);
          if (p !== 'upstream' && opts.clusterName !== undefined) {
            const op = { kind: 'teardown', groupIndex: i, oldLeaderUid: uids[0] ?? '' } as const;
            teardowns.push({
              workflowId: workflowId(opts.clusterName, { namespace, name: names[p] }, op),
              sample,
              from,
            });
          }
        }),
      ),
    );
    await shareOver;
    for (const [i, p] of batch.entries()) {
      const rollout = await rollingOut[i];
      if (rollout) rollouts[p].push({ durationMs: rollout.doneAt - t0, fewestReadyGroups: rollout.fewestReadyGroups });
    }
  };
  /**
   * A rolling update of `policy`'s LWS, followed from now on: when it is over (every group Ready on the new template,
   * no old pod and no surge group left), and the fewest groups Ready meanwhile. A group is Ready with all of its old
   * pods or `size` new ones, never a mix; surge groups count too.
   */
  const watchRollout = (policy: Contender, oldGroups: string[][]) => {
    if (scenario.kind !== 'rolling-update') return undefined;
    const lws = names[policy];
    const olds = oldGroups.map((uids) => new Set(uids));
    let fewestReadyGroups = g;
    return tracker
      .until(
        () => {
          const ready =
            olds.filter(
              (old, i) => tracker.allReadyAmong([...old]) || tracker.replacementReady(lws, i, scenario.size, old),
            ).length + tracker.readyGroupsFrom(lws, g, scenario.size);
          fewestReadyGroups = Math.min(fewestReadyGroups, ready);
          const over =
            oldGroups.every((uids) => tracker.goneAt(uids) !== undefined) &&
            ready === g &&
            tracker.podsFrom(lws, g) === 0;
          return over ? tracker.now() : undefined;
        },
        timeout,
        `the rolling update of ${lws}`,
      )
      .then((doneAt) => ({ doneAt, fewestReadyGroups }));
  };
  let cpuFrom: CpuSnapshot | undefined;
  let cpuTo: CpuSnapshot | undefined;
  const probes = scenario.scale ? opts.scale : undefined;
  const requests: Record<string, number>[] = [];
  let scale: ScaleFigures | undefined;
  const since = (from: number) => formatDuration(Date.now() - from);
  try {
    // Each contender's groups are provisioned from nothing alone: the LWS created -> its N groups Ready.
    for (const contender of contenders) {
      await opts.settle();
      await opts.actions?.mark(`provision ${contender}`);
      if (probes) requests.push(await probes.apiRequests());
      const metricsBefore = await apiServerMetrics();
      const cpuBefore = cpuSnapshot(pids, isTemporalProcess);
      const windowFrom = monotonicUs();
      const creating = Date.now();
      await custom.createNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        plural: PLURAL,
        namespace,
        body: lwsBody(contender, 'registry.invalid/inference:1'),
      });
      provisionMs[contender] = await tracker.until(
        () => (tracker.allReady(names[contender], g, scenario.size) ? tracker.now() - creating : undefined),
        timeout,
        `${g} groups of ${names[contender]} ready`,
      );
      provisionLoad[contender] = loadBetween(cpuBefore, cpuSnapshot(pids, isTemporalProcess));
      opts.profileWindows?.push({
        label: `${scenario.id} provisioning ${contender}`,
        fromUs: windowFrom,
        toUs: monotonicUs(),
      });
      provisionPodCreates[contender] = podCreatesBetween(metricsBefore, await apiServerMetrics());
      const phases = (provisionPhases[contender] = tracker.provisionPhases(names[contender], creating));
      progress(
        `  ${g} groups of ${names[contender]} provisioned and Ready in ${formatDuration(provisionMs[contender])}${
          phases ? ` (${formatPhases(phases)})` : ''
        }`,
      );
    }
    if (probes) {
      await opts.settle();
      requests.push(await probes.apiRequests());
    }
    const rounds = scenario.rebuiltPerRound?.length ?? scenario.rounds;
    for (let round = 1; round <= rounds; round++) {
      // Apart (the default), each policy's groups are rebuilt alone, in an order that alternates by round: "N groups
      // at once" means N on the machine, and neither policy is measured under the other's load.
      const order = round % 2 === 1 ? contenders : [...contenders].reverse();
      for (const batch of opts.together ? [contenders] : order.map((p) => [p])) {
        // The previous round's workflows (or the provisioning's) may still be finishing: Events, status, reports.
        const settling = Date.now();
        await opts.settle();
        if (Date.now() - settling >= 1000)
          progress(`  the controller's group workflows finished in ${since(settling)}`);
        cpuFrom ??= cpuSnapshot(pids, isTemporalProcess);
        // Apart, a policy's rounds are its own span; together, neither's.
        await opts.actions?.mark(batch.length === 1 ? `rounds ${batch[0]}` : undefined);
        const windowFrom = monotonicUs();
        await runRound(batch, round);
        opts.profileWindows?.push({
          label: `${scenario.id} round ${round} ${batch.join('+')}`,
          fromUs: windowFrom,
          toUs: monotonicUs(),
        });
      }
      const p50 = (p: Contender) =>
        formatDuration(
          percentile(
            samples[p].map((s) => s.teardownMs),
            50,
          ),
        );
      progress(
        `  ${scenario.id} round ${round}/${rounds}: teardown p50 ${contenders.map((c) => `${c} ${p50(c)}`).join(', ')}`,
      );
    }
    cpuTo = cpuSnapshot(pids, isTemporalProcess);
    if (opts.actions) {
      // The last round's workflows closed, so that its last tasks are its own.
      await opts.settle();
      await opts.actions.mark();
    }
    if (opts.teardownStarts && teardowns.length > 0) {
      const starts = await opts.teardownStarts(teardowns.map((t) => t.workflowId));
      for (const { workflowId: id, sample, from } of teardowns) {
        const start = starts.get(id);
        if (!start) continue;
        sample.teardownStartedMs = start.startedAt - from;
        sample.firstTaskStartedMs = start.firstTaskStartedAt - from;
      }
    }
    if (probes) {
      await opts.settle();
      const [beforeProvisioning = {}, provisioned = {}] = requests;
      const byKind = {
        provisioning: requestsSince(beforeProvisioning, provisioned),
        rounds: requestsSince(provisioned, await probes.apiRequests()),
      };
      scale = {
        residentMb: probes.residentMb(),
        apiRequests: { provisioning: totalOf(byKind.provisioning), rounds: totalOf(byKind.rounds) },
        apiRequestsByKind: byKind,
        ...(probes.historyBytes && { historyBytes: await probes.historyBytes(namespace) }),
        ...(probes.workflowTasks && { workflowTasks: await probes.workflowTasks(namespace) }),
      };
      progress(
        `  with ${g} groups standing: RSS ${Object.entries(scale.residentMb)
          .map(([name, mb]) => `${name} ${mb} MB`)
          .join(
            ', ',
          )}; API requests ${scale.apiRequests.provisioning} to provision, ${scale.apiRequests.rounds} over the rounds`,
      );
    }
  } finally {
    tracker.stop();
    // A namespace still tearing down hundreds of pods in the background loaded the API server during the next
    // scenario (the 50-group rebuild measured 6 s slower right after the 10-group one): its pods are deleted here at
    // once, without their grace period, which nothing measures here (the namespace controller came to them 5-7 s
    // later), and awaited. A namespace being deleted takes no new pod. The namespace object finishes on its own.
    progress(`  removing namespace ${namespace}`);
    const removing = Date.now();
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
    await core.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
    await waitFor(
      `the pods of namespace ${namespace} to be gone`,
      async () => ((await core.listNamespacedPod({ namespace, limit: 1 })).items.length === 0 ? true : undefined),
      { timeoutMs: 10 * 60_000, intervalMs: 500 },
    ).then(
      () => progress(`  its pods gone in ${since(removing)}`),
      (err: unknown) => progress(`  WARNING ${(err as Error).message}; going on`),
    );
  }
  const results = contenders.map((policy): ScenarioResult => ({
    id: scenario.id,
    title: scenario.title,
    kind: scenario.kind,
    groups: scenario.groups,
    size: scenario.size,
    // Upstream's only behaviour is this project's Sequential.
    policy: policyOf(policy) ?? 'Sequential',
    ...(policy === 'upstream' && { controller: 'upstream' as const }),
    provisionMs: provisionMs[policy],
    ...(opts.actions?.of(`provision ${policy}`) && { provisionActions: opts.actions.of(`provision ${policy}`) }),
    ...(opts.actions?.of(`rounds ${policy}`) && { actions: opts.actions.of(`rounds ${policy}`) }),
    ...(provisionPhases[policy] && { provisionPhases: provisionPhases[policy] }),
    provisionLoad: provisionLoad[policy],
    ...(provisionPodCreates[policy] && { provisionPodCreates: provisionPodCreates[policy] }),
    samples: samples[policy],
    ...(shareLoads[policy].length > 0 && { shareLoads: shareLoads[policy] }),
    reactionsMs:
      trigger && opts.clusterName !== undefined
        ? reactionTimes(trigger, lwsWorkflowIdPrefix(opts.clusterName, { namespace, name: names[policy] }))
        : [],
    teardownP50Ms: percentile(
      samples[policy].map((s) => s.teardownMs),
      50,
    ),
    teardownP95Ms: percentile(
      samples[policy].map((s) => s.teardownMs),
      95,
    ),
    recoveryP50Ms:
      scenario.kind === 'rebuild' || scenario.kind === 'rolling-update'
        ? percentile(
            samples[policy].map((s) => s.recoveryMs ?? 0),
            50,
          )
        : undefined,
    recoveryP95Ms:
      scenario.kind === 'rebuild' || scenario.kind === 'rolling-update'
        ? percentile(
            samples[policy].map((s) => s.recoveryMs ?? 0),
            95,
          )
        : undefined,
    ...(scenario.rollingUpdate && { rollout: { ...scenario.rollingUpdate, rounds: rollouts[policy] } }),
    ...(scale && { scale }),
  }));
  return { results, load: loadBetween(cpuFrom!, cpuTo!) };
}

/**
 * The group indices a round rebuilds (or tears down, or rolls): all of them, or with `rebuiltPerRound` the next ones
 * after the previous rounds', so that a group is rebuilt again only once every other one was.
 */
export function roundGroups(scenario: Scenario, round: number): number[] {
  const counts = scenario.rebuiltPerRound;
  if (!counts) return Array.from({ length: scenario.groups }, (_, i) => i);
  const first = counts.slice(0, round - 1).reduce((sum, n) => sum + n, 0);
  return Array.from({ length: counts[round - 1] ?? 0 }, (_, k) => (first + k) % scenario.groups);
}

/** Trigger reaction times (watch event -> workflow started) from its JSON log lines, of the workflow IDs given. */
function reactionTimes(trigger: ControllerProcess, workflowIdPrefix = ''): number[] {
  return startLines(trigger, workflowIdPrefix).map((entry) => entry.latencyMs);
}

/** The trigger's "workflow started" log lines, of the workflow IDs given. */
function startLines(
  trigger: ControllerProcess,
  workflowIdPrefix = '',
): { latencyMs: number; workflowId: string; eager?: boolean }[] {
  const out: { latencyMs: number; workflowId: string; eager?: boolean }[] = [];
  for (const line of trigger.lines) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { msg?: string; latencyMs?: number; workflowId?: string; eager?: boolean };
      if (
        entry.msg === 'workflow started' &&
        typeof entry.latencyMs === 'number' &&
        entry.workflowId?.startsWith(workflowIdPrefix)
      )
        out.push({ latencyMs: entry.latencyMs, workflowId: entry.workflowId, eager: entry.eager });
    } catch {
      /* not a log object */
    }
  }
  return out;
}

export async function runBench(opts: BenchOptions): Promise<BenchResult> {
  const started = Date.now();
  const binaries = [
    ...clusterBinaries(),
    ...temporalBinaries(opts.temporal),
    ...(opts.against === 'upstream' ? upstreamLwsBinaries : []),
  ];
  if (!(await isProvisioned(binaries))) await provision({ log: createLogger('provision'), only: binaries });
  const clusterWasRunning = Boolean(await isClusterRunning());
  const cluster = await startCluster({ log: createLogger('cluster') });
  const kc = localKubeConfig();
  // A run that died mid-way against upstream leaves its CRD and webhooks: put ours back first.
  await cleanUpUpstreamLws({ kc, log: createLogger('upstream-lws') });
  await installCrd(kc);
  const server = await startTemporal(opts.temporal, createLogger('temporal'), { metrics: true });
  // Set as they start: whatever fails later, the finally below stops what did (Temporal too, if this run started it).
  let controllers: ControllerProcess[] = [];
  let connection: Connection | undefined;
  try {
    const list = [...scenarios(opts.quick), ...scaleScenarios(opts.quick)].filter((s) =>
      opts.only.length === 0 ? !s.scale || opts.scale : opts.only.includes(s.id),
    );
    // The floor under a round's starts: a scale scenario rebuilds no more than a tenth of its groups at once.
    const largestBurst = 2 * Math.max(...list.map((s) => (s.scale ? Math.max(...s.rebuiltPerRound!) : s.groups)));
    opts.progress(
      `measuring workflow starts on the idle Temporal server (one at a time, then ${largestBurst} at once)`,
    );
    const temporalStartFloor = await measureStartFloor(server.address, largestBurst, {
      namespace: server.namespace,
      serverPids: Object.values(server.pids),
    });
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      KUBECONFIG: kubeconfigPath,
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_NAMESPACE: server.namespace,
      // The cluster outlives a run (and may serve others): a task queue of its own keeps earlier runs' unfinished
      // workflows off this worker and out of the count the rounds wait on (settle).
      ...(server.target === 'cluster' && { TEMPORAL_TASK_QUEUE: `lws-bench-${Date.now().toString(36)}` }),
      LOG_FORMAT: 'json',
    };
    // Built only when stale: in `npm test` another lane may be running the controller from this dist/.
    const stale = opts.compiled ? distStaleReason(join(repoRoot, 'dist')) : undefined;
    if (stale !== undefined) {
      opts.progress(`building dist/ and the workflow bundle (npm run build): ${stale}`);
      // Without the caller's NODE_OPTIONS: those are for the processes measured (a small heap would fail tsc).
      const { NODE_OPTIONS: _measured, ...buildEnv } = process.env;
      execFileSync('npm', ['run', 'build'], { cwd: repoRoot, stdio: 'ignore', env: buildEnv });
    }
    const logDir = join(stateDir, 'bench-logs');
    controllers = await Promise.all(
      (opts.oneProcess ? (['main'] as const) : (['worker', 'trigger'] as const)).map((role) =>
        startControllerProcess(role, env, logDir, opts.compiled, profilerArgs(opts.cpuProfile, role)),
      ),
    );
    const profileWindows: ProfileWindow[] | undefined = opts.cpuProfile === undefined ? undefined : [];
    // The process whose log has the trigger's starts.
    const trigger = controllers.find((c) => c.role !== 'worker')!;
    const pids: Record<string, number | undefined> = {
      ...cluster.pids,
      ...server.pids,
      ...Object.fromEntries(controllers.map((c) => [processName(c), c.child.pid])),
      bench: process.pid,
    };
    const results: ScenarioResult[] = [];
    const load: Record<string, ScenarioLoad> = {};
    // The probes read whole histories: a page of a 1,000-group reconcile's passed gRPC's default 4 MB.
    connection = await Connection.connect({
      address: server.address,
      channelArgs: { 'grpc.max_receive_message_length': 64 * 1024 * 1024 },
    });
    const clusterName = await resolveClusterName(kc, env);
    const temporal = {
      client: new Client({ connection, namespace: server.namespace }),
      taskQueue: temporalConfigFromEnv(env, clusterName).taskQueue,
    };
    for (const [i, scenario] of list.entries()) {
      opts.progress(
        `[${i + 1}/${list.length}] ${scenario.title} (groups ${scenario.groups}, size ${scenario.size}, G ${opts.graceSeconds}s, elapsed ${formatDuration(Date.now() - started)})`,
      );
      const measured = await runScenario(kc, scenario, opts.graceSeconds, trigger, pids, opts.progress, {
        together: opts.together,
        settle: () => settle(temporal.client, temporal.taskQueue, opts.progress, settleTimeoutMs(scenario)),
        contenders: scenario.policies ?? policies,
        clusterName,
        scale: controllerProbes(controllers, temporal.client, processName, clusterName),
        teardownStarts: (ids) => teardownStarts(temporal.client, ids),
        ...(server.metricsUrls.length > 0 && {
          actions: new ActionLedger(() => scrapeActions(server.metricsUrls, server.namespace)),
        }),
        ...(profileWindows && { profileWindows }),
      });
      results.push(...measured.results);
      load[scenario.id] = measured.load;
    }
    const reactions = reactionTimes(trigger);
    const processes = Object.fromEntries(controllers.map((c) => [processName(c), processStats(c.child.pid!)]));
    if (opts.cpuProfile !== undefined && profileWindows) {
      mkdirSync(opts.cpuProfile, { recursive: true });
      writeFileSync(join(opts.cpuProfile, 'windows.json'), JSON.stringify(profileWindows, null, 2) + '\n');
      opts.progress(
        `CPU profiles in ${opts.cpuProfile} once the controller stops; summary: npm run cpu-profile -- ${opts.cpuProfile}`,
      );
    }
    let upstream: BenchResult['upstream'];
    if (opts.against === 'upstream') {
      // One controller at a time on the same cluster: ours stops before upstream's takes the CRD's name.
      await Promise.all(controllers.map((c) => c.stop()));
      controllers = [];
      upstream = await runUpstream(kc, list, opts, { ...cluster.pids, bench: process.pid }, results, started);
    }
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    return {
      command: `npm run bench --${opts.quick ? ' --quick' : ''}${opts.scale ? ' --scale' : ''} --grace ${opts.graceSeconds}${opts.compiled ? '' : ' --dev'}${opts.oneProcess ? ' --one-process' : ''}${opts.together ? ' --together' : ''}${opts.temporal === 'cluster' ? ' --temporal cluster' : ''}${opts.against ? ` --against ${opts.against}` : ''}${opts.cpuProfile ? ' --cpu-profile' : ''}`,
      compiled: opts.compiled,
      oneProcess: opts.oneProcess,
      together: opts.together,
      temporal: temporalInfo(server, versions),
      date: new Date().toISOString(),
      machine: machineInfo(),
      versions: { node: process.version, temporalSdk: pkg.dependencies['@temporalio/worker'] ?? '?', ...versions },
      graceSeconds: opts.graceSeconds,
      quick: opts.quick,
      durationMs: Date.now() - started,
      scenarios: results,
      trigger: {
        eagerStarts: startLines(trigger).filter((entry) => entry.eager === true).length,
        reactions: reactions.length,
        reactionP50Ms: percentile(reactions, 50),
        reactionP99Ms: percentile(reactions, 99),
      },
      temporalStartFloor,
      processes,
      load,
      ...(upstream && { upstream }),
    };
  } finally {
    await connection?.close();
    await Promise.all(controllers.map((c) => c.stop()));
    await server.stop();
    if (!clusterWasRunning) await stopCluster({ log: createLogger('cluster') });
  }
}

/**
 * Every scenario again with upstream's controller, started on the same cluster (its own CRD and webhooks); its rows
 * go to `results`. Upstream has no workflows: nothing to settle between rounds.
 */
async function runUpstream(
  kc: k8s.KubeConfig,
  list: Scenario[],
  opts: BenchOptions,
  stackPids: Record<string, number | undefined>,
  results: ScenarioResult[],
  started: number,
): Promise<NonNullable<BenchResult['upstream']>> {
  opts.progress(`starting upstream LeaderWorkerSet ${versions.lwsUpstream} (its CRD and webhooks replace ours)`);
  const controller = await startUpstreamLws({ kc, log: createLogger('upstream-lws') });
  const load: Record<string, ScenarioLoad> = {};
  try {
    opts.progress(`  upstream serving after ${formatDuration(controller.startMs)}`);
    const pids = { ...stackPids, [UPSTREAM_PROCESS]: controller.pid };
    for (const [i, scenario] of list.entries()) {
      opts.progress(
        `[upstream ${i + 1}/${list.length}] ${scenario.title} (groups ${scenario.groups}, size ${scenario.size}, G ${opts.graceSeconds}s, elapsed ${formatDuration(Date.now() - started)})`,
      );
      const measured = await runScenario(kc, scenario, opts.graceSeconds, undefined, pids, opts.progress, {
        together: false,
        settle: async () => undefined,
        contenders: ['upstream'],
        scale: upstreamProbes(controller),
      });
      results.push(...measured.results);
      load[scenario.id] = measured.load;
    }
    const process = controller.stats();
    return { version: versions.lwsUpstream, startMs: controller.startMs, process, load };
  } finally {
    opts.progress('stopping upstream LeaderWorkerSet; our CRD and webhook back');
    await controller.stop();
  }
}

/** `node --cpu-prof` into a folder per role; none without --cpu-profile. */
function profilerArgs(dir: string | undefined, role: ControllerRole): string[] {
  return dir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', join(dir, role)];
}

/** Up to 2 minutes, more for the workflows of hundreds of groups provisioned at once. */
function settleTimeoutMs(scenario: Scenario): number {
  return Math.max(120_000, scenario.groups * 600);
}

/** What the result records of the Temporal it ran on. */
function temporalInfo(
  server: RunningTemporal,
  versions: { temporalCli: string; temporalServer: string },
): NonNullable<BenchResult['temporal']> {
  const cluster = server.target === 'cluster';
  return {
    target: server.target,
    namespace: server.namespace,
    version: cluster ? versions.temporalServer : versions.temporalCli,
    database: cluster ? postgresVersion() : 'SQLite',
    processes: Object.keys(server.pids),
  };
}

/** `PostgreSQL 15.14`, from the binaries the cluster runs. */
function postgresVersion(): string {
  try {
    const out = execFileSync(join(postgresBinDir(), 'postgres'), ['--version'], { encoding: 'utf8' });
    return `PostgreSQL ${/\d+(\.\d+)*/.exec(out)?.[0] ?? '?'}`;
  } catch {
    return 'PostgreSQL';
  }
}

/** `worker`, `trigger`, or `worker+trigger` for both roles in one process. */
function processName(c: ControllerProcess): string {
  return c.role === 'main' ? 'worker+trigger' : c.role;
}

function machineInfo(): BenchResult['machine'] {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  const model = /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1] ?? 'unknown';
  const memKb = Number(/MemTotal:\s*(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0);
  const cpus = cpuinfo.split('\n').filter((l) => l.startsWith('processor')).length;
  return { cpus, model, memoryGiB: Math.round(memKb / 1024 / 1024) };
}
