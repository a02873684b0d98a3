import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { rolloutTable, roundsTable } from '../../src/bench/report.js';
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
