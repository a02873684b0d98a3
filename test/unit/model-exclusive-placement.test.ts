import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import type { V1Affinity, V1PodAffinityTerm, V1PodSpec } from '@kubernetes/client-node';
import {
  LABEL_GROUP_KEY,
  LABEL_SUBGROUP_KEY,
  exclusiveAffinityApplied,
  exclusiveAffinityTerm,
  exclusiveAntiAffinityTerm,
  withExclusiveAffinity,
  type ExclusivePlacement,
} from '../../src/model/index.js';

const group: ExclusivePlacement = { labelKey: LABEL_GROUP_KEY, value: 'test-key', topologyKey: 'topologyKey' };
const subGroup: ExclusivePlacement = { labelKey: LABEL_SUBGROUP_KEY, value: 'sub-key', topologyKey: 'rack' };

// upstream's expected terms, written out
const groupAffinity: V1PodAffinityTerm = {
  labelSelector: {
    matchExpressions: [{ key: 'leaderworkerset.sigs.k8s.io/group-key', operator: 'In', values: ['test-key'] }],
  },
  topologyKey: 'topologyKey',
};
const groupAntiAffinity: V1PodAffinityTerm = {
  labelSelector: {
    matchExpressions: [
      { key: 'leaderworkerset.sigs.k8s.io/group-key', operator: 'Exists' },
      { key: 'leaderworkerset.sigs.k8s.io/group-key', operator: 'NotIn', values: ['test-key'] },
    ],
  },
  topologyKey: 'topologyKey',
};
const bare = (topologyKey: string): V1PodAffinityTerm => ({ topologyKey });
const withRequired = (
  affinity: V1PodAffinityTerm[] | undefined,
  anti: V1PodAffinityTerm[] | undefined,
): V1Affinity => ({
  ...(affinity && { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: affinity } }),
  ...(anti && { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: anti } }),
});
const spec = (affinity?: V1Affinity): V1PodSpec => ({ containers: [{ name: 'c' }], ...(affinity && { affinity }) });

describe('model/exclusive-placement', () => {
  it('requires the pods of the set in its domain', () => assert.deepEqual(exclusiveAffinityTerm(group), groupAffinity));
  it('keeps the pods of other sets out of it', () => {
    assert.deepEqual(exclusiveAntiAffinityTerm(group), groupAntiAffinity);
  });

  // [case, pod affinity, topology key, applied]: upstream's TestExclusiveAffinityApplied and a few more
  const applied: Array<[string, V1Affinity | undefined, string, boolean]> = [
    [
      'both lists hold a term on the key',
      withRequired([bare('topologyKey')], [bare('topologyKey')]),
      'topologyKey',
      true,
    ],
    ['no anti-affinity', withRequired([bare('topologyKey')], undefined), 'topologyKey', false],
    ['no affinity', withRequired(undefined, [bare('topologyKey')]), 'topologyKey', false],
    [
      'the affinity term is on another key',
      withRequired([bare('topologyKey1')], [bare('topologyKey')]),
      'topologyKey',
      false,
    ],
    ['no affinity at all', undefined, 'topologyKey', false],
    ['empty lists', withRequired([], []), 'topologyKey', false],
    ['the key among others', withRequired([bare('a'), bare('rack')], [bare('rack'), bare('b')]), 'rack', true],
    [
      'only preferred terms on the key',
      {
        podAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: bare('rack') }],
        },
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: bare('rack') }],
        },
      },
      'rack',
      false,
    ],
  ];
  for (const [what, affinity, topologyKey, expected] of applied) {
    it(`counts as ${expected ? '' : 'not '}applied: ${what}`, () => {
      assert.equal(exclusiveAffinityApplied(spec(affinity), topologyKey), expected);
    });
  }

  // [case, pod affinity before, placements applied in turn, pod affinity after]
  const writes: Array<[string, V1Affinity | undefined, ExclusivePlacement[], V1Affinity]> = [
    [
      'a pod with no affinity gets both terms (upstream)',
      undefined,
      [group],
      withRequired([groupAffinity], [groupAntiAffinity]),
    ],
    [
      'a pod with terms on the key already is left alone (upstream)',
      withRequired([bare('topologyKey')], [bare('topologyKey')]),
      [group],
      withRequired([bare('topologyKey')], [bare('topologyKey')]),
    ],
    ['a second call changes nothing', undefined, [group, group], withRequired([groupAffinity], [groupAntiAffinity])],
    [
      "the terms follow the user's own on other keys",
      withRequired([bare('zone')], [bare('host')]),
      [group],
      withRequired([bare('zone'), groupAffinity], [bare('host'), groupAntiAffinity]),
    ],
    [
      'node affinity stays',
      { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } },
      [group],
      {
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } },
        ...withRequired([groupAffinity], [groupAntiAffinity]),
      },
    ],
    [
      'group, then subgroup on another key: both',
      undefined,
      [group, subGroup],
      withRequired(
        [groupAffinity, exclusiveAffinityTerm(subGroup)],
        [groupAntiAffinity, exclusiveAntiAffinityTerm(subGroup)],
      ),
    ],
    [
      // upstream tells its terms by topology key alone
      'group, then subgroup on the same key: the subgroup is skipped',
      undefined,
      [group, { ...subGroup, topologyKey: group.topologyKey }],
      withRequired([groupAffinity], [groupAntiAffinity]),
    ],
  ];
  for (const [what, before, placements, after] of writes) {
    it(`places exclusively: ${what}`, () => {
      const input = spec(before);
      const frozen = structuredClone(input);
      const out = placements.reduce((s, p) => withExclusiveAffinity(s, p), input);
      assert.deepEqual(out, spec(after));
      assert.deepEqual(input, frozen, 'input untouched');
    });
  }
});
