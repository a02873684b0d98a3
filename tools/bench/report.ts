// docs/benchmarks.md and the timeline chart (SVG) from a BenchResult.
import {
  isTemporalProcess,
  percentile,
  temporalCpuPerLifecycle,
  temporalCpuSeconds,
  temporalTarget,
  type BenchResult,
  type GroupSample,
  type ScenarioLoad,
  type ScenarioResult,
  UPSTREAM_PROCESS,
} from './results.js';
import type { Spread } from './provision-phases.js';
import { formatPodCreates } from './pod-creates.js';

const s = (ms: number | undefined) => (ms === undefined ? '-' : `${(ms / 1000).toFixed(2)} s`);

/** This project's two rows of a scenario, and upstream's when the run had `--against upstream`. */
function pair(results: ScenarioResult[], id: string) {
  const seq = results.find((r) => r.id === id && r.policy === 'Sequential' && !r.controller);
  const par = results.find((r) => r.id === id && r.policy === 'Parallel' && !r.controller);
  const upstream = results.find((r) => r.id === id && r.controller === 'upstream');
  return { seq, par, upstream };
}

/** The scenarios of the main tables: the scale scenarios (rounds of different sizes) have a table of their own. */
function ids(result: BenchResult): string[] {
  return [...new Set(result.scenarios.filter((r) => !r.scale).map((r) => r.id))];
}

/** Targets of issue 5, checked against the measurement (reported, never asserted by tests). */
export function targets(result: BenchResult): { target: string; measured: string; met: boolean }[] {
  const G = result.graceSeconds * 1000;
  const one = pair(result.scenarios, 'rebuild-1');
  const many = pair(result.scenarios, 'rebuild-50');
  const ratio = one.seq && one.par ? one.par.teardownP50Ms / one.seq.teardownP50Ms : NaN;
  const rss = Object.values(result.processes).reduce((sum, p) => sum + p.peakRssMb, 0);
  return [
    {
      target: 'Parallel teardown p50 <= G + 1 s (one group)',
      measured: s(one.par?.teardownP50Ms),
      met: (one.par?.teardownP50Ms ?? Infinity) <= G + 1000,
    },
    {
      target: `ratio Parallel / Sequential <= 0.55${result.graceSeconds === 10 ? '' : ' (target is at G = 10 s)'}`,
      measured: ratio.toFixed(2),
      met: ratio <= 0.55,
    },
    {
      target: `${many.par?.groups ?? 50} concurrent Parallel rebuilds: teardown p95 <= G + 3 s`,
      measured: s(many.par?.teardownP95Ms),
      met: (many.par?.teardownP95Ms ?? Infinity) <= G + 3000,
    },
    {
      target: 'trigger reaction p99 <= 250 ms',
      measured: `${result.trigger.reactionP99Ms} ms`,
      met: result.trigger.reactionP99Ms <= 250,
    },
    {
      target: `worker + trigger peak RSS <= 300 MB${result.oneProcess ? ' (one process)' : ''}`,
      measured: `${rss} MB`,
      met: rss <= 300,
    },
  ];
}

/** `7.2` CPU seconds, `-` when not measured. */
const cpu = (seconds: number | undefined) => (seconds === undefined ? '-' : `${Math.round(seconds * 100) / 100}`);

/**
 * Temporal Actions per group lifecycle, each policy apart: a provisioning's over its groups, the rounds' over their
 * samples (a group's teardown, and its return where the scenario has one), with the rounds' main types. Empty when
 * the run read no `action` counter.
 */
export function actionsPerLifecycleTable(result: BenchResult): string {
  const sum = (counts: Record<string, number> | undefined) =>
    counts && Object.values(counts).reduce((a, b) => a + b, 0);
  const per = (counts: Record<string, number> | undefined, n: number) => {
    const total = sum(counts);
    return total === undefined || n === 0 ? '-' : String(Math.round((10 * total) / n) / 10);
  };
  const mainTypes = (r: ScenarioResult | undefined) =>
    Object.entries(r?.actions ?? {})
      .slice(0, 3)
      .map(([type, n]) => `${type} ${Math.round((10 * n) / r!.samples.length) / 10}`)
      .join(', ') || '-';
  const rows = ids(result).flatMap((id) => {
    const { seq, par } = pair(result.scenarios, id);
    if (!seq?.actions && !par?.actions && !seq?.provisionActions && !par?.provisionActions) return [];
    const title = (seq ?? par)!.title;
    const both = (f: (r: ScenarioResult) => string) => [seq, par].map((r) => (r ? f(r) : '-')).join(' / ');
    return [
      `| ${title} | ${both((r) => per(r.provisionActions, r.groups))} | ${both((r) => per(r.actions, r.samples.length))} | ${mainTypes(par)} |`,
    ];
  });
  if (rows.length === 0) return '';
  return `| scenario | provisioning, per group S / P | rounds, per group lifecycle S / P | Parallel's main types, per lifecycle |
|---|---|---|---|
${rows.join('\n')}`;
}

/**
 * CPU per scenario: how busy the machine was, and which process of the stack used it. Temporal is one column, all of
 * its processes together (a cluster's are split in a table of their own), so the dev server and a cluster compare;
 * and that figure over the scenario's group lifecycles.
 */
