import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import {
  ANNOTATION_POD_TERMINATION_POLICY,
  controllerOwnerUid,
  decideWorkerProvision,
  decideWorkerTeardown,
  groupTeardownPlan,
  resolvePodTerminationPolicy,
  type ObjectState,
  type PodTerminationPolicy,
  type ResolvedPolicy,
} from '../../src/model/index.js';

function leader(uid: string, opts: { terminating?: boolean; policy?: string; createdAt?: string } = {}): ObjectState {
  return {
    metadata: {
      name: 'demo-1',
      uid,
      ...(opts.createdAt !== undefined ? { creationTimestamp: opts.createdAt } : {}),
      ...(opts.terminating ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
      ...(opts.policy !== undefined ? { annotations: { [ANNOTATION_POD_TERMINATION_POLICY]: opts.policy } } : {}),
    },
  };
}

function workerSts(ownerUid: string, opts: { terminating?: boolean } = {}): ObjectState {
  return {
    metadata: {
      name: 'demo-1',
      uid: `sts-of-${ownerUid}`,
      ownerReferences: [{ uid: ownerUid, controller: true }],
      ...(opts.terminating ? { deletionTimestamp: new Date(0) } : {}),
    },
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

  it('plans: Sequential only observes, Parallel foreground-deletes the workers', () => {
    const seq = groupTeardownPlan('Sequential');
    const par = groupTeardownPlan('Parallel');
    assert.equal(seq.deleteWorkerStatefulSet, false);
    assert.equal(par.deleteWorkerStatefulSet, true);
    assert.equal(par.deleteWorkerStatefulSet && par.propagationPolicy, 'Foreground');
  });

  it('finds the controlling owner', () => {
    assert.equal(controllerOwnerUid(workerSts('a')), 'a');
    assert.equal(controllerOwnerUid({ metadata: { ownerReferences: [{ uid: 'x' }] } }), undefined);
    assert.equal(controllerOwnerUid({}), undefined);
  });

  // [case, policy, leaderPod, workerStatefulSet, expected action]
  const teardown: Array<[string, PodTerminationPolicy, ObjectState | undefined, ObjectState | undefined, string]> = [
    ['Parallel, leader terminating: delete', 'Parallel', leader('L', { terminating: true }), workerSts('L'), 'delete'],
    [
      'Sequential, leader terminating: only wait',
      'Sequential',
      leader('L', { terminating: true }),
      workerSts('L'),
      'wait',
    ],
    ['Parallel, leader not terminating: never delete', 'Parallel', leader('L'), workerSts('L'), 'done'],
    [
      'Parallel, StatefulSet of a new leader: never touch it',
      'Parallel',
      leader('L', { terminating: true }),
      workerSts('NEW'),
      'done',
    ],
    [
      'Parallel, StatefulSet already terminating: wait',
      'Parallel',
      leader('L', { terminating: true }),
      workerSts('L', { terminating: true }),
      'wait',
    ],
    ['Parallel, leader gone: the garbage collector has it', 'Parallel', undefined, workerSts('L'), 'wait'],
    ['Parallel, a new pod of the same name: the old leader is gone', 'Parallel', leader('NEW'), workerSts('L'), 'wait'],
    ['either, no StatefulSet: done', 'Parallel', leader('L', { terminating: true }), undefined, 'done'],
    ['Sequential, no StatefulSet: done', 'Sequential', undefined, undefined, 'done'],
  ];
  for (const [name, policy, leaderPod, sts, action] of teardown) {
    it(`teardown: ${name}`, () => {
      const decision = decideWorkerTeardown({ policy, leaderUid: 'L', leaderPod, workerStatefulSet: sts });
      assert.equal(decision.action, action, decision.reason);
    });
  }

  it('deletes with a uid precondition and foreground propagation', () => {
    const decision = decideWorkerTeardown({
      policy: 'Parallel',
      leaderUid: 'L',
      leaderPod: leader('L', { terminating: true }),
      workerStatefulSet: workerSts('L'),
    });
    assert.deepEqual(
      decision.action === 'delete' && [decision.name, decision.preconditionUid, decision.propagationPolicy],
      ['demo-1', 'sts-of-L', 'Foreground'],
    );
  });

  const provision: Array<[string, ObjectState | undefined, string]> = [
    ['no StatefulSet: create', undefined, 'create'],
    ['own StatefulSet: exists', workerSts('L'), 'exists'],
    ["old leader's StatefulSet: wait (safe rebuild)", workerSts('OLD'), 'wait'],
    ['terminating old StatefulSet: wait (safe rebuild)', workerSts('OLD', { terminating: true }), 'wait'],
    ['own StatefulSet terminating: wait', workerSts('L', { terminating: true }), 'wait'],
  ];
  for (const [name, sts, action] of provision) {
    it(`provision: ${name}`, () => {
      assert.equal(decideWorkerProvision({ leaderUid: 'L', workerStatefulSet: sts }).action, action);
    });
  }
});
