// The backoff between recreations of one group (model/recreate-backoff.ts): table-driven.
import assert from 'node:assert/strict';
import {
  backoffUntil,
  DEFAULT_GROUP_RESTART_BACKOFF,
  judgeBackoff,
  ordinal,
  recreationsOf,
  withRecreation,
  type GroupRestartBackoff,
  type Recreation,
} from '../../src/model/index.js';

const T0 = '2026-12-06T10:00:00.000Z';
const plus = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000).toISOString();

describe('model/recreate-backoff', () => {
  describe('judgeBackoff', () => {
    const cases: {
      name: string;
      last?: Recreation;
      now: string;
      backoff?: GroupRestartBackoff;
      streak: number;
      delaySeconds: number;
    }[] = [
      { name: 'first recreation of the group: at once', now: T0, streak: 1, delaySeconds: 0 },
      {
        name: 'second in a row: initial interval',
        last: { at: T0, streak: 1 },
        now: plus(30),
        streak: 2,
        delaySeconds: 10,
      },
      { name: 'third: doubled', last: { at: T0, streak: 2 }, now: plus(30), streak: 3, delaySeconds: 20 },
      { name: 'sixth: 160 s', last: { at: T0, streak: 5 }, now: plus(30), streak: 6, delaySeconds: 160 },
      { name: 'seventh: capped at 300 s', last: { at: T0, streak: 6 }, now: plus(30), streak: 7, delaySeconds: 300 },
      {
        name: 'a long streak stays capped',
        last: { at: T0, streak: 5000 },
        now: plus(30),
        streak: 5001,
        delaySeconds: 300,
      },
      {
        name: 'just under resetAfterSeconds: still in a row',
        last: { at: T0, streak: 3 },
        now: plus(599),
        streak: 4,
        delaySeconds: 40,
      },
      {
        name: 'resetAfterSeconds without a recreation: at once again',
        last: { at: T0, streak: 6 },
        now: plus(600),
        streak: 1,
        delaySeconds: 0,
      },
      {
        name: 'a planned recreation still ahead counts from its planned time',
        last: { at: plus(300), streak: 7 },
        now: plus(310),
        streak: 8,
        delaySeconds: 300,
      },
      {
        name: 'own settings',
        last: { at: T0, streak: 2 },
        now: plus(5),
        backoff: { initialIntervalSeconds: 3, maximumIntervalSeconds: 5, resetAfterSeconds: 60 },
        streak: 3,
        delaySeconds: 5,
      },
      {
        name: 'own reset',
        last: { at: T0, streak: 2 },
        now: plus(60),
        backoff: { resetAfterSeconds: 60 },
        streak: 1,
        delaySeconds: 0,
      },
      {
        name: 'initialIntervalSeconds 0: off',
        last: { at: T0, streak: 4 },
        now: plus(1),
        backoff: { initialIntervalSeconds: 0 },
        streak: 5,
        delaySeconds: 0,
      },
    ];
    for (const c of cases) {
      it(c.name, () => {
        const judged = judgeBackoff({ last: c.last, now: Date.parse(c.now), backoff: c.backoff });
        assert.deepEqual(judged, { streak: c.streak, delayMs: c.delaySeconds * 1000 });
      });
    }

    it("defaults to the kubelet's CrashLoopBackOff values", () => {
      assert.deepEqual(DEFAULT_GROUP_RESTART_BACKOFF, {
        initialIntervalSeconds: 10,
        maximumIntervalSeconds: 300,
        resetAfterSeconds: 600,
      });
    });
  });

  describe('the group-recreations annotation', () => {
    it("sets one group, keeps the revision's others, drops other revisions and stays sorted", () => {
      const before = JSON.stringify({ 'old/0': { at: T0, streak: 2 }, 'rev/3': { at: T0, streak: 1 } });
      const after = withRecreation(before, 'rev', 1, { at: plus(10), streak: 2 });
      assert.equal(after, JSON.stringify({ 'rev/1': { at: plus(10), streak: 2 }, 'rev/3': { at: T0, streak: 1 } }));
      assert.equal(withRecreation(after, 'rev', 1, undefined), JSON.stringify({ 'rev/3': { at: T0, streak: 1 } }));
    });

    const unreadable: [string, string | undefined][] = [
      ['absent', undefined],
      ['not JSON', '{'],
      ['an array', '[]'],
      ['null', 'null'],
    ];
    for (const [name, annotation] of unreadable) {
      it(`reads ${name} as no recreation`, () => assert.deepEqual(recreationsOf(annotation), {}));
    }

    it('skips entries that are not recreations (a user edit)', () => {
      const annotation = JSON.stringify({
        'rev/0': { at: T0, streak: 2 },
        'rev/1': { at: 'yesterday', streak: 2 },
        'rev/2': { at: T0, streak: 0 },
        'rev/3': 7,
      });
      assert.deepEqual(recreationsOf(annotation), { 'rev/0': { at: T0, streak: 2 } });
    });

    it('backoffUntil: only a recreation still ahead', () => {
      const annotation = withRecreation(undefined, 'rev', 0, { at: plus(20), streak: 3 });
      assert.deepEqual(backoffUntil(annotation, 'rev', 0, Date.parse(plus(5))), { at: plus(20), streak: 3 });
      assert.equal(backoffUntil(annotation, 'rev', 0, Date.parse(plus(20))), undefined);
      assert.equal(backoffUntil(annotation, 'rev', 1, Date.parse(plus(5))), undefined);
      assert.equal(backoffUntil(annotation, 'other', 0, Date.parse(plus(5))), undefined);
    });
  });

  it('ordinal', () => {
    assert.deepEqual([1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111].map(ordinal), [
      '1st',
      '2nd',
      '3rd',
      '4th',
      '11th',
      '12th',
      '13th',
      '21st',
      '22nd',
      '101st',
      '111th',
    ]);
  });
});