function loadTable(result: BenchResult): string {
  const order = ['kube-apiserver', 'etcd', 'kube-controller-manager', 'kube-scheduler', 'kwok', 'pod-finisher'];
  const all = [...new Set(Object.values(result.load).flatMap((l) => Object.keys(l.cpuSeconds)))];
  // Temporal's processes as one column, where its first one was.
  const names = [...new Set(all.map((n) => (isTemporalProcess(n) ? 'temporal' : n)))].sort(
    (a, b) => (order.indexOf(a) + 1 || order.length + 1) - (order.indexOf(b) + 1 || order.length + 1),
  );
  const loaded = ids(result).filter((id) => result.load[id]);
  const title = (id: string) => result.scenarios.find((r) => r.id === id)?.title ?? id;
  const rows = loaded.map((id) => {
    const l = result.load[id]!;
    const cells = names.map((n) => cpu(n === 'temporal' ? temporalCpuSeconds(l) : l.cpuSeconds[n]));
    const perLifecycle = temporalCpuPerLifecycle(result, id);
    return `| ${title(id)} | ${l.seconds} s | ${l.machineBusyPercent} % | ${cells.join(' | ')} | ${perLifecycle === undefined ? '-' : `${perLifecycle.toFixed(3)} s`} |`;
  });
  const table = `| scenario | wall time | machine busy (${result.machine.cpus} cores) | ${names.join(' | ')} | temporal per group lifecycle |
|---|---|---|${names.map(() => '---|').join('')}---|
${rows.join('\n')}`;
  const own = all.filter((n) => isTemporalProcess(n) && n !== 'temporal');
  if (own.length === 0) return table;
  const split = loaded.map(
    (id) => `| ${title(id)} | ${own.map((n) => cpu(result.load[id]!.cpuSeconds[n])).join(' | ')} |`,
  );
  return `${table}

Temporal's processes, each with its descendants (PostgreSQL's backends, one per connection):

| scenario | ${own.join(' | ')} |
|---|${own.map(() => '---|').join('')}
${split.join('\n')}`;
}

/**
 * Each round of the scenarios whose rounds rebuild many groups at once (10 or more), teardown p50 / p95 per policy:
 * how far one round's p95 is from the next shows how much of a difference between runs is the machine.
 */
export function roundsTable(result: BenchResult): string | undefined {
  const rows = result.scenarios
    .filter((r) => r.groups >= 10 && !r.controller && !r.scale)
    .flatMap((r) => {
      const rounds = new Map<number, number[]>();
      for (const x of r.samples) rounds.set(x.roundStartedAt, [...(rounds.get(x.roundStartedAt) ?? []), x.teardownMs]);
      if (rounds.size < 2) return [];
      const cells = [...rounds.entries()]
        .sort(([a], [b]) => a - b)
        .map(([, times]) => `${s(percentile(times, 50))} / ${s(percentile(times, 95))}`);
      return [`| ${r.title} | ${r.policy} | ${cells.join(', ')} |`];
    });
  if (rows.length === 0) return undefined;
  return `Teardown p50 / p95 of each round, in the order they ran:

| scenario | policy | rounds |
|---|---|---|
${rows.join('\n')}`;
}

/**
 * This project's share of a Parallel teardown, split where Temporal records it: each column counts from the round's
 * deletions, p50 / p95 over the groups (a scale scenario's rounds of one group apart from its largest round).
 */
export function shareSplitTable(result: BenchResult): string | undefined {
  const at = (xs: GroupSample[], pick: (x: GroupSample) => number | undefined) =>
    p50p95(xs.flatMap((x) => pick(x) ?? []));
  const rows = result.scenarios
    .filter((r) => r.policy === 'Parallel' && !r.controller && r.kind === 'rebuild')
    .flatMap((r) => {
      const most = Math.max(...r.samples.map((x) => x.rebuiltAtOnce ?? 1));
      // At 10 groups a tenth is one: its largest round is a round of one group.
      const sets = r.scale
        ? [scaleSamples(r, 'one'), ...(most > 1 ? [scaleSamples(r, 'most')] : [])]
        : [r.samples.map((x) => ({ ...x, rebuiltAtOnce: r.groups }))];
      return sets.flatMap((xs) => {
        const split = xs.filter((x) => x.teardownStartedMs !== undefined);
        if (split.length === 0) return [];
        return [
          `| ${r.groups} x ${r.size} | ${split[0]?.rebuiltAtOnce ?? 1} | ${split.length} | ${at(split, (x) => x.leaderDeletedMs)} | ${at(split, (x) => x.teardownStartedMs)} | ${at(split, (x) => x.firstTaskStartedMs)} | ${at(split, (x) => x.workersTerminatingMs)} |`,
        ];
      });
    });
  if (rows.length === 0) return undefined;
  return [splitText(rows), shareLoadTable(result)].filter((x) => x !== undefined).join('\n\n');
}

function splitText(rows: string[]): string {
  return `This project's share of a Parallel teardown, split (p50 / p95, each counted from the round's deletions): the
API server answered the leader's delete; the trigger's start of the teardown reached Temporal (the history's first
event); a worker took its first workflow task; the workers were terminating (the bench's watch).

| groups x size | rebuilt at once | samples | leader delete answered | teardown run started | its first task taken | workers terminating |
|---|---|---|---|---|---|---|
${rows.join('\n')}`;
}

/**
 * The CPU while the share ran (each Parallel round's deletions -> every group's workers terminating), mean over the
 * rounds: whether the controller's processes had the CPU they wanted then, and who else had it.
 */
function shareLoadTable(result: BenchResult): string | undefined {
  // Only this project's Parallel rounds have them (run.ts).
  const rows = result.scenarios.filter((r) => r.shareLoads?.length);
  if (rows.length === 0) return undefined;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const names = [...new Set(rows.flatMap((r) => r.shareLoads!.flatMap((l) => Object.keys(l.cpuSeconds))))];
  const lines = rows.map((r) => {
    const loads = r.shareLoads!;
    const cpu = names.map((n) => mean(loads.map((l) => l.cpuSeconds[n] ?? 0)).toFixed(2));
    return `| ${r.title} | ${loads.length} | ${mean(loads.map((l) => l.seconds)).toFixed(1)} s | ${Math.round(mean(loads.map((l) => l.machineBusyPercent)))} % | ${cpu.join(' | ')} |`;
  });
  return `CPU during that share, mean over the rounds: from the round's deletions until every group had a worker
terminating, in CPU seconds per process (a window of w seconds offers ${result.machine.cpus} x w).

| scenario | rounds | window | machine busy (${result.machine.cpus} cores) | ${names.join(' | ')} |
|---|---|---|---|${names.map(() => '---').join('|')}|
${lines.join('\n')}`;
}

/**
 * Rolling updates: how long each policy took to roll every group onto a new template, and the fewest groups Ready
 * meanwhile against what maxUnavailable allows.
 */
