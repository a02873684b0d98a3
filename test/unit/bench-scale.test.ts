import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { scaleTables, scaleTargets } from '../../tools/bench/report.js';
import type { BenchResult, GroupSample, ScenarioResult } from '../../tools/bench/results.js';
import { roundGroups, scaleScenarios } from '../../tools/bench/run.js';
import { temporal } from '@temporalio/proto';
import type { WorkflowTaskCounts } from '../../tools/bench/results.js';
import {
  countWorkflowTasks,
  metricBy,
  metricsPortOf,
  noWorkflowTasks,
  requestsSince,
  totalOf,
} from '../../tools/bench/scale-probes.js';

describe('bench scale scenarios: which groups each round rebuilds', () => {
  const [ten, hundred] = scaleScenarios(false);
  const cases: [string, number, number[]][] = [
    ['round 1 of 10 groups: group 0 alone', 1, [0]],
    ['round 2: the next group', 2, [1]],
    ['round 3: the next', 3, [2]],
    ['round 4 (a tenth of 10): one more, the next', 4, [3]],
  ];
  for (const [what, round, groups] of cases) {
    it(what, () => assert.deepEqual(roundGroups(ten!, round), groups));
  }
  it('a tenth of 100 at once: the 10 groups after the three rebuilt alone', () => {
    assert.deepEqual(roundGroups(hundred!, 4), [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });
  it('wraps around when a scenario asks for more groups than are left', () => {
    const small = { ...ten!, groups: 3, rebuiltPerRound: [2, 2] };
    assert.deepEqual(roundGroups(small, 2), [2, 0]);
  });
  it('without rebuiltPerRound, every group in every round', () => {
    const { rebuiltPerRound: _, ...all } = ten!;
    assert.deepEqual(roundGroups(all, 3), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
  it('10, 100 and 1,000 groups of 4, Parallel only; quick: 4 and 8', () => {
    assert.deepEqual(
      scaleScenarios(false).map((s) => [s.id, s.groups, s.size, s.rebuiltPerRound, s.policies]),
      [
        ['scale-10', 10, 4, [1, 1, 1, 1], ['Parallel']],
        ['scale-100', 100, 4, [1, 1, 1, 10], ['Parallel']],
        ['scale-1000', 1000, 4, [1, 1, 1, 100], ['Parallel']],
      ],
    );
    assert.deepEqual(
      scaleScenarios(true).map((s) => s.groups),
      [4, 8],
    );
  });
});

describe('bench scale probes: Prometheus text', () => {
  const text = [
    '# HELP lws_kube_api_requests_total Requests',
    '# TYPE lws_kube_api_requests_total counter',
    'lws_kube_api_requests_total{component="worker",verb="get",resource="pods",code="200"} 12',
    'lws_kube_api_requests_total{component="worker",verb="delete",resource="pods",code="200"} 3',
    'lws_kube_api_requests_total_other 100',
    'rest_client_requests_total{code="200",host="127.0.0.1:6443",method="GET"} 5',
    'rest_client_requests_total 2',
  ].join('\n');
  it('sums one counter by the labels asked for, and nothing of a longer name', () => {
    const ours = metricBy(text, 'lws_kube_api_requests_total', ['verb', 'resource']);
    assert.deepEqual(ours, { 'get pods': 12, 'delete pods': 3 });
    assert.equal(totalOf(ours), 15);
    assert.deepEqual(metricBy(text, 'rest_client_requests_total', ['method']), { GET: 5, '?': 2 });
    assert.deepEqual(metricBy(text, 'absent_total', ['verb']), {});
  });
  it('the requests between two scrapes, kind by kind', () => {
    assert.deepEqual(
      requestsSince({ 'get pods': 12, 'list pods': 4 }, { 'get pods': 20, 'list pods': 4, 'create pods': 2 }),
      {
        'get pods': 8,
        'create pods': 2,
      },
    );
  });
  it('reads the metrics port a process logged, in JSON or in the human format', () => {
    assert.equal(metricsPortOf(['x', '{"component":"worker","msg":"metrics server listening","port":41234}']), 41234);
    assert.equal(metricsPortOf(['[trigger] metrics server listening port=9465 paths="/metrics /healthz"']), 9465);
    assert.throws(() => metricsPortOf(['nothing']), /did not log its metrics port/);
  });
});

/** A scale row: `[rebuilt at once, workers terminating ms, recovery ms]` per sample. */
function scaleRow(
  groups: number,
  controller: 'ours' | 'upstream',
  samples: [number, number, number][],
  rss: number,
): ScenarioResult {
  return {
    id: `scale-${groups}`,
    title: `${groups} groups standing`,
    kind: 'rebuild',
    groups,
    size: 4,
    policy: controller === 'upstream' ? 'Sequential' : 'Parallel',
    ...(controller === 'upstream' && { controller: 'upstream' as const }),
    provisionMs: groups * 100,
    samples: samples.map(([rebuiltAtOnce, workersTerminatingMs, recoveryMs]): GroupSample => ({
      roundStartedAt: 0,
      rebuiltAtOnce,
      teardownMs: recoveryMs - 100,
      leaderGoneMs: 0,
      workersTerminatingMs,
      recoveryMs,
    })),
    teardownP50Ms: 0,
    teardownP95Ms: 0,
    reactionsMs: [],
    scale: {
      residentMb: controller === 'upstream' ? { 'lws-upstream': rss } : { worker: rss - 50, trigger: 50 },
      apiRequests: { provisioning: groups * 6, rounds: samples.length * 20 },
      ...(controller === 'ours' && {
        apiRequestsByKind: {
          provisioning: { 'list pods': groups * 4, 'get leaderworkersets': groups * 2 },
          rounds: { 'delete pods': samples.length * 20 },
        },
      }),
      ...(controller === 'ours' && {
        historyBytes: { provision: { runs: groups, bytes: groups * 5000 }, teardown: { runs: 2, bytes: 25000 } },
        workflowTasks: {
          teardown: { runs: 2, completed: 10, startToCloseTimedOut: 0, scheduleToStartTimedOut: 1, failed: 0 },
          provision: {
            runs: groups,
            completed: groups * 3,
            startToCloseTimedOut: groups / 10,
            scheduleToStartTimedOut: 0,
            failed: 1,
          },
        },
      }),
    },
  };
}

describe('bench report: how the cost grows with the groups standing', () => {
  const result = {
    scenarios: [
      scaleRow(
        1000,
        'ours',
        [
          [1, 300, 10_500],
          [1, 200, 10_400],
          [1, 250, 10_450],
          [100, 900, 12_000],
        ],
        400,
      ),
      scaleRow(
        10,
        'ours',
        [
          [1, 100, 10_300],
          [1, 120, 10_310],
          [1, 110, 10_305],
          [1, 130, 10_320],
        ],
        250,
      ),
      scaleRow(
        1000,
        'upstream',
        [
          [1, 10_100, 20_500],
          [1, 10_100, 20_500],
          [1, 10_100, 20_500],
        ],
        100,
      ),
    ],
  } as BenchResult;

  it('one row per size and controller, smallest first; the share and recovery of one group and of the largest round', () => {
    const rows = scaleTables(result)!
      .split('\n')
      .filter((l) => /^\| \d/.test(l));
    assert.deepEqual(rows.slice(0, 3), [
      '| 10 x 4 | Parallel | 1.00 s | 0.11 s / 0.13 s | 10.30 s / 10.32 s | 1 | 0.11 s / 0.13 s | 10.30 s / 10.32 s |',
      '| 1000 x 4 | Parallel | 100.00 s | 0.25 s / 0.30 s | 10.45 s / 10.50 s | 100 | 0.90 s / 0.90 s | 12.00 s / 12.00 s |',
      '| 1000 x 4 | upstream | 100.00 s | 10.10 s / 10.10 s | 20.50 s / 20.50 s | 1 | 10.10 s / 10.10 s | 20.50 s / 20.50 s |',
    ]);
    assert.deepEqual(rows.slice(3, 6), [
      '| 10 x 4 | Parallel | worker 200 + trigger 50 = 250 MB | 6.0 | 20.0 | 5000 B | 12500 B | - |',
      '| 1000 x 4 | Parallel | worker 350 + trigger 50 = 400 MB | 6.0 | 20.0 | 5000 B | 12500 B | - |',
      '| 1000 x 4 | upstream | lws-upstream 100 = 100 MB | 6.0 | 20.0 | - | - | - |',
    ]);
  });

  it('where the requests go: the kinds per group provisioned and per lifecycle, for the rows that have them', () => {
    const rows = scaleTables(result)!
      .split('\n')
      .filter((l) => /^\| \d/.test(l));
    assert.deepEqual(rows.slice(6, 8), [
      '| 10 x 4 | Parallel | list pods 4.0, get leaderworkersets 2.0 | delete pods 20.0 |',
      '| 1000 x 4 | Parallel | list pods 4.0, get leaderworkersets 2.0 | delete pods 20.0 |',
    ]);
  });

  it('how the workflow tasks ended: per size and lifecycle, lifecycles by name', () => {
    const rows = scaleTables(result)!
      .split('\n')
      .filter((l) => /^\| \d/.test(l));
    assert.deepEqual(rows.slice(8), [
      '| 10 x 4 | provision | 10 | 30 | 1 | 0 | 1 |',
      '| 10 x 4 | teardown | 2 | 10 | 0 | 1 | 0 |',
      '| 1000 x 4 | provision | 1000 | 3000 | 100 | 0 | 1 |',
      '| 1000 x 4 | teardown | 2 | 10 | 0 | 1 | 0 |',
    ]);
  });

  it('the targets: the share at the largest size over the smallest, and RSS against upstream at the largest', () => {
    assert.deepEqual(scaleTargets(result), [
      {
        target: "controller's share with 999 other groups standing / with 9, p50 <= 1.2",
        measured: '0.25 s / 0.11 s = 2.27',
        met: false,
      },
      { target: "worker + trigger RSS / upstream's at 1000 groups <= 2", measured: '400 / 100 MB = 4.0', met: false },
    ]);
  });

  it('no scale scenario: no table', () => {
    assert.equal(scaleTables({ scenarios: [] as ScenarioResult[] } as BenchResult), undefined);
  });
});

describe('bench scale: how a history says its workflow tasks ended', () => {
  const { EventType, TimeoutType } = temporal.api.enums.v1;
  const timedOut = (timeoutType: number) => ({
    eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
    workflowTaskTimedOutEventAttributes: { timeoutType },
  });
  const cases: [string, temporal.api.history.v1.IHistoryEvent[], Partial<WorkflowTaskCounts>][] = [
    ['an empty page: nothing', [], {}],
    [
      'completed tasks, and the other events not counted',
      [
        { eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED },
        { eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED },
        { eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED },
        { eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED },
      ],
      { completed: 2 },
    ],
    [
      'a timeout after the task started, and one on the sticky queue',
      [timedOut(TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE), timedOut(TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START)],
      { startToCloseTimedOut: 1, scheduleToStartTimedOut: 1 },
    ],
    ['a failed task', [{ eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED }], { failed: 1 }],
  ];
  for (const [what, events, expected] of cases) {
    it(what, () => {
      const counts = noWorkflowTasks();
      countWorkflowTasks(events, counts);
      assert.deepEqual(counts, { ...noWorkflowTasks(), ...expected });
    });
  }
  it('adds each page to the counts it is given', () => {
    const counts = noWorkflowTasks();
    countWorkflowTasks([{ eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED }], counts);
    countWorkflowTasks([{ eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED }], counts);
    assert.deepEqual(counts, { ...noWorkflowTasks(), completed: 1, failed: 1 });
  });
});
