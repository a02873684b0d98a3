import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { waitHeartbeatIntervalMs } from '../../src/model/crash-recovery.js';

describe('model/crash-recovery', () => {
  // [what, the activity's heartbeat timeout (ms), how often its wait beats (ms)]
  const cases: [string, number | undefined, number][] = [
    ['outside an activity', undefined, 1_000],
    ['a wait work waits on (2.5 s)', 2_500, 1_000],
    ['a wait only its report waits on (30 s)', 30_000, 10_000],
    ['a timeout shorter than 3 s', 600, 1_000],
  ];
  for (const [what, timeout, interval] of cases) {
    it(`waitHeartbeatIntervalMs: ${what}: every ${interval} ms`, () =>
      assert.equal(waitHeartbeatIntervalMs(timeout), interval));
  }
});