export function rolloutTable(result: BenchResult): string | undefined {
  const rows = ids(result).flatMap((id) => {
    const { seq, par } = pair(result.scenarios, id);
    if (!seq?.rollout || !par?.rollout) return [];
    const durations = (r: ScenarioResult) => r.rollout!.rounds.map((x) => s(x.durationMs)).join(', ') || '-';
    const fewest = (r: ScenarioResult) => Math.min(...r.rollout!.rounds.map((x) => x.fewestReadyGroups));
    const mean = (r: ScenarioResult) =>
      r.rollout!.rounds.reduce((sum, x) => sum + x.durationMs, 0) / Math.max(1, r.rollout!.rounds.length);
    const ratio = mean(seq) > 0 ? (mean(par) / mean(seq)).toFixed(2) : '-';
    const { maxUnavailable, maxSurge } = seq.rollout;
    const kept = fewest(seq) >= seq.groups - maxUnavailable && fewest(par) >= par.groups - maxUnavailable;
    return [
      `| ${seq.title} | ${seq.groups} x ${seq.size} | ${maxUnavailable} / ${maxSurge} | ${durations(seq)} | ${durations(par)} | ${ratio} | ${fewest(seq)} / ${fewest(par)} (at least ${seq.groups - maxUnavailable}) | ${kept ? 'yes' : 'no'} |`,
    ];
  });
  if (rows.length === 0) return undefined;
  return `Rolling updates: a new image for leaders and workers, every group rolled onto it as the reconcile workflow
steers the leader StatefulSet. **Rollout**: the template change to every group Ready on the new template, with no old
pod and no surge group left. **Fewest groups Ready**: at any moment of the rollout, counting surge groups; a group is
Ready with all of its old pods or \`size\` new ones Ready.

| scenario | groups x size | maxUnavailable / maxSurge | Sequential rollout | Parallel rollout | ratio P/S | fewest groups Ready, Sequential / Parallel | within maxUnavailable |
|---|---|---|---|---|---|---|---|
${rows.join('\n')}`;
}

function processLayout(result: BenchResult): string {
  const run = (entry: string) => (result.compiled ? `node dist/${entry}.js` : `tsx src/${entry}.ts`);
  return result.oneProcess
    ? `Worker and trigger ran in one process (\`${run('main')}\`, the entry \`npm start\` runs).`
    : `Worker and trigger ran as two processes (\`${run('worker/main')}\`, \`${run('trigger/main')}\`), as the Deployments run them.`;
}

const ratioOf = (a: number | undefined, b: number | undefined) => (a && b ? (a / b).toFixed(2) : '-');

/** CPU seconds per group lifecycle: the processes' CPU over a scenario's rounds, over its samples. */
function cpuPerLifecycle(load: ScenarioLoad | undefined, names: string[], lifecycles: number): number | undefined {
  if (!load || lifecycles === 0) return undefined;
  const found = names.filter((n) => load.cpuSeconds[n] !== undefined);
  if (found.length === 0) return undefined;
  return found.reduce((sum, n) => sum + load.cpuSeconds[n]!, 0) / lifecycles;
}

/**
 * `--against upstream`: per scenario, upstream's controller beside this project's two policies, measured on the same
 * cluster in the same run (upstream after this project), and the CPU and memory each controller cost.
 */
