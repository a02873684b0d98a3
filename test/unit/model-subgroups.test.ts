import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { LEADER_SUBGROUP_INDEX, leaderInSubGroup, subGroupIndex, subGroupKeyInput } from '../../src/model/index.js';

describe('model/subgroups', () => {
  // [group size, subgroup size, worker index, subgroup]
  const indexes: Array<[number, number, number, number]> = [
    // upstream's TestGetSubGroupIndex
    [4, 2, 2, 1], // size divides: the leader takes worker 0's place
    [5, 2, 2, 0], // only size-1 divides: the leader is subgroup 0's extra pod
    [3, 1, 1, 1],
    [3, 1, 2, 2],
    // every worker of a few groups
    [4, 2, 1, 0],
    [4, 2, 3, 1],
    [5, 2, 1, 0],
    [5, 2, 3, 1],
    [5, 2, 4, 1],
    [6, 3, 2, 0],
    [6, 3, 3, 1],
    [6, 3, 5, 1],
    [7, 3, 3, 0],
    [7, 3, 4, 1],
    [7, 3, 6, 1],
    [5, 4, 4, 0], // one subgroup of workers beside the leader (LeaderExcluded's usual shape)
    [4, 4, 3, 0], // one subgroup, leader included
  ];
  for (const [size, subGroupSize, workerIndex, expected] of indexes) {
    it(`puts worker ${workerIndex} of a group of ${size} in subgroups of ${subGroupSize} into subgroup ${expected}`, () => {
      assert.equal(subGroupIndex(size, subGroupSize, workerIndex), expected);
    });
  }

  const policies: Array<[string | undefined, boolean]> = [
    ['LeaderWorker', true],
    ['LeaderExcluded', false],
    [undefined, true], // no policy-type annotation: upstream's default, LeaderWorker
    ['leaderexcluded', true], // compared exactly, as upstream
  ];
  for (const [policyType, expected] of policies) {
    it(`${expected ? 'puts' : 'keeps'} the leader ${expected ? 'in' : 'out of'} subgroup 0 for policy ${policyType}`, () => {
      assert.equal(leaderInSubGroup(policyType), expected);
    });
  }

  it('puts the leader in subgroup 0', () => assert.equal(LEADER_SUBGROUP_INDEX, 0));

  const keys: Array<[string, number, string]> = [
    ['lws-0', 0, 'lws-0/0'],
    ['demo-12', 3, 'demo-12/3'],
  ];
  for (const [leader, index, expected] of keys) {
    it(`hashes ${expected} into the key of subgroup ${index} of ${leader}`, () => {
      assert.equal(subGroupKeyInput(leader, index), expected);
    });
  }
});
