import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import {
  groupKeyInput,
  groupServiceName,
  headlessServiceName,
  leaderAddress,
  leaderPodName,
  leaderStatefulSetName,
  parseGroupIndex,
  parsePodName,
  parseWorkflowId,
  workerPodName,
  workerServiceName,
  workerStatefulSetName,
  workflowId,
  lwsWorkflowIdPrefix,
  workflowSummary,
  type ObjectKey,
  type WorkflowOp,
} from '../../src/model/index.js';

const ref: ObjectKey = { namespace: 'default', name: 'demo' };

describe('model/names', () => {
  const objectNames: Array<[string, string, string]> = [
    ['leader StatefulSet', leaderStatefulSetName('demo'), 'demo'],
    ['leader pod of group 0', leaderPodName('demo', 0), 'demo-0'],
    ['leader pod of group 12', leaderPodName('demo', 12), 'demo-12'],
    ['worker StatefulSet of group 1 (= its leader pod)', workerStatefulSetName('demo', 1), 'demo-1'],
    ['worker pod 3 of group 1', workerPodName('demo', 1, 3), 'demo-1-3'],
    ['headless Service', headlessServiceName('demo'), 'demo'],
    ['per-group Service', groupServiceName('demo', 2), 'demo-2'],
    ['worker subdomain, Shared', workerServiceName('demo', 2, 'Shared'), 'demo'],
    ['worker subdomain, UniquePerReplica', workerServiceName('demo', 2, 'UniquePerReplica'), 'demo-2'],
    ['leader address', leaderAddress('demo', 1, 'team-a'), 'demo-1.demo.team-a'],
    [
      'leader address, UniquePerReplica',
      leaderAddress('demo', 1, 'team-a', 'UniquePerReplica'),
      'demo-1.demo-1.team-a',
    ],
    ['group key input', groupKeyInput('team-a', 'demo-1'), 'team-a/demo-1'],
  ];
  for (const [what, actual, expected] of objectNames) {
    it(`names the ${what} ${expected}`, () => assert.equal(actual, expected));
  }

  const groupIndexes: Array<[string, string, number | undefined]> = [
    ['demo', 'demo-0', 0],
    ['demo', 'demo-17', 17],
    ['demo-1', 'demo-1-2', 2], // an LWS whose own name ends in a number
    ['demo', 'demo-1-2', undefined], // a worker pod, not a leader
    ['demo', 'demo-01', undefined], // StatefulSets never write leading zeros
    ['demo', 'demo-', undefined],
    ['demo', 'demox-1', undefined],
    ['demo', 'other-1', undefined],
    ['demo', 'demo-1a', undefined],
  ];
  for (const [lws, pod, expected] of groupIndexes) {
    it(`parses group index of ${pod} in LWS ${lws} as ${String(expected)}`, () => {
      assert.equal(parseGroupIndex(lws, pod), expected);
    });
  }

  const podNames: Array<[string, string, { groupIndex: number; workerIndex: number } | undefined]> = [
    ['demo', 'demo-0', { groupIndex: 0, workerIndex: 0 }],
    ['demo', 'demo-2-3', { groupIndex: 2, workerIndex: 3 }],
    ['demo', 'demo-2-0', undefined], // worker ordinals start at 1
    ['demo', 'demo-2-3-4', undefined],
    ['demo', 'x-2-3', undefined],
  ];
  for (const [lws, pod, expected] of podNames) {
    it(`parses pod ${pod} in LWS ${lws}`, () => assert.deepEqual(parsePodName(lws, pod), expected));
  }

  // [op, id, summary]
  const workflows: Array<[WorkflowOp, string, string]> = [
    [{ kind: 'reconcile', generation: 3 }, 'lws/c1/default/demo/reconcile/3', 'reconcile default/demo at generation 3'],
    [
      { kind: 'provision', groupIndex: 1, leaderUid: 'u-1' },
      'lws/c1/default/demo/group-1/provision/u-1',
      'provision group 1 of default/demo',
    ],
    [
      { kind: 'teardown', groupIndex: 0, oldLeaderUid: 'u-0' },
      'lws/c1/default/demo/group-0/teardown/u-0',
      'tear down group 0 of default/demo',
    ],
    [
      { kind: 'teardown', groupIndex: 0, oldLeaderUid: 'u-0', lifecycle: 'scale-down' },
      'lws/c1/default/demo/group-0/teardown/u-0',
      'tear down group 0 of default/demo (scale-down)',
    ],
    [
      { kind: 'recreate', groupIndex: 2, leaderUid: 'u-2' },
      'lws/c1/default/demo/group-2/recreate/u-2',
      'recreate group 2 of default/demo after a pod restart',
    ],
    [
      { kind: 'recreate', groupIndex: 2, leaderUid: 'u-2', recover: true },
      'lws/c1/default/demo/group-2/recreate/u-2/recover',
      'recover failed group 2 of default/demo',
    ],
  ];
  for (const [op, id, summary] of workflows) {
    it(`gives ${op.kind} the workflow ID ${id}`, () => {
      assert.equal(workflowId('c1', ref, op), id);
      // Stable: a function of its inputs only, however often and in whatever order it is called.
      assert.equal(workflowId('c1', { name: 'demo', namespace: 'default' }, { ...op }), id);
    });
    it(`summarises ${op.kind} as "${summary}"`, () => assert.equal(workflowSummary(ref, op), summary));
    // The lifecycle only says what the trigger judged: the ID is the leader's, whatever the teardown judges.
    const { lifecycle: _judged, ...identifying } = op as WorkflowOp & { lifecycle?: string };
    it(`parses ${id} back`, () => assert.deepEqual(parseWorkflowId(id), { cluster: 'c1', ref, op: identifying }));
  }

  it('gives different groups, leaders, generations, namespaces and clusters different IDs', () => {
    const ids = new Set([
      workflowId('c1', ref, { kind: 'provision', groupIndex: 1, leaderUid: 'a' }),
      workflowId('c1', ref, { kind: 'provision', groupIndex: 2, leaderUid: 'a' }),
      workflowId('c1', ref, { kind: 'provision', groupIndex: 1, leaderUid: 'b' }),
      workflowId('c1', ref, { kind: 'teardown', groupIndex: 1, oldLeaderUid: 'a' }),
      workflowId('c1', ref, { kind: 'recreate', groupIndex: 1, leaderUid: 'a' }),
      workflowId('c1', { ...ref, namespace: 'other' }, { kind: 'provision', groupIndex: 1, leaderUid: 'a' }),
      workflowId('c1', ref, { kind: 'reconcile', generation: 1 }),
      workflowId('c1', ref, { kind: 'reconcile', generation: 2 }),
      workflowId('c2', ref, { kind: 'reconcile', generation: 2 }),
    ]);
    assert.equal(ids.size, 9);
  });

  it('starts every ID of an LWS with its cluster, namespace and name', () => {
    const prefix = lwsWorkflowIdPrefix('c1', ref);
    assert.equal(prefix, 'lws/c1/default/demo/');
    for (const [op] of workflows) assert.ok(workflowId('c1', ref, op).startsWith(prefix));
    assert.ok(!workflowId('c1', { ...ref, name: 'demo-2' }, workflows[0]![0]).startsWith(prefix));
  });

  for (const id of [
    'lws/c1/default/demo',
    'lws/c1/default/demo/reconcile/x',
    // IDs without a cluster, as builds before cluster names made them.
    'lws/default/demo/reconcile/1',
    'lws/default/demo/group-1/teardown/u',
    'other/default/demo/reconcile/1',
    'lws/c1/default/demo/group-1/rebuild/u',
    'lws/c1/default/demo/group-1/fix/u',
  ]) {
    it(`does not parse ${id}`, () => assert.equal(parseWorkflowId(id), undefined));
  }
});