export function upstreamTables(result: BenchResult): string | undefined {
  const up = result.upstream;
  if (!up) return undefined;
  const p = (r: ScenarioResult | undefined, which: 'teardown' | 'recovery') =>
    which === 'teardown'
      ? `${s(r?.teardownP50Ms)} / ${s(r?.teardownP95Ms)}`
      : `${s(r?.recoveryP50Ms)} / ${s(r?.recoveryP95Ms)}`;
  // Recovery where the scenario has one (rebuilds, rolling updates), else teardown.
  const measure = (r: ScenarioResult | undefined) => r?.recoveryP50Ms ?? r?.teardownP50Ms;
  const share = (r: ScenarioResult | undefined) =>
    r && r.samples.length
      ? `${s(
          percentile(
            r.samples.map((x) => x.workersTerminatingMs),
            50,
          ),
        )} / ${s(
          percentile(
            r.samples.map((x) => x.workersTerminatingMs),
            95,
          ),
        )}`
      : '-';
  const times = ids(result).flatMap((id) => {
    const { seq, par, upstream } = pair(result.scenarios, id);
    if (!upstream) return [];
    return [
      `| ${upstream.title} | ${upstream.groups} x ${upstream.size} | ${p(upstream, 'teardown')} | ${p(seq, 'teardown')} | ${p(par, 'teardown')} | ${p(upstream, 'recovery')} | ${p(seq, 'recovery')} | ${p(par, 'recovery')} | ${ratioOf(measure(par), measure(upstream))} | ${ratioOf(measure(seq), measure(upstream))} | ${share(upstream)} | ${share(seq)} | ${share(par)} |`,
    ];
  });
  const provisioning = ids(result).flatMap((id) => {
    const { seq, par, upstream } = pair(result.scenarios, id);
    if (upstream?.provisionMs === undefined) return [];
    return [
      `| ${upstream.title} | ${upstream.groups} x ${upstream.size} | ${s(upstream.provisionMs)} | ${s(seq?.provisionMs)} | ${s(par?.provisionMs)} | ${ratioOf(seq?.provisionMs, upstream.provisionMs)} / ${ratioOf(par?.provisionMs, upstream.provisionMs)} |`,
    ];
  });
  const phases = ids(result).flatMap((id) => {
    const { seq, par, upstream } = pair(result.scenarios, id);
    return [upstream, seq, par].flatMap((r) => {
      const ph = r?.provisionPhases;
      if (!r || !ph) return [];
      const spread = ({ p50, max }: Spread) => `${s(p50)} / ${s(max)}`;
      return [
        `| ${r.title} | ${r.controller ?? r.policy} | ${spread(ph.leaderSeenMs)} | ${spread(ph.workersAfterLeaderMs)} | ${spread(ph.readyAfterLastPodMs)} | ${formatPodCreates(r.provisionPodCreates)} |`,
      ];
    });
  });
  const ours = Object.keys(result.processes);
  const provisioningCpu = ids(result).flatMap((id) => {
    const { seq, par, upstream } = pair(result.scenarios, id);
    return [upstream, seq, par].flatMap((r) => {
      const l = r?.provisionLoad;
      if (!r || !l) return [];
      const controller = cpuPerLifecycle(l, r.controller === 'upstream' ? [UPSTREAM_PROCESS] : ours, 1);
      const stack = ['kube-apiserver', 'etcd', 'kube-controller-manager', 'admission'].map((n) => cpu(l.cpuSeconds[n]));
      return [
        `| ${r.title} | ${r.controller ?? r.policy} | ${l.seconds} s | ${l.machineBusyPercent} % | ${stack.join(' | ')} | ${cpu(controller)} | ${cpu(temporalCpuSeconds(l))} |`,
      ];
    });
  });
  const cost = ids(result).flatMap((id) => {
    const { seq, par, upstream } = pair(result.scenarios, id);
    if (!upstream) return [];
    const lifecycles = (seq?.samples.length ?? 0) + (par?.samples.length ?? 0);
    const own = cpuPerLifecycle(result.load[id], ours, lifecycles);
    const temporal = temporalCpuPerLifecycle(result, id);
    const theirs = cpuPerLifecycle(up.load[id], [UPSTREAM_PROCESS], upstream.samples.length);
    const total = own !== undefined && temporal !== undefined ? own + temporal : undefined;
    const c = (v: number | undefined) => (v === undefined ? '-' : `${v.toFixed(3)} s`);
    return [
      `| ${upstream.title} | ${c(theirs)} | ${c(own)} | ${c(temporal)} | ${c(total)} | ${ratioOf(total, theirs)} |`,
    ];
  });
  const rss = Object.values(result.processes).reduce((sum, x) => sum + x.peakRssMb, 0);
  const goals = upstreamTargets(result)
    .map((x) => `| ${x.target} | ${x.measured} | ${x.met === undefined ? '-' : x.met ? 'yes' : 'no'} |`)
    .join('\n');
  return `## Against upstream LeaderWorkerSet

Upstream LeaderWorkerSet ${up.version}'s controller, built from its module and run out of cluster with its own CRD
and webhooks (\`--against upstream\`), ran every scenario after this project's, on the same cluster and machine, one
controller at a time (its start, CRD swap included, took ${s(up.startMs)}). Upstream has no
\`podTerminationPolicy\`: its only behaviour is this project's Sequential. Times as above, from the same watch.
**Ratios** compare recovery p50 (teardown p50 where the scenario rebuilds nothing) with upstream's. **Leader deletion
-> workers terminating** is the controller's share: for upstream and Sequential the old leader's grace period and the
garbage collector's reaction, for Parallel this project's trigger, workflow start and delete.

| scenario | groups x size | upstream teardown p50 / p95 | Sequential teardown | Parallel teardown | upstream recovery p50 / p95 | Sequential recovery | Parallel recovery | Parallel / upstream | Sequential / upstream | leader deletion -> workers terminating p50 / p95, upstream | Sequential | Parallel |
|---|---|---|---|---|---|---|---|---|---|---|---|---|
${times.join('\n')}

Provisioning from nothing: each LeaderWorkerSet created alone, to its groups Ready.

| scenario | groups x size | upstream | Sequential | Parallel | ratio Sequential / upstream, Parallel / upstream |
|---|---|---|---|---|---|
${provisioning.join('\n')}
${
  phases.length
    ? `
Where each provisioning spent its time, from the pods' arrival in the bench's watch (p50 / max over the groups):
the leaders (the LWS controller, then the StatefulSet controller), a group's first worker after its leader (the
controller's reaction and its worker StatefulSet), and Ready after the group's last pod (KWOK here). **Pod creates**:
how many the API server took meanwhile, their mean latency as it timed them, and of that the admission webhooks'
(each controller's own pod webhook); the StatefulSet controller creates a set's pods in batches that each wait for
their slowest create.

| scenario | controller | LWS created -> leader seen | leader -> first worker seen | last pod seen -> Ready | pod creates |
|---|---|---|---|---|---|
${phases.join('\n')}
`
    : ''
}${
    provisioningCpu.length
      ? `
CPU while each provisioning ran (the LWS created -> its groups Ready), from \`/proc\`: how busy the machine was, and
the CPU seconds of the API server, etcd, the controller manager (the StatefulSet controller), this project's pod
webhook (\`admission\`; upstream's webhook is in its controller), the controller (worker + trigger, or upstream's) and
Temporal.

| scenario | controller | wall time | machine busy (${result.machine.cpus} cores) | kube-apiserver | etcd | kube-controller-manager | admission | controller | Temporal |
|---|---|---|---|---|---|---|---|---|---|
${provisioningCpu.join('\n')}
`
      : ''
  }
CPU seconds per group lifecycle (a group's teardown, and its return where the scenario has one), from \`/proc\` over
each scenario's rounds. This project's is worker and trigger; Temporal's is counted apart and in the total.

| scenario | upstream | worker + trigger | Temporal | worker + trigger + Temporal | total / upstream |
|---|---|---|---|---|---|
${cost.join('\n')}

Peak RSS over the whole run: upstream's controller ${up.process.peakRssMb} MB (${up.process.cpuSeconds} CPU s); this
project's ${Object.entries(result.processes)
    .map(([name, x]) => `${name} ${x.peakRssMb} MB`)
    .join(', ')} (${rss} MB together, Temporal not counted).

Issue 29's targets, measured in this run (reported, never asserted):

| target | measured | met |
|---|---|---|
${goals}`;
}

const p50p95 = (values: number[]) =>
  values.length ? `${s(percentile(values, 50))} / ${s(percentile(values, 95))}` : '-';

/** A scale row's samples of rounds that rebuilt one group, or of the round that rebuilt the most at once. */
function scaleSamples(r: ScenarioResult, which: 'one' | 'most') {
  const most = Math.max(...r.samples.map((x) => x.rebuiltAtOnce ?? 1));
  return r.samples.filter((x) => (which === 'one' ? x.rebuiltAtOnce === 1 : x.rebuiltAtOnce === most));
}

/** The six most frequent kinds of request, each divided by `per`: `list pods 5.2, get leaderworkersets 3.1`. */
export function topKinds(byKind: Record<string, number>, per: number): string {
  return Object.entries(byKind)
    .sort(([ka, a], [kb, b]) => b - a || ka.localeCompare(kb))
    .slice(0, 6)
    .map(([kind, n]) => `${kind} ${(n / per).toFixed(1)}`)
    .join(', ');
}

/**
 * How the cost grows with the groups standing (`--scale`): per scale scenario and controller, provisioning, the
 * controller's share and recovery with one group rebuilt and with a tenth at once, memory, API requests, history bytes.
 */
export function scaleTables(result: BenchResult): string | undefined {
  const rows = result.scenarios
    .filter((r) => r.scale)
    .sort((a, b) => a.groups - b.groups || Number(Boolean(a.controller)) - Number(Boolean(b.controller)));
  if (rows.length === 0) return undefined;
  const who = (r: ScenarioResult) => (r.controller === 'upstream' ? 'upstream' : r.policy);
  const times = rows.map((r) => {
    const one = scaleSamples(r, 'one');
    const most = scaleSamples(r, 'most');
    const share = (xs: typeof one) => p50p95(xs.map((x) => x.workersTerminatingMs));
    const recovery = (xs: typeof one) => p50p95(xs.map((x) => x.recoveryMs ?? 0));
    return `| ${r.groups} x ${r.size} | ${who(r)} | ${s(r.provisionMs)} | ${share(one)} | ${recovery(one)} | ${most[0]?.rebuiltAtOnce ?? '-'} | ${share(most)} | ${recovery(most)} |`;
  });
  const cost = rows.map((r) => {
    const f = r.scale!;
    const rss = Object.values(f.residentMb).reduce((sum, mb) => sum + mb, 0);
    const perLifecycle = r.samples.length ? (f.apiRequests.rounds / r.samples.length).toFixed(1) : '-';
    const bytes = (kind: string) => {
      const h = f.historyBytes?.[kind];
      return h?.runs ? `${Math.round(h.bytes / h.runs)} B` : '-';
    };
    return `| ${r.groups} x ${r.size} | ${who(r)} | ${Object.entries(f.residentMb)
      .map(([name, mb]) => `${name} ${mb}`)
      .join(
        ' + ',
      )} = ${rss} MB | ${(f.apiRequests.provisioning / r.groups).toFixed(1)} | ${perLifecycle} | ${bytes('provision')} | ${bytes('teardown')} | ${bytes('reconcile')} |`;
  });
  const kinds = rows
    .filter((r) => r.scale?.apiRequestsByKind)
    .map((r) => {
      const { provisioning, rounds } = r.scale!.apiRequestsByKind!;
      const lifecycles = r.samples.length;
      return `| ${r.groups} x ${r.size} | ${who(r)} | ${topKinds(provisioning, r.groups)} | ${lifecycles ? topKinds(rounds, lifecycles) : '-'} |`;
    });
  const tasks = rows.flatMap((r) =>
    Object.entries(r.scale?.workflowTasks ?? {})
      .sort(([a], [b]) => a.localeCompare(b))
      .map(
        ([kind, t]) =>
          `| ${r.groups} x ${r.size} | ${kind} | ${t.runs} | ${t.completed} | ${t.startToCloseTimedOut} | ${t.scheduleToStartTimedOut} | ${t.failed} |`,
      ),
  );
  const tasksTable = tasks.length
    ? `
How this project's workflow tasks ended, summed over each lifecycle's runs. A task **timed out running** (past its
workflow task timeout without a heartbeat) is run again, with the local activities it had not recorded; one
**timed out queued** waited on the worker's sticky queue past its timeout and went to the shared queue.

| groups x size | lifecycle | runs | completed | timed out running | timed out queued | failed |
|---|---|---|---|---|---|---|
${tasks.join('\n')}
`
    : '';
  const goals = scaleTargets(result)
    .map((x) => `| ${x.target} | ${x.measured} | ${x.met ? 'yes' : 'no'} |`)
    .join('\n');
  const kindsTable = kinds.length
    ? `
Where the requests go: the most frequent kinds (this project's by verb and resource, upstream's by method), per group
provisioned and per group lifecycle of the rounds.

| groups x size | controller | per group provisioned | per lifecycle |
|---|---|---|---|
${kinds.join('\n')}
`
    : '';
  const goalsTable = goals
    ? `
| target | measured | met |
|---|---|---|
${goals}
`
    : '';
  return `## How the cost grows with the groups standing

Scale scenarios (\`--scale\`): an LWS of N groups of 4 on KWOK, provisioned from nothing, then one group rebuilt
(its leader deleted) three times while the other N - 1 stand, then a tenth of the groups at once. This project under
Parallel, whose share is its own; upstream (its only behaviour is Sequential) where the run had \`--against upstream\`.
**Share** is leader deletion -> workers terminating, as above.

| groups x size | controller | provisioning | share, one rebuilt p50 / p95 | recovery, one rebuilt | rebuilt at once | share p50 / p95 | recovery p50 / p95 |
|---|---|---|---|---|---|---|---|
${times.join('\n')}

What it costs with every group standing. **RSS** is each process's resident memory after the rounds (Temporal not
counted). **API requests** are the controller's own client-side count (this project's
\`lws_kube_api_requests_total\`, upstream's \`rest_client_requests_total\`), per group provisioned and per group
lifecycle of the rounds (a teardown and its return). **History bytes** are per workflow run, as the server counts a
history's size (the reconcile's runs grow with the groups it lists).

| groups x size | controller | RSS (MB) | API requests per group provisioned | per lifecycle | history bytes: provision | teardown | reconcile |
|---|---|---|---|---|---|---|---|
${cost.join('\n')}
${kindsTable}${tasksTable}${goalsTable}`;
}

/** Issue 29's scale targets, from the scale scenarios this run had (reported, never asserted). */
export function scaleTargets(result: BenchResult): { target: string; measured: string; met: boolean }[] {
  const rows = result.scenarios.filter((r) => r.scale);
  const ours = rows.filter((r) => !r.controller).sort((a, b) => a.groups - b.groups);
  const out: { target: string; measured: string; met: boolean }[] = [];
  const shareP50 = (r: ScenarioResult) =>
    percentile(
      scaleSamples(r, 'one').map((x) => x.workersTerminatingMs),
      50,
    );
  const [smallest, largest] = [ours[0], ours[ours.length - 1]];
  if (smallest && largest && largest !== smallest && shareP50(smallest) > 0) {
    const ratio = shareP50(largest) / shareP50(smallest);
    out.push({
      target: `controller's share with ${largest.groups - 1} other groups standing / with ${smallest.groups - 1}, p50 <= 1.2`,
      measured: `${s(shareP50(largest))} / ${s(shareP50(smallest))} = ${ratio.toFixed(2)}`,
      met: ratio <= 1.2,
    });
  }
  const upstream = rows.find((r) => r.controller === 'upstream' && r.groups === largest?.groups);
  if (largest?.scale && upstream?.scale) {
    const sum = (r: ScenarioResult) => Object.values(r.scale!.residentMb).reduce((a, b) => a + b, 0);
    const ratio = sum(largest) / sum(upstream);
    out.push({
      target: `worker + trigger RSS / upstream's at ${largest.groups} groups <= 2`,
      measured: `${sum(largest)} / ${sum(upstream)} MB = ${ratio.toFixed(1)}`,
      met: ratio <= 2,
    });
  }
  return out;
}

/** Issue 29's targets against upstream, from the scenarios this run had; `met` undefined: only reported. */
export function upstreamTargets(result: BenchResult): { target: string; measured: string; met?: boolean }[] {
  const out: { target: string; measured: string; met?: boolean }[] = [];
  const recovery = (id: string, which: 'seq' | 'par') => {
    const rows = pair(result.scenarios, id);
    const ratio = rows[which]?.recoveryP50Ms && rows.upstream?.recoveryP50Ms;
    return ratio ? rows[which]!.recoveryP50Ms! / rows.upstream!.recoveryP50Ms! : undefined;
  };
  for (const [which, name, limit] of [
    ['par', 'Parallel', 0.55],
    ['seq', 'Sequential', 1.02],
  ] as const) {
    for (const id of ['rebuild-1', 'rebuild-10']) {
      const r = recovery(id, which);
      if (r === undefined) continue;
      out.push({ target: `${name} recovery / upstream's, ${id} <= ${limit}`, measured: r.toFixed(2), met: r <= limit });
    }
  }
  for (const id of ['rebuild-10', 'rebuild-50']) {
    const { seq, par, upstream } = pair(result.scenarios, id);
    if (!upstream?.provisionMs || !seq?.provisionMs || !par?.provisionMs) continue;
    const r = Math.max(seq.provisionMs, par.provisionMs) / upstream.provisionMs;
    out.push({
      target: `provisioning ${upstream.groups} groups, this project / upstream <= 1.0 (the slower policy)`,
      measured: r.toFixed(2),
      met: r <= 1,
    });
  }
  const many = pair(result.scenarios, 'rebuild-50').par;
  if (many?.samples.length) {
    const p95 = percentile(
      many.samples.map((x) => x.workersTerminatingMs),
      95,
    );
    out.push({
      target: `controller's share, ${many.groups} groups at once (leader deletion -> workers terminating), p95 <= 1 s`,
      measured: s(p95),
      met: p95 <= 1000,
    });
  }
  const up = result.upstream;
  if (up) {
    const ours = Object.values(result.processes).reduce((sum, x) => sum + x.peakRssMb, 0);
    out.push({
      target: `worker + trigger peak RSS / upstream's, at this run's largest scenario (the target is at 1,000 groups)`,
      measured: `${ours} / ${up.process.peakRssMb} MB = ${(ours / up.process.peakRssMb).toFixed(1)}`,
    });
  }
  return out;
}

/** The Temporal a run measured, as the report's first paragraph names it. */
function temporalLabel(result: BenchResult): string {
  const t = result.temporal;
  if (temporalTarget(result) === 'dev-server')
    return `Temporal CLI dev server ${t?.version ?? result.versions.temporalCli}`;
  return `Temporal server ${t?.version ?? result.versions.temporalServer} as a cluster (\`--temporal cluster\`: the four services and the Web UI server of \`npm run temporal:up\`, on ${t?.database ?? 'PostgreSQL'}${t && t.namespace !== 'default' ? `, namespace ${t.namespace}` : ''})`;
}

export function markdown(result: BenchResult, chartFile: string): string {
  const G = result.graceSeconds * 1000;
  const cluster = temporalTarget(result) === 'cluster';
  const actions = actionsPerLifecycleTable(result);
  const rows = ids(result).map((id) => {
    const { seq, par } = pair(result.scenarios, id);
    const ratio = seq && par ? (par.teardownP50Ms / seq.teardownP50Ms).toFixed(2) : '-';
    const rratio = seq?.recoveryP50Ms && par?.recoveryP50Ms ? (par.recoveryP50Ms / seq.recoveryP50Ms).toFixed(2) : '-';
    return `| ${seq?.title ?? id} | ${seq?.groups} x ${seq?.size} | ${seq?.samples.length ?? 0} | ${s(seq?.teardownP50Ms)} / ${s(seq?.teardownP95Ms)} | ${s(par?.teardownP50Ms)} / ${s(par?.teardownP95Ms)} | ${ratio} | ${s((par?.teardownP50Ms ?? G) - G)} | ${s(seq?.recoveryP50Ms)} / ${s(seq?.recoveryP95Ms)} | ${s(par?.recoveryP50Ms)} / ${s(par?.recoveryP95Ms)} | ${rratio} |`;
  });
  // The controller's own share of a Parallel teardown: from the leader's deletion to its workers' (the rest is G).
  const reactionRows = ids(result).flatMap((id) => {
    const { seq, par } = pair(result.scenarios, id);
    const times = (par?.samples ?? []).map((x) => x.workersTerminatingMs);
    if (!par || times.length === 0) return [];
    const leaders = par.samples.map((x) => x.newLeaders).filter((n): n is number => n !== undefined);
    const rebuiltOnce =
      leaders.length === 0 ? '-' : leaders.every((n) => n === 1) ? 'yes' : `no (up to ${Math.max(...leaders)})`;
    const reactions = [...(seq?.reactionsMs ?? []), ...par.reactionsMs];
    const reaction = reactions.length ? `${percentile(reactions, 50)} / ${percentile(reactions, 99)} ms` : '-';
    const answered = par.samples.map((x) => x.leaderDeletedMs).filter((n): n is number => n !== undefined);
    const lastAnswered = answered.length ? s(Math.max(...answered)) : '-';
    return [
      `| ${par.title} | ${reactions.length} | ${reaction} | ${lastAnswered} | ${s(percentile(times, 50))} / ${s(percentile(times, 95))} | ${rebuiltOnce} |`,
    ];
  });
  const floor = result.temporalStartFloor;
  const rounds = roundsTable(result);
  const shareSplit = shareSplitTable(result);
  const rollouts = rolloutTable(result);
  const upstream = upstreamTables(result);
  const scale = scaleTables(result);
  const t = targets(result);
  const v = result.versions;
  return `# Benchmarks

Measured by \`${result.command}\` on ${result.date.slice(0, 10)}: ${result.machine.cpus} cores (${result.machine.model}),
${result.machine.memoryGiB} GiB; Node ${v.node}, Temporal TypeScript SDK ${v.temporalSdk},
${temporalLabel(result)}, Kubernetes ${v.kubernetes} (kube-apiserver, kube-controller-manager, kube-scheduler), etcd ${v.etcd},
KWOK ${v.kwok}. Grace period G = ${result.graceSeconds} s${result.quick ? ' (quick mode: fewer rounds and groups)' : ''}; the run took
${(result.durationMs / 60000).toFixed(1)} min.

${
  result.together
    ? 'Both policies run side by side in each scenario (two LeaderWorkerSets in one namespace), their groups rebuilt at the same moment (`--together`): a scenario of N groups puts 2N on the machine at once.'
    : 'Both policies run side by side in each scenario (two LeaderWorkerSets in one namespace); each round rebuilds one policy\'s groups alone, then the other\'s (the order alternates by round), after the controller has finished every group workflow of the round before. So "N groups rebuilt at once" means N groups on the machine.'
} Times are taken
from a watch on the API server: **teardown** is leader deletion (or the scale-down / LWS delete call; in a rolling
update, the StatefulSet controller's deletion of the group's leader) to the last old pod of the group gone; **recovery**
is leader deletion to a new group of \`size\` Ready pods. The fake kubelet (KWOK,
and this project's pod finisher) removes a pod when its grace period ends, counted from when its watch shows the
deletion, as a kubelet does; so G is the physical floor of a teardown, and "overhead" is Parallel's teardown p50 above
it. Each group of each round is one sample.

| scenario | groups x size | samples | Sequential teardown p50 / p95 | Parallel teardown p50 / p95 | ratio P/S | Parallel overhead above G | Sequential recovery p50 / p95 | Parallel recovery p50 / p95 | recovery ratio |
|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}
${rounds ? `\n${rounds}\n` : ''}${rollouts ? `\n${rollouts}\n` : ''}
The controller's share. **Trigger reaction**: watch event to workflow started, every start about the scenario's two
LeaderWorkerSets (provisioning included). **Leader deletion -> workers terminating** (Parallel): the trigger's
reaction, the workflow start and the delete. **Last leader delete answered** (Parallel): how long the API server took to
answer the last of a round's leader deletes, which are sent at once; every group's times count from when the first
went out. **Each group rebuilt once**: every rebuilt group got exactly one new
leader.

| scenario | workflow starts | trigger reaction p50 / p99 | last leader delete answered | leader deletion -> workers terminating p50 / p95 | each group rebuilt once |
|---|---|---|---|---|---|
${reactionRows.join('\n')}
${shareSplit ? `\n${shareSplit}\n` : ''}
Trigger reaction over the whole run (${result.trigger.reactions} starts): p50 ${result.trigger.reactionP50Ms} ms,
p99 ${result.trigger.reactionP99Ms} ms.${
    result.oneProcess
      ? ` ${result.trigger.eagerStarts ?? 0} of the starts were eager: the server handed the new workflow's first task back with the start, to the worker in the same process.`
      : ''
  } The floor under it, the same Temporal ${cluster ? 'cluster' : 'dev server'} idle before the scenarios (no
worker, no cluster load): one start at a time takes ${floor.singleP50Ms} ms (p50); ${floor.burst} starts sent at once (twice
the largest scenario's groups) take ${floor.burstP50Ms} ms p50 and ${floor.burstP99Ms} ms p99 each.${
    floor.burstServerCpuMs !== undefined
      ? ` The server${cluster ? "'s processes" : ''} used ${floor.burstServerCpuMs} ms of CPU to answer that burst (${(floor.burstServerCpuMs / floor.burst).toFixed(1)} ms per start): on ${result.machine.cpus} cores with nothing else running, its last start cannot be answered sooner than ${Math.round(floor.burstServerCpuMs / result.machine.cpus)} ms after the first was sent.`
      : ''
  }

CPU while each scenario's rounds ran (from the first deletion until every group's samples were in), in CPU seconds
per process of the stack, from \`/proc\`. Everything runs on this one machine; a machine busy near 100 % means every
process, the controller's among them, waited for a CPU. **temporal** is all of Temporal's processes together;
**per group lifecycle** divides it by the scenario's samples of both policies (each one group's teardown, and its
return in a rebuild or rolling update).

${loadTable(result)}
${
  actions
    ? `
