import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import {
  actionsPerLifecycleTable,
  compareTemporal,
  markdown,
  rolloutTable,
  roundsTable,
  upstreamTables,
} from '../../tools/bench/report.js';
import {
  temporalCpuPerLifecycle,
  temporalCpuSeconds,
  type BenchResult,
  type GroupSample,
  type ScenarioResult,
} from '../../tools/bench/results.js';

/** A scenario whose samples are `[round start, teardown ms]`. */
function scenario(groups: number, policy: ScenarioResult['policy'], samples: [number, number][]): ScenarioResult {
  return {
    id: `rebuild-${groups}`,
    title: `${groups} groups rebuilt at once`,
    kind: 'rebuild',
    groups,
    size: 4,
    policy,
    samples: samples.map(([roundStartedAt, teardownMs]): GroupSample => ({
      roundStartedAt,
      teardownMs,
      leaderGoneMs: 0,
      workersTerminatingMs: 0,
    })),
    teardownP50Ms: 0,
    teardownP95Ms: 0,
    reactionsMs: [],
  };
}

const withScenarios = (scenarios: ScenarioResult[]) => ({ scenarios }) as BenchResult;

/** One test per case: the table's data rows as expected, or no table at all (`undefined`). */
function rendersRows(
  cases: [what: string, scenarios: ScenarioResult[], rows: string[] | undefined][],
  render: (result: BenchResult) => string | undefined,
): void {
  for (const [what, scenarios, rows] of cases) {
    it(what, () => {
      const table = render(withScenarios(scenarios));
      if (rows === undefined) return assert.equal(table, undefined);
      assert.deepEqual(
        table?.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| scenario')),
        rows,
      );
    });
  }
}

describe('bench report: teardown by round', () => {
  const cases: [string, ScenarioResult[], string[] | undefined][] = [
    [
      'two rounds of 10 groups, samples out of order: one row, rounds in the order they ran',
      [
        scenario(10, 'Parallel', [
          ...Array.from({ length: 10 }, (_, i): [number, number] => [2_000, 12_000 + i * 100]),
          ...Array.from({ length: 10 }, (_, i): [number, number] => [1_000, 11_000 + i * 100]),
        ]),
      ],
      ['| 10 groups rebuilt at once | Parallel | 11.40 s / 11.90 s, 12.40 s / 12.90 s |'],
    ],
    ['one round only: nothing to compare', [scenario(10, 'Sequential', [[1, 20_000]])], undefined],
    [
      'rounds of fewer than 10 groups are left out',
      [
        scenario(1, 'Parallel', [
          [1, 10_000],
          [2, 10_100],
        ]),
      ],
      undefined,
    ],
    [
      'one row per policy',
      [
        scenario(50, 'Sequential', [
          [1, 22_000],
          [2, 23_000],
        ]),
        scenario(50, 'Parallel', [
          [3, 14_000],
          [4, 15_000],
        ]),
      ],
      [
        '| 50 groups rebuilt at once | Sequential | 22.00 s / 22.00 s, 23.00 s / 23.00 s |',
        '| 50 groups rebuilt at once | Parallel | 14.00 s / 14.00 s, 15.00 s / 15.00 s |',
      ],
    ],
  ];
  rendersRows(cases, roundsTable);
});

/** A rolling update of 4 groups with these limits; each round is `[duration ms, fewest groups Ready]`. */
function rollout(
  policy: ScenarioResult['policy'],
  limits: { maxUnavailable: number; maxSurge: number },
  rounds: [number, number][],
): ScenarioResult {
  return {
    ...scenario(4, policy, []),
    id: `rollout-${limits.maxSurge}`,
    title: `rolling update of 4 groups (surge ${limits.maxSurge})`,
    kind: 'rolling-update',
    rollout: {
      ...limits,
      rounds: rounds.map(([durationMs, fewestReadyGroups]) => ({ durationMs, fewestReadyGroups })),
    },
  };
}

