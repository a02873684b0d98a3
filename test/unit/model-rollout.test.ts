import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import {
  applySpecDefaults,
  isValidIntOrPercent,
  isZeroIntOrPercent,
  leaderStatefulSetMaxUnavailable,
  parsePercent,
  scaleIntOrPercent,
  type IntOrString,
} from '../../src/model/index.js';

describe('model/rollout', () => {
  const validity: Array<[unknown, boolean]> = [
    [0, true],
    [5, true],
    [-1, false],
    [1.5, false],
    ['0%', true],
    ['25%', true],
    ['100%', true],
    ['050%', true],
    ['101%', false],
    ['25', false],
    ['%', false],
    ['-5%', false],
    [null, false],
  ];
  for (const [value, ok] of validity) {
    it(`${JSON.stringify(value)} is ${ok ? 'valid' : 'invalid'}`, () => assert.equal(isValidIntOrPercent(value), ok));
  }

  it('parses percentages', () => {
    assert.equal(parsePercent('25%'), 25);
    assert.equal(parsePercent('x'), undefined);
  });

  const zero: Array<[IntOrString, boolean]> = [
    [0, true],
    ['0%', true],
    ['000%', true],
    [1, false],
    ['1%', false],
  ];
  for (const [value, isZero] of zero) {
    it(`${JSON.stringify(value)} is ${isZero ? '' : 'not '}zero for any replica count`, () =>
      assert.equal(isZeroIntOrPercent(value), isZero));
  }

  // [value, total, roundUp, expected]
  const scaled: Array<[IntOrString, number, boolean, number]> = [
    [3, 10, false, 3],
    ['25%', 10, false, 2],
    ['25%', 10, true, 3],
    ['100%', 7, false, 7],
    ['10%', 3, false, 0],
    ['10%', 3, true, 1],
  ];
  for (const [value, total, up, expected] of scaled) {
    it(`scales ${JSON.stringify(value)} of ${total} rounding ${up ? 'up' : 'down'} to ${expected}`, () =>
      assert.equal(scaleIntOrPercent(value, total, up), expected));
  }

  it('throws on invalid values', () => {
    assert.throws(() => scaleIntOrPercent('abc', 3, false), /invalid percentage/);
    assert.throws(() => scaleIntOrPercent(-1, 3, false), /invalid count/);
  });

  const leaderMax: Array<[number, IntOrString, IntOrString, number]> = [
    [4, 1, 0, 1],
    [4, 2, 1, 3],
    [4, '10%', 0, 1], // rounds to 0, but the update must progress
    [2, 0, '100%', 2],
    [2, 1, 5, 3], // surge capped at replicas
    [0, 1, 0, 1],
  ];
  for (const [replicas, mu, ms, expected] of leaderMax) {
    it(`leader StatefulSet maxUnavailable for ${replicas} replicas, ${mu}/${ms}: ${expected}`, () => {
      const spec = applySpecDefaults({
        replicas,
        rolloutStrategy: { rollingUpdateConfiguration: { maxUnavailable: mu, maxSurge: ms } },
        leaderWorkerTemplate: { workerTemplate: {} },
      });
      assert.equal(leaderStatefulSetMaxUnavailable(spec), expected);
    });
  }
});