Temporal Actions (the server's own \`action\` counter, what Temporal Cloud bills) per group lifecycle, each policy
apart: from the start of its provisioning or of its rounds until the controller's workflows had closed after them,
the reconciles' signals and timers included.

${actions}
`
    : ''
}
${processLayout(result)}

| process | peak RSS | CPU time |
|---|---|---|
${Object.entries(result.processes)
  .map(([name, p]) => `| ${name} | ${p.peakRssMb} MB | ${p.cpuSeconds} s |`)
  .join('\n')}

| target | measured | met |
|---|---|---|
${t.map((x) => `| ${x.target} | ${x.measured} | ${x.met ? 'yes' : 'no'} |`).join('\n')}

One group rebuilt, first round: when the leader was gone, when the workers started terminating and were gone, and
when the new group was Ready.

![Sequential and Parallel group timelines](${chartFile})

${
  upstream
    ? `${upstream}

`
    : ''
}${
    scale
      ? `${scale}

`
      : ''
  }`;
}

/** Horizontal bars per policy for the first one-group rebuild: leader, workers, new group. */
export function timelineSvg(result: BenchResult): string {
  const { seq, par } = pair(result.scenarios, 'rebuild-1');
  const rows = [seq, par].filter((r): r is ScenarioResult => r !== undefined && r.samples.length > 0);
  const max = Math.max(...rows.map((r) => r.samples[0]!.recoveryMs ?? r.samples[0]!.teardownMs), 1);
  const width = 760;
  const left = 110;
  const scale = (ms: number) => left + (ms / max) * (width - left - 20);
  const bar = (y: number, from: number, to: number, color: string, label: string) =>
    `<rect x="${scale(from).toFixed(1)}" y="${y}" width="${Math.max(1, scale(to) - scale(from)).toFixed(1)}" height="14" fill="${color}"><title>${label}: ${(from / 1000).toFixed(2)}-${(to / 1000).toFixed(2)} s</title></rect>`;
  const parts: string[] = [];
  rows.forEach((r, i) => {
    const x = r.samples[0]!;
    const y = 30 + i * 70;
    parts.push(`<text x="10" y="${y + 26}" font-size="13">${r.policy}</text>`);
    parts.push(bar(y, 0, x.leaderGoneMs, '#d9534f', 'leader terminating'));
    parts.push(bar(y + 16, x.workersTerminatingMs, x.teardownMs, '#f0ad4e', 'workers terminating'));
    if (x.recoveryMs !== undefined)
      parts.push(bar(y + 32, x.teardownMs, x.recoveryMs, '#5cb85c', 'new group provisioning'));
  });
  const ticks: string[] = [];
  for (let t = 0; t <= max; t += result.graceSeconds * 1000) {
    ticks.push(
      `<line x1="${scale(t)}" y1="22" x2="${scale(t)}" y2="${30 + rows.length * 70}" stroke="#ccc"/><text x="${scale(t) - 8}" y="${44 + rows.length * 70}" font-size="11">${t / 1000}s</text>`,
    );
  }
  const legend = [
    ['#d9534f', 'leader terminating'],
    ['#f0ad4e', 'workers terminating'],
    ['#5cb85c', 'new group provisioning'],
  ]
    .map(
      ([c, l], i) =>
        `<rect x="${left + i * 190}" y="4" width="12" height="12" fill="${c}"/><text x="${left + i * 190 + 16}" y="14" font-size="12">${l}</text>`,
    )
    .join('');
  const height = 56 + rows.length * 70;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
${legend}
${ticks.join('\n')}
${parts.join('\n')}
</svg>
`;
}

/** `a / b` of each pair, `-` where either is missing or zero. */
function ratios(a: (number | undefined)[], b: (number | undefined)[]): string {
  const each = a.map((x, i) => (x && b[i] ? (b[i]! / x).toFixed(2) : '-'));
  return each.every((r) => r === '-') ? '-' : each.join(' / ');
}

/**
 * Two runs side by side, as a Markdown table: the first (the dev server, say) against the second (the cluster), with
 * the second's figures over the first's. The trigger's reaction, Parallel teardown and recovery at 10 and 50 groups,
 * and Temporal's own CPU per group lifecycle in every scenario both ran. Columns are named by the Temporal each
 * result says it measured.
 */
export function compareTemporal(first: BenchResult, second: BenchResult): string {
  const runs = [first, second];
  const target = (r: BenchResult) => (temporalTarget(r) === 'cluster' ? 'cluster' : 'dev server');
  // Two runs on the same Temporal (before and after a change, say) are told apart by their order.
  const same = target(first) === target(second);
  const label = (r: BenchResult) => (same ? `${target(r)} (${r === first ? 1 : 2})` : target(r));
  const rows: string[] = [];
  const row = (what: string, values: (r: BenchResult) => (number | undefined)[], show: (v: number) => string) => {
    const [a, b] = runs.map(values) as [(number | undefined)[], (number | undefined)[]];
    const cell = (v: (number | undefined)[]) =>
      v.every((x) => x === undefined) ? '-' : v.map((x) => (x === undefined ? '-' : show(x))).join(' / ');
    rows.push(`| ${what} | ${cell(a)} | ${cell(b)} | ${ratios(a, b)} |`);
  };
  const ms = (v: number) => `${v} ms`;
  row('trigger reaction p50 / p99', (r) => [r.trigger.reactionP50Ms, r.trigger.reactionP99Ms], ms);
  const parallel = (r: BenchResult, id: string) => pair(r.scenarios, id).par;
  for (const id of ['rebuild-10', 'rebuild-50']) {
    const groups = [...new Set(runs.map((r) => parallel(r, id)?.groups).filter((g) => g !== undefined))];
    const name = groups.length === 0 ? id : `${groups.join(' vs ')} groups`;
    row(
      `Parallel teardown p50 / p95, ${name}`,
      (r) => [parallel(r, id)?.teardownP50Ms, parallel(r, id)?.teardownP95Ms],
      s,
    );
    row(
      `Parallel recovery p50 / p95, ${name}`,
      (r) => [parallel(r, id)?.recoveryP50Ms, parallel(r, id)?.recoveryP95Ms],
      s,
    );
  }
  for (const id of ids(first).filter((id) => ids(second).includes(id))) {
    const title = first.scenarios.find((r) => r.id === id)!.title;
    row(
      `Temporal CPU per group lifecycle, ${title}`,
      (r) => [temporalCpuPerLifecycle(r, id)],
      (v) => `${v.toFixed(3)} s`,
    );
  }
  const source = (r: BenchResult) =>
    `${label(r)}: \`${r.command}\` on ${r.date.slice(0, 10)}, ${r.temporal?.version ?? r.versions.temporalCli} on ${r.temporal?.database ?? 'SQLite'}`;
  const caveats = [
    first.graceSeconds !== second.graceSeconds &&
      `the grace periods differ (${first.graceSeconds} s and ${second.graceSeconds} s)`,
    first.quick !== second.quick && 'one run is quick mode (fewer rounds and groups)',
  ].filter((c): c is string => typeof c === 'string');
  return `${runs.map((r) => `- ${source(r)}`).join('\n')}
${caveats.length ? `\nNot like for like: ${caveats.join('; ')}.\n` : ''}
| | ${label(first)} | ${label(second)} | ${label(second)} / ${label(first)} |
|---|---|---|---|
${rows.join('\n')}
`;
}