describe('bench report: rolling updates', () => {
  const one = { maxUnavailable: 1, maxSurge: 0 };
  const surge = { maxUnavailable: 0, maxSurge: 1 };
  const cases: [string, ScenarioResult[], string[] | undefined][] = [
    [
      'both policies within maxUnavailable: their times, the ratio and the fewest groups Ready',
      [rollout('Sequential', one, [[84_000, 3]]), rollout('Parallel', one, [[44_000, 3]])],
      [
        '| rolling update of 4 groups (surge 0) | 4 x 4 | 1 / 0 | 84.00 s | 44.00 s | 0.52 | 3 / 3 (at least 3) | yes |',
      ],
    ],
    [
      'a policy that let one group too many go down is reported, not hidden',
      [rollout('Sequential', surge, [[90_000, 4]]), rollout('Parallel', surge, [[50_000, 3]])],
      ['| rolling update of 4 groups (surge 1) | 4 x 4 | 0 / 1 | 90.00 s | 50.00 s | 0.56 | 4 / 3 (at least 4) | no |'],
    ],
    [
      'two rounds: each listed, the ratio of their means, the fewest of both',
      [
        rollout('Sequential', one, [
          [80_000, 3],
          [100_000, 3],
        ]),
        rollout('Parallel', one, [
          [40_000, 3],
          [50_000, 2],
        ]),
      ],
      [
        '| rolling update of 4 groups (surge 0) | 4 x 4 | 1 / 0 | 80.00 s, 100.00 s | 40.00 s, 50.00 s | 0.50 | 3 / 2 (at least 3) | no |',
      ],
    ],
    ['no rolling update in the run: no table', [scenario(10, 'Parallel', [[1, 10_000]])], undefined],
    ['one policy only: no row', [rollout('Parallel', one, [[44_000, 3]])], undefined],
  ];
  rendersRows(cases, rolloutTable);
});

/** A rebuild of `groups` groups, one round: `samples` samples, these Parallel teardown and recovery percentiles. */
function rebuild(
  groups: number,
  policy: ScenarioResult['policy'],
  [teardownP50Ms, teardownP95Ms, recoveryP50Ms, recoveryP95Ms]: number[],
): ScenarioResult {
  return {
    ...scenario(
      groups,
      policy,
      Array.from({ length: groups }, (): [number, number] => [1, teardownP50Ms!]),
    ),
    teardownP50Ms: teardownP50Ms!,
    teardownP95Ms: teardownP95Ms!,
    recoveryP50Ms,
    recoveryP95Ms,
  };
}

/** A whole run on one Temporal: rebuilds of 10 and 50 groups, with Temporal's CPU in each (by process). */
function run(
  target: 'dev-server' | 'cluster' | undefined,
  reaction: [number, number],
  parallel: Record<'rebuild-10' | 'rebuild-50', number[]>,
  temporalCpu: Record<'rebuild-10' | 'rebuild-50', Record<string, number>>,
): BenchResult {
  const cluster = target === 'cluster';
  return {
    command: `npm run bench -- --grace 10${cluster ? ' --temporal cluster' : ''}`,
    date: '2026-12-02T10:00:00.000Z',
    machine: { cpus: 2, model: 'test', memoryGiB: 24 },
    versions: { node: 'v20', temporalSdk: '1.24.0', temporalCli: '1.9.1', temporalServer: '1.32.0' },
    graceSeconds: 10,
    quick: false,
    compiled: true,
    oneProcess: false,
    together: false,
    ...(target && {
      temporal: {
        target,
        namespace: 'default',
        version: cluster ? '1.32.0' : '1.9.1',
        database: cluster ? 'PostgreSQL 15.14' : 'SQLite',
        processes: cluster ? ['temporal-history', 'temporal-postgres'] : ['temporal'],
      },
    }),
    durationMs: 60_000,
    scenarios: (['rebuild-10', 'rebuild-50'] as const).flatMap((id) => {
      const groups = id === 'rebuild-10' ? 10 : 50;
      return [
        { ...rebuild(groups, 'Sequential', [20_000, 21_000, 22_000, 23_000]), id },
        { ...rebuild(groups, 'Parallel', parallel[id]), id },
      ];
    }),
    trigger: { reactions: 120, reactionP50Ms: reaction[0], reactionP99Ms: reaction[1] },
    temporalStartFloor: { singleP50Ms: 5, burst: 100, burstP50Ms: 50, burstP99Ms: 90 },
    processes: { worker: { peakRssMb: 200, cpuSeconds: 10 }, trigger: { peakRssMb: 80, cpuSeconds: 2 } },
    load: Object.fromEntries(
      Object.entries(temporalCpu).map(([id, cpu]) => [
        id,
        { seconds: 30, machineBusyPercent: 40, cpuSeconds: { 'kube-apiserver': 9, ...cpu, worker: 8 } },
      ]),
    ),
  };
}

