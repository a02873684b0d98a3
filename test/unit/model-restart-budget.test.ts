import assert from 'node:assert/strict';
import {
  ANNOTATION_GROUP_FAILED,
  ANNOTATION_RECOVER,
  groupsFailedOf,
  judgeGroupRestart,
  recoverRequested,
  restartCounts,
  withRestartCount,
} from '../../src/model/index.js';

describe('the group restart budget (src/model/restart-budget.ts)', () => {
  it('reads the counts of the annotation, and nothing from a value that is not a map of counts', () => {
    const cases: [string | undefined, Record<string, number>][] = [
      [undefined, {}],
      ['{"abc/0":2,"abc/3":1}', { 'abc/0': 2, 'abc/3': 1 }],
      ['{"abc/0":-1,"abc/1":1.5,"abc/2":"3","abc/4":4}', { 'abc/4': 4 }],
      ['[1,2]', {}],
      ['null', {}],
      ['not json', {}],
    ];
    for (const [annotation, counts] of cases) assert.deepEqual(restartCounts(annotation), counts, String(annotation));
  });

  it("sets one group's count, keeps the other groups' of the revision, and drops the other revisions'", () => {
    const cases: [string | undefined, string, number, number, string][] = [
      [undefined, 'abc', 0, 1, '{"abc/0":1}'],
      ['{"abc/0":1}', 'abc', 0, 2, '{"abc/0":2}'],
      ['{"abc/0":1,"abc/2":3}', 'abc', 1, 1, '{"abc/0":1,"abc/1":1,"abc/2":3}'],
      // A rolling update to revision def: every group counts from nothing again.
      ['{"abc/0":2,"abc/1":1}', 'def', 0, 1, '{"def/0":1}'],
      ['{"abc/0":2}', 'abc', 0, 0, '{"abc/0":0}'],
    ];
    for (const [before, revision, group, count, after] of cases) {
      assert.equal(
        withRestartCount(before, revision, group, count),
        after,
        `${before} + ${revision}/${group}=${count}`,
      );
    }
  });

  it('recreates while the count is below maxGroupRestarts, or without one', () => {
    const cases: [number | undefined, number, boolean][] = [
      [undefined, 0, true],
      [undefined, 100, true],
      [0, 0, false],
      [3, 0, true],
      [3, 2, true],
      [3, 3, false],
      [3, 7, false],
    ];
    for (const [max, count, recreate] of cases) {
      const judged = judgeGroupRestart({ maxGroupRestarts: max, count, groupIndex: 2, leaderName: 'vllm-2' });
      assert.equal(judged.recreate, recreate, `max ${max}, count ${count}`);
      if (judged.recreate) assert.equal(judged.count, count + 1);
      else {
        assert.equal(
          judged.message,
          `group 2 was recreated ${count} times (spec.leaderWorkerTemplate.maxGroupRestarts ${max}): it is kept as it ` +
            `is for debugging. To rebuild it: kubectl annotate pod vllm-2 ${ANNOTATION_RECOVER}=true`,
        );
      }
    }
  });

  it('recovers a failed group only on recover=true, and never a terminating leader', () => {
    const failed = { [ANNOTATION_GROUP_FAILED]: 'spent' };
    const cases: [Record<string, string>, string | undefined, boolean][] = [
      [{ ...failed, [ANNOTATION_RECOVER]: 'true' }, undefined, true],
      [{ ...failed, [ANNOTATION_RECOVER]: 'yes' }, undefined, false],
      [{ [ANNOTATION_RECOVER]: 'true' }, undefined, false],
      [{ ...failed, [ANNOTATION_RECOVER]: 'true' }, '2026-12-05T10:00:00Z', false],
    ];
    for (const [annotations, deletionTimestamp, wanted] of cases) {
      assert.equal(
        recoverRequested({ annotations, ...(deletionTimestamp && { deletionTimestamp }) }),
        wanted,
        JSON.stringify(annotations),
      );
    }
  });

  it('names the failed groups of live leaders for the Failed condition', () => {
    const leader = (message?: string, deletionTimestamp?: string) => ({
      annotations: (message ? { [ANNOTATION_GROUP_FAILED]: message } : {}) as Record<string, string>,
      ...(deletionTimestamp && { deletionTimestamp }),
    });
    assert.equal(groupsFailedOf([leader(), leader(undefined)]), undefined);
    assert.equal(groupsFailedOf([leader('group 1 spent', '2026-12-05T10:00:00Z')]), undefined);
    assert.deepEqual(groupsFailedOf([leader(), leader('group 1 spent')]), {
      reason: 'MaxGroupRestartsExceeded',
      message: 'group 1 spent',
    });
    assert.equal(
      groupsFailedOf([leader('group 1 spent'), leader('group 4 spent')])?.message,
      'group 1 spent (and 1 more group)',
    );
    assert.equal(groupsFailedOf([leader('a'), leader('b'), leader('c')])?.message, 'a (and 2 more groups)');
  });
});
