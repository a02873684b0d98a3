import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import {
  ANNOTATION_POD_TERMINATION_POLICY,
  podTerminationPolicyOf,
  resolvePodTerminationPolicy,
  type ResolvedPolicy,
} from '../../src/model/index.js';

function leader(_uid: string, opts: { policy?: string; createdAt?: string } = {}) {
  const annotations: Record<string, string> =
    opts.policy !== undefined ? { [ANNOTATION_POD_TERMINATION_POLICY]: opts.policy } : {};
  return {
    annotations,
    ...(opts.createdAt !== undefined ? { createdAt: opts.createdAt } : {}),
  };
}

describe('model/policy', () => {
  const resolutions: Array<[string, Parameters<typeof resolvePodTerminationPolicy>[0], ResolvedPolicy]> = [
    [
      'the spec while the LWS exists',
      { lws: { spec: { podTerminationPolicy: 'Parallel' } }, leaderPod: leader('l', { policy: 'Sequential' }) },
      { policy: 'Parallel', source: 'spec' },
    ],
    [
      'the spec even when the annotation says otherwise',
      { lws: { spec: { podTerminationPolicy: 'Sequential' } }, leaderPod: leader('l', { policy: 'Parallel' }) },
      { policy: 'Sequential', source: 'spec' },
    ],
    [
      'the default for an existing LWS without the field',
      { lws: { spec: {} }, leaderPod: leader('l', { policy: 'Parallel' }) },
      { policy: 'Sequential', source: 'default' },
    ],
    [
      "upstream's Default in the spec, as Sequential",
      { lws: { spec: { podTerminationPolicy: 'Default' } }, leaderPod: leader('l', { policy: 'Parallel' }) },
      { policy: 'Sequential', source: 'spec' },
    ],
    [
      "upstream's Default on the leader once the LWS is gone, as Sequential",
      { lws: null, leaderPod: leader('l', { policy: 'Default' }) },
      { policy: 'Sequential', source: 'annotation' },
    ],
    [
      "the leader's annotation once the LWS is gone",
      { lws: null, leaderPod: leader('l', { policy: 'Parallel' }) },
      { policy: 'Parallel', source: 'annotation' },
    ],
    [
      "the leader's annotation when the LWS of its name was created after it (an older one's, created again)",
      {
        lws: { metadata: { creationTimestamp: '2026-01-01T00:00:10Z' }, spec: { podTerminationPolicy: 'Sequential' } },
        leaderPod: leader('l', { policy: 'Parallel', createdAt: '2026-01-01T00:00:09Z' }),
      },
      { policy: 'Parallel', source: 'annotation' },
    ],
    [
      "the spec for a leader created in the LWS's own second",
      {
        lws: { metadata: { creationTimestamp: '2026-01-01T00:00:10Z' }, spec: { podTerminationPolicy: 'Sequential' } },
        leaderPod: leader('l', { policy: 'Parallel', createdAt: '2026-01-01T00:00:10Z' }),
      },
      { policy: 'Sequential', source: 'spec' },
    ],
    ['Sequential without LWS and annotation', { leaderPod: leader('l') }, { policy: 'Sequential', source: 'default' }],
    ['Sequential with nothing at all', {}, { policy: 'Sequential', source: 'default' }],
    [
      'Sequential for an unknown annotation value',
      { leaderPod: leader('l', { policy: 'Sideways' }) },
      { policy: 'Sequential', source: 'default' },
    ],
    [
      'Sequential for an unknown spec value',
      { lws: { spec: { podTerminationPolicy: 'Sideways' } } },
      { policy: 'Sequential', source: 'default' },
    ],
  ];
  for (const [name, sources, expected] of resolutions) {
    it(`resolves ${name}`, () => assert.deepEqual(resolvePodTerminationPolicy(sources), expected));
  }

  it('podTerminationPolicyOf: the spec as written, else Default (as the API stores it)', () => {
    assert.equal(podTerminationPolicyOf({ podTerminationPolicy: 'Parallel' }), 'Parallel');
    assert.equal(podTerminationPolicyOf({ podTerminationPolicy: 'Sequential' }), 'Sequential');
    assert.equal(podTerminationPolicyOf({}), 'Default');
  });
});