const dev = run(
  'dev-server',
  [80, 700],
  { 'rebuild-10': [10_700, 11_100, 12_200, 13_100], 'rebuild-50': [14_900, 17_000, 20_800, 23_000] },
  { 'rebuild-10': { temporal: 8 }, 'rebuild-50': { temporal: 26 } },
);
const cluster = run(
  'cluster',
  [120, 1_400],
  { 'rebuild-10': [10_500, 11_000, 12_000, 12_600], 'rebuild-50': [13_000, 15_300, 18_000, 20_700] },
  {
    'rebuild-10': { 'temporal-history': 6.5, 'temporal-postgres': 5.5 },
    'rebuild-50': { 'temporal-history': 30.25, 'temporal-postgres': 19.75 },
  },
);

describe("bench report: Temporal's CPU, all of its processes together", () => {
  it('sums the dev server alone, or every process of the cluster; none measured: undefined', () => {
    assert.equal(temporalCpuSeconds(dev.load['rebuild-10']!), 8);
    assert.equal(temporalCpuSeconds(cluster.load['rebuild-50']!), 50);
    assert.equal(temporalCpuSeconds({ seconds: 1, machineBusyPercent: 1, cpuSeconds: { worker: 3 } }), undefined);
  });

  it("per group lifecycle: over both policies' samples of the scenario", () => {
    assert.equal(temporalCpuPerLifecycle(dev, 'rebuild-10'), 8 / 20);
    assert.equal(temporalCpuPerLifecycle(cluster, 'rebuild-50'), 50 / 100);
    assert.equal(temporalCpuPerLifecycle(cluster, 'rebuild-1'), undefined);
  });

  it("per group lifecycle with --against upstream: upstream's samples are not Temporal's lifecycles", () => {
    const upstream = { ...scenario(10, 'Sequential', [[0, 20_000]]), controller: 'upstream' as const };
    const withUpstream = { ...dev, scenarios: [...dev.scenarios, upstream] };
    assert.equal(temporalCpuPerLifecycle(withUpstream, 'rebuild-10'), 8 / 20);
  });

  it("the report's CPU table has one Temporal column, and the cluster's processes apart", () => {
    const md = markdown(cluster, 'chart.svg');
    assert.match(md, /\| kube-apiserver \| temporal \| worker \| temporal per group lifecycle \|/);
    assert.match(md, /\| 10 groups rebuilt at once \| 30 s \| 40 % \| 9 \| 12 \| 8 \| 0\.600 s \|/);
    assert.match(
      md,
      /\| scenario \| temporal-history \| temporal-postgres \|\n\|---\|---\|---\|\n\| 10 groups rebuilt at once \| 6\.5 \| 5\.5 \|/,
    );
    assert.match(md, /Temporal server 1\.32\.0 as a cluster .* on PostgreSQL 15\.14\)/s);
    const devMd = markdown(dev, 'chart.svg');
    assert.match(devMd, /Temporal CLI dev server 1\.9\.1, Kubernetes/);
    assert.doesNotMatch(devMd, /Temporal's processes, each/);
  });
});

