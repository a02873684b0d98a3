import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { roundsTable } from '../../src/bench/report.js';
import type { BenchResult, GroupSample, ScenarioResult } from '../../src/bench/results.js';

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
  for (const [what, scenarios, rows] of cases) {
    it(what, () => {
      const table = roundsTable(withScenarios(scenarios));
      if (rows === undefined) return assert.equal(table, undefined);
      assert.deepEqual(
        table?.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| scenario')),
        rows,
      );
    });
  }
});
