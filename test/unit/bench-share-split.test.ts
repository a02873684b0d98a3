import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { google, temporal } from '@temporalio/proto';
import { shareSplitTable } from '../../tools/bench/report.js';
import type { BenchResult, GroupSample, ScenarioResult } from '../../tools/bench/results.js';
import { teardownStartOf } from '../../tools/bench/teardown-starts.js';

describe('bench: when a teardown run started and took its first task, from its history', () => {
  const { EventType } = temporal.api.enums.v1;
  const event = (eventType: number, ms: number) => ({
    eventType,
    eventTime: google.protobuf.Timestamp.fromObject({ seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 + 999 }),
  });
  const cases: [string, temporal.api.history.v1.IHistoryEvent[], ReturnType<typeof teardownStartOf>][] = [
    [
      'started, scheduled, taken: the first and the third, to the millisecond',
      [
        event(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, 1_700_000_000_120),
        event(EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, 1_700_000_000_120),
        event(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED, 1_700_000_000_345),
      ],
      { startedAt: 1_700_000_000_120, firstTaskStartedAt: 1_700_000_000_345 },
    ],
    [
      'a first task that timed out: the first taken counts',
      [
        event(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, 1_000),
        event(EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, 1_000),
        event(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED, 1_500),
        event(EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT, 3_500),
        event(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED, 3_600),
      ],
      { startedAt: 1_000, firstTaskStartedAt: 1_500 },
    ],
    [
      'no task taken yet: nothing',
      [
        event(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, 1_000),
        event(EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, 1_000),
      ],
      undefined,
    ],
    ['an empty page: nothing', [], undefined],
  ];
  for (const [what, events, expected] of cases) {
    it(what, () => assert.deepEqual(teardownStartOf(events), expected));
  }
});

/** A Parallel rebuild whose samples are `[rebuilt at once, delete answered, run started, first task, terminating]`. */
function parallel(groups: number, samples: number[][], extra: Partial<ScenarioResult> = {}): ScenarioResult {
  return {
    id: `rebuild-${groups}`,
    title: `${groups} groups rebuilt at once`,
    kind: 'rebuild',
    groups,
    size: 4,
    policy: 'Parallel',
    samples: samples.map(
      ([rebuiltAtOnce, leaderDeletedMs, teardownStartedMs, firstTaskStartedMs, workersTerminatingMs]): GroupSample => ({
        roundStartedAt: 1,
        teardownMs: 10_000,
        leaderGoneMs: 0,
        ...(extra.scale && { rebuiltAtOnce }),
        ...(leaderDeletedMs !== undefined && { leaderDeletedMs }),
        ...(teardownStartedMs !== undefined && { teardownStartedMs }),
        ...(firstTaskStartedMs !== undefined && { firstTaskStartedMs }),
        workersTerminatingMs: workersTerminatingMs ?? 0,
      }),
    ),
    teardownP50Ms: 0,
    teardownP95Ms: 0,
    reactionsMs: [],
    ...extra,
  };
}

describe("bench report: this project's share of a Parallel teardown, split", () => {
  const rowsOf = (scenarios: ScenarioResult[]) =>
    shareSplitTable({ scenarios } as BenchResult)
      ?.split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| groups'));
  const scale = { figures: {} } as const;
  const cases: [string, ScenarioResult[], string[] | undefined][] = [
    [
      'a rebuild of 2 groups: each column its own p50 / p95',
      [
        parallel(2, [
          [2, 100, 300, 350, 600],
          [2, 120, 500, 900, 1_400],
        ]),
      ],
      ['| 2 x 4 | 2 | 2 | 0.10 s / 0.12 s | 0.30 s / 0.50 s | 0.35 s / 0.90 s | 0.60 s / 1.40 s |'],
    ],
    [
      'a scale scenario: its rounds of one group apart from its largest',
      [
        parallel(
          100,
          [
            [1, 10, 40, 40, 80],
            [1, 10, 50, 60, 90],
            [10, 30, 200, 300, 700],
            [10, 40, 400, 600, 1_000],
          ],
          { id: 'scale-100', scale: scale.figures as ScenarioResult['scale'] },
        ),
      ],
      [
        '| 100 x 4 | 1 | 2 | 0.01 s / 0.01 s | 0.04 s / 0.05 s | 0.04 s / 0.06 s | 0.08 s / 0.09 s |',
        '| 100 x 4 | 10 | 2 | 0.03 s / 0.04 s | 0.20 s / 0.40 s | 0.30 s / 0.60 s | 0.70 s / 1.00 s |',
      ],
    ],
    [
      'a scale scenario whose tenth is one group: one row, not the same row twice',
      [
        parallel(
          10,
          [
            [1, 10, 40, 40, 80],
            [1, 10, 50, 60, 90],
          ],
          { id: 'scale-10', scale: scale.figures as ScenarioResult['scale'] },
        ),
      ],
      ['| 10 x 4 | 1 | 2 | 0.01 s / 0.01 s | 0.04 s / 0.05 s | 0.04 s / 0.06 s | 0.08 s / 0.09 s |'],
    ],
    [
      'samples without a history (the run was not found) are left out of the split',
      [
        parallel(2, [
          [2, 100, 300, 350, 600],
          [2, 100],
        ]),
      ],
      ['| 2 x 4 | 2 | 1 | 0.10 s / 0.10 s | 0.30 s / 0.30 s | 0.35 s / 0.35 s | 0.60 s / 0.60 s |'],
    ],
    [
      'Sequential, upstream and scale-downs have no row: no table',
      [
        { ...parallel(2, [[2, 100, 300, 350, 600]]), policy: 'Sequential' },
        { ...parallel(2, [[2, 100, 300, 350, 600]]), controller: 'upstream' },
        { ...parallel(2, [[2, 100, 300, 350, 600]]), kind: 'scale-down' },
      ],
      undefined,
    ],
  ];
  for (const [what, scenarios, rows] of cases) {
    it(what, () => assert.deepEqual(rowsOf(scenarios), rows));
  }
});

describe('bench report: the CPU during the share', () => {
  const load = (seconds: number, busy: number, cpuSeconds: Record<string, number>) => ({
    seconds,
    machineBusyPercent: busy,
    cpuSeconds,
  });
  const tableOf = (scenarios: ScenarioResult[]) => {
    const text = shareSplitTable({ scenarios, machine: { cpus: 2, model: 'x', memoryGiB: 1 } } as BenchResult) ?? '';
    const at = text.indexOf('CPU during that share');
    if (at < 0) return undefined;
    return text
      .slice(at)
      .split('\n')
      .filter((l) => l.startsWith('| '));
  };

  it('the mean of the rounds, each process a column, in the order first seen', () =>
    assert.deepEqual(
      tableOf([
        parallel(2, [[2, 100, 300, 350, 600]], {
          shareLoads: [
            load(2, 100, { 'kube-apiserver': 1.5, worker: 0.5 }),
            load(3, 90, { 'kube-apiserver': 2.5, worker: 0.3, temporal: 0.4 }),
          ],
        }),
      ]),
      [
        '| scenario | rounds | window | machine busy (2 cores) | kube-apiserver | worker | temporal |',
        '| 2 groups rebuilt at once | 2 | 2.5 s | 95 % | 2.00 | 0.40 | 0.20 |',
      ],
    ));

  it('no rounds measured: no table', () => assert.equal(tableOf([parallel(2, [[2, 100, 300, 350, 600]])]), undefined));
});
