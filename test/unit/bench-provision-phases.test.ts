import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { formatPhases, provisionPhases, type SeenPod } from '../../tools/bench/provision-phases.js';

const pod = (groupIndex: number, leader: boolean, seenAt: number, readyAt?: number): SeenPod => ({
  groupIndex,
  leader,
  seenAt,
  ...(readyAt !== undefined && { readyAt }),
});

describe('bench: where a provisioning from nothing spent its time', () => {
  const created = 1000;
  const cases: [string, SeenPod[], ReturnType<typeof provisionPhases>][] = [
    [
      'one group of 3: leader seen, first worker after it, Ready after the last pod',
      [pod(0, true, 1300, 1900), pod(0, false, 1700, 1950), pod(0, false, 1800, 2000)],
      {
        leaderSeenMs: { p50: 300, max: 300 },
        workersAfterLeaderMs: { p50: 400, max: 400 },
        readyAfterLastPodMs: { p50: 200, max: 200 },
      },
    ],
    [
      'two groups: p50 and max over them',
      [pod(0, true, 1100, 1500), pod(0, false, 1300, 1500), pod(1, true, 1200, 2200), pod(1, false, 2000, 2100)],
      {
        leaderSeenMs: { p50: 100, max: 200 },
        workersAfterLeaderMs: { p50: 200, max: 800 },
        readyAfterLastPodMs: { p50: 200, max: 200 },
      },
    ],
    [
      'a group with a pod not Ready yet is left out',
      [pod(0, true, 1100, 1500), pod(0, false, 1300, 1500), pod(1, true, 1200), pod(1, false, 2000, 2100)],
      {
        leaderSeenMs: { p50: 100, max: 100 },
        workersAfterLeaderMs: { p50: 200, max: 200 },
        readyAfterLastPodMs: { p50: 200, max: 200 },
      },
    ],
    [
      'size 1: no worker phase',
      [pod(0, true, 1100, 1400)],
      {
        leaderSeenMs: { p50: 100, max: 100 },
        workersAfterLeaderMs: { p50: 0, max: 0 },
        readyAfterLastPodMs: { p50: 300, max: 300 },
      },
    ],
    ['workers seen without their leader: nothing to say', [pod(0, false, 1300, 1500)], undefined],
    ['no pods', [], undefined],
  ];
  for (const [what, pods, expected] of cases) {
    it(what, () => assert.deepEqual(provisionPhases(pods, created), expected));
  }

  it('formats p50 and max of each phase', () => {
    const phases = provisionPhases([pod(0, true, 1300, 1900), pod(0, false, 1700, 2000)], created)!;
    assert.equal(
      formatPhases(phases),
      'leaders 0.30 s (max 0.30 s), workers +0.40 s (max 0.40 s), Ready +0.30 s (max 0.30 s)',
    );
  });
});