describe('bench report: the dev server and the cluster side by side', () => {
  const rows = (table: string) => table.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| |'));

  it('reaction, Parallel teardown and recovery at 10 and 50 groups, Temporal CPU per lifecycle, and the ratios', () => {
    const table = compareTemporal(dev, cluster);
    assert.match(table, /^\| \| dev server \| cluster \| cluster \/ dev server \|$/m);
    assert.deepEqual(rows(table), [
      '| trigger reaction p50 / p99 | 80 ms / 700 ms | 120 ms / 1400 ms | 1.50 / 2.00 |',
      '| Parallel teardown p50 / p95, 10 groups | 10.70 s / 11.10 s | 10.50 s / 11.00 s | 0.98 / 0.99 |',
      '| Parallel recovery p50 / p95, 10 groups | 12.20 s / 13.10 s | 12.00 s / 12.60 s | 0.98 / 0.96 |',
      '| Parallel teardown p50 / p95, 50 groups | 14.90 s / 17.00 s | 13.00 s / 15.30 s | 0.87 / 0.90 |',
      '| Parallel recovery p50 / p95, 50 groups | 20.80 s / 23.00 s | 18.00 s / 20.70 s | 0.87 / 0.90 |',
      '| Temporal CPU per group lifecycle, 10 groups rebuilt at once | 0.400 s | 0.600 s | 1.50 |',
      '| Temporal CPU per group lifecycle, 50 groups rebuilt at once | 0.260 s | 0.500 s | 1.92 |',
    ]);
    assert.match(
      table,
      /- cluster: `npm run bench -- --grace 10 --temporal cluster` on 2026-12-02, 1\.32\.0 on PostgreSQL/,
    );
    assert.doesNotMatch(table, /Not like for like/);
  });

  it('a result from before --temporal is the dev server; a scenario one run lacks is a dash', () => {
    const old = {
      ...run(
        undefined,
        [80, 700],
        { 'rebuild-10': [1, 2, 3, 4], 'rebuild-50': [1, 2, 3, 4] },
        {
          'rebuild-10': { temporal: 8 },
          'rebuild-50': { temporal: 26 },
        },
      ),
    };
    old.scenarios = old.scenarios.filter((r) => r.id === 'rebuild-10');
    const table = compareTemporal(old, cluster);
    assert.match(table, /^\| \| dev server \| cluster \|/m);
    assert.ok(rows(table).includes('| Parallel teardown p50 / p95, 50 groups | - | 13.00 s / 15.30 s | - |'));
    assert.ok(!rows(table).some((r) => r.includes('per group lifecycle, 50 groups')));
  });

  it('says when the runs are not like for like, and tells two runs on one Temporal apart', () => {
    const table = compareTemporal(dev, { ...dev, graceSeconds: 5, quick: true });
    assert.match(table, /Not like for like: the grace periods differ \(10 s and 5 s\); one run is quick mode/);
    assert.match(table, /^\| \| dev server \(1\) \| dev server \(2\) \|/m);
  });
});

