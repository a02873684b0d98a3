import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import {
  applySpecDefaults,
  isValidIntOrPercent,
  leaderStatefulSetMaxUnavailable,
  parsePercent,
  planLeaderRollout,
  rollingUpdateReplicas,
  scaleIntOrPercent,
  type GroupState,
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

describe('model/rollout: planLeaderRollout (upstream rollingUpdateParameters)', () => {
  /** Groups by index: o old and Ready, x old and not Ready, n new and Ready, u new and not Ready, . none. */
  const groupsOf = (letters: string): GroupState[] =>
    [...letters].flatMap((c, groupIndex) =>
      c === '.'
        ? []
        : [
            {
              groupIndex,
              ready: c === 'o' || c === 'n',
              updated: c === 'n' || c === 'u',
              terminating: false,
              formed: true,
            },
          ],
    );
  type Sts = { replicas: number; partition: number; revision: 'old' | 'new'; lwsReplicas?: number } | undefined;
  // [case, replicas, maxUnavailable, maxSurge, user partition, leader StatefulSet, groups, [replicas, partition]]
  const rows: Array<[string, number, IntOrString, IntOrString, number, Sts, string, [number, number]]> = [
    ['no leader StatefulSet yet', 3, 1, 0, 0, undefined, '', [3, 0]],
    ['steady: nothing to do', 4, 1, 0, 0, { replicas: 4, partition: 0, revision: 'new' }, 'nnnn', [4, 0]],
    [
      'new template, maxSurge 4, maxUnavailable 1: 7 (upstream e2e)',
      4,
      1,
      4,
      0,
      { replicas: 4, partition: 0, revision: 'old' },
      'oooo',
      [7, 4],
    ],
    [
      'new template, maxSurge 1, maxUnavailable 0: 5',
      4,
      0,
      1,
      0,
      { replicas: 4, partition: 0, revision: 'old' },
      'oooo',
      [5, 4],
    ],
    [
      'new template, no surge: the partition to the top',
      2,
      1,
      0,
      0,
      { replicas: 2, partition: 0, revision: 'old' },
      'oo',
      [2, 2],
    ],
    [
      'new template while scaling up: scale first',
      4,
      1,
      1,
      0,
      { replicas: 2, partition: 0, revision: 'old' },
      'oo',
      [4, 2],
    ],
    ['surge 1: the surge group starting', 4, 0, 1, 0, { replicas: 5, partition: 4, revision: 'new' }, 'oooou', [5, 4]],
    [
      'surge 1: the surge group Ready, the top old group goes',
      4,
      0,
      1,
      0,
      { replicas: 5, partition: 4, revision: 'new' },
      'oooon',
      [5, 3],
    ],
    [
      'surge 1: that group replaced, not Ready yet',
      4,
      0,
      1,
      0,
      { replicas: 5, partition: 3, revision: 'new' },
      'ooxun',
      [5, 3],
    ],
    [
      'surge 1: it is Ready, the next old group goes',
      4,
      0,
      1,
      0,
      { replicas: 5, partition: 3, revision: 'new' },
      'ooonn',
      [5, 2],
    ],
    [
      'surge 1: all new and Ready, the surge group goes',
      4,
      0,
      1,
      0,
      { replicas: 5, partition: 0, revision: 'new' },
      'nnnnn',
      [4, 0],
    ],
    [
      'surge 4: new surge groups starting, three old ones go at once',
      4,
      1,
      4,
      0,
      { replicas: 7, partition: 4, revision: 'new' },
      'oooouuu',
      [7, 3],
    ],
    [
      'surge 4: two groups left unready, within maxUnavailable 1 + 1 surge',
      4,
      1,
      4,
      0,
      { replicas: 7, partition: 0, revision: 'new' },
      'nnuunnn',
      [5, 0],
    ],
    [
      'old groups not Ready: the surge group first (#567)',
      2,
      0,
      1,
      0,
      { replicas: 3, partition: 2, revision: 'new' },
      'xxu',
      [3, 2],
    ],
    [
      'the surge group Ready: an old group not Ready goes, though none is Ready (#567)',
      2,
      0,
      1,
      0,
      { replicas: 3, partition: 2, revision: 'new' },
      'xxn',
      [3, 1],
    ],
    [
      'maxSurge 0, maxUnavailable 1: one group at a time',
      3,
      1,
      0,
      0,
      { replicas: 3, partition: 3, revision: 'new' },
      'ooo',
      [3, 2],
    ],
    [
      'maxSurge 0: a replaced group not Ready holds the next one',
      3,
      1,
      0,
      0,
      { replicas: 3, partition: 2, revision: 'new' },
      'oou',
      [3, 2],
    ],
    [
      'a user partition: groups below it keep their template',
      4,
      0,
      1,
      2,
      { replicas: 5, partition: 2, revision: 'new' },
      'oonnn',
      [4, 2],
    ],
    [
      'scale down without a template change',
      2,
      1,
      0,
      0,
      { replicas: 4, partition: 0, revision: 'new', lwsReplicas: 4 },
      'nnnn',
      [2, 0],
    ],
    [
      'scale up without a template change',
      4,
      1,
      0,
      0,
      { replicas: 2, partition: 0, revision: 'new', lwsReplicas: 2 },
      'nn',
      [4, 0],
    ],
    [
      'replicas changed mid-rollout',
      3,
      0,
      1,
      0,
      { replicas: 5, partition: 4, revision: 'new', lwsReplicas: 4 },
      'oooou',
      [4, 4],
    ],
    [
      'a missing group counts as not Ready',
      4,
      0,
      1,
      0,
      { replicas: 5, partition: 3, revision: 'new' },
      'ooo.n',
      [5, 3],
    ],
  ];
  for (const [name, replicas, mu, ms, partition, sts, letters, [wantReplicas, wantPartition]] of rows) {
    it(`${name} (${letters || 'none'})`, () => {
      const spec = applySpecDefaults({
        replicas,
        rolloutStrategy: { rollingUpdateConfiguration: { maxUnavailable: mu, maxSurge: ms, partition } },
        leaderWorkerTemplate: { workerTemplate: {} },
      });
      const state = sts && { ...sts, revision: sts.revision === 'new' ? 'rev-new' : 'rev-old' };
      const plan = planLeaderRollout(spec, groupsOf(letters), state, 'rev-new');
      assert.deepEqual([plan.replicas, plan.partition], [wantReplicas, wantPartition]);
      assert.equal(plan.rolling, wantReplicas !== replicas || wantPartition !== partition);
    });
  }

  it('rollingUpdateReplicas: upstream calculateRollingUpdateReplicas', () => {
    const spec = applySpecDefaults({
      replicas: 4,
      rolloutStrategy: { rollingUpdateConfiguration: { maxUnavailable: 1, maxSurge: 4 } },
      leaderWorkerTemplate: { workerTemplate: {} },
    });
    assert.deepEqual(
      [0, 1, 2, 3, 4].map((unready) => rollingUpdateReplicas(spec, unready)),
      [4, 4, 5, 6, 7],
    );
  });
});