describe('bench report: where each provisioning from nothing spent its time, beside upstream', () => {
  const phases = (leader: number, workers: number, ready: number) => ({
    leaderSeenMs: { p50: leader, max: leader + 100 },
    workersAfterLeaderMs: { p50: workers, max: workers + 100 },
    readyAfterLastPodMs: { p50: ready, max: ready + 100 },
  });
  const row = (policy: ScenarioResult['policy'], controller?: 'upstream', ph = phases(400, 1100, 200)) => ({
    ...scenario(10, policy, [[0, 20_000]]),
    ...(controller && { controller }),
    provisionMs: 2000,
    provisionPhases: ph,
  });
  const result = {
    scenarios: [
      row('Sequential'),
      row('Parallel'),
      {
        ...row('Sequential', 'upstream', phases(420, 360, 230)),
        provisionPodCreates: { count: 40, meanMs: 12.5, webhookMsPerCreate: 3.1 },
      },
    ],
    processes: {},
    load: {},
    upstream: { version: '0.9.0', startMs: 4000, process: { peakRssMb: 60, cpuSeconds: 2 }, load: {} },
  } as unknown as BenchResult;

  it('one row per controller, p50 / max of each phase', () => {
    const md = upstreamTables(result)!;
    assert.match(md, /\| scenario \| controller \| LWS created -> leader seen \| leader -> first worker seen \|/);
    for (const line of [
      '| 10 groups rebuilt at once | upstream | 0.42 s / 0.52 s | 0.36 s / 0.46 s | 0.23 s / 0.33 s | 40 x 12.5 ms (webhooks 3.1 ms) |',
      '| 10 groups rebuilt at once | Sequential | 0.40 s / 0.50 s | 1.10 s / 1.20 s | 0.20 s / 0.30 s | - |',
      '| 10 groups rebuilt at once | Parallel | 0.40 s / 0.50 s | 1.10 s / 1.20 s | 0.20 s / 0.30 s | - |',
    ]) {
      assert.ok(md.includes(line), line);
    }
  });

  it("the CPU while each provisioning ran: the stack's processes, the controller's own and Temporal's", () => {
    const load = (busy: number, cpuSeconds: Record<string, number>) => ({
      seconds: 2,
      machineBusyPercent: busy,
      cpuSeconds: { 'kube-apiserver': 1.2, etcd: 0.3, 'kube-controller-manager': 0.4, admission: 0.2, ...cpuSeconds },
    });
    const withLoad = {
      ...result,
      machine: { cpus: 2, model: 'test', memoryGiB: 24 },
      processes: { worker: { peakRssMb: 200, cpuSeconds: 9 }, trigger: { peakRssMb: 90, cpuSeconds: 3 } },
      scenarios: [
        { ...row('Parallel'), provisionLoad: load(95, { worker: 0.9, trigger: 0.25, temporal: 0.6, bench: 0.1 }) },
        { ...row('Sequential', 'upstream'), provisionLoad: load(40, { 'lws-upstream': 0.15 }) },
      ],
    } as unknown as BenchResult;
    const md = upstreamTables(withLoad)!;
    assert.match(md, /\| controller \| wall time \| machine busy \(2 cores\) \| kube-apiserver \| etcd \|/);
    for (const line of [
      '| 10 groups rebuilt at once | upstream | 2 s | 40 % | 1.2 | 0.3 | 0.4 | 0.2 | 0.15 | - |',
      '| 10 groups rebuilt at once | Parallel | 2 s | 95 % | 1.2 | 0.3 | 0.4 | 0.2 | 1.15 | 0.6 |',
    ]) {
      assert.ok(md.includes(line), line);
    }
    assert.doesNotMatch(upstreamTables(result)!, /CPU while each provisioning ran/, 'none measured: no table');
  });

  it('results from before the phases were measured: no such table', () => {
    const before = {
      ...result,
      scenarios: result.scenarios.map(({ provisionPhases: _, ...r }) => r),
    } as BenchResult;
    assert.doesNotMatch(upstreamTables(before)!, /leader -> first worker seen/);
  });
});

describe('bench report: Temporal Actions per group lifecycle', () => {
  const withActions = (
    policy: ScenarioResult['policy'],
    provisionActions?: Record<string, number>,
    actions?: Record<string, number>,
  ): ScenarioResult => ({
    ...scenario(2, policy, [
      [0, 10_000],
      [0, 10_000],
    ]),
    ...(provisionActions && { provisionActions }),
    ...(actions && { actions }),
  });
  rendersRows(
    [
      [
        "each policy's provisioning over its groups, its rounds over their samples, Parallel's main types per lifecycle",
        [
          withActions('Sequential', { a: 20, b: 3 }, { a: 60, c: 24 }),
          withActions('Parallel', { a: 19 }, { command_StartTimer: 30, grpc_Signal: 20, a: 10, z: 4 }),
        ],
        ['| 2 groups rebuilt at once | 11.5 / 9.5 | 42 / 32 | command_StartTimer 15, grpc_Signal 10, a 5 |'],
      ],
      [
        'the rounds of --together count for neither policy',
        [withActions('Sequential', { a: 4 }), withActions('Parallel', { a: 4 })],
        ['| 2 groups rebuilt at once | 2 / 2 | - / - | - |'],
      ],
      ['a run that read no action counter: no table', [withActions('Sequential'), withActions('Parallel')], []],
    ],
    (result) => actionsPerLifecycleTable(result),
  );
});
