// deadNodeSignal: when a teardown may force-delete a pod stuck Terminating (docs/operations.md, "Dead nodes"), one row
// per situation. Never before the grace period is over, never on NotReady alone unless the LWS opted in.
import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import type { V1Node } from '@kubernetes/client-node';
import {
  FORCE_DELETE_MARGIN_MS,
  TAINT_OUT_OF_SERVICE,
  deadNodeSignal,
  nodeFacts,
  pastGracePeriodAt,
  type TerminatingPodFacts,
} from '../../src/model/index.js';

/** The pod's grace period ends here. */
const END = Date.parse('2026-01-01T00:01:00Z');
const PAST = END + FORCE_DELETE_MARGIN_MS;
const s = (seconds: number) => seconds * 1000;
const iso = (ms: number) => new Date(ms).toISOString();

const terminating: TerminatingPodFacts = {
  deletionTimestamp: iso(END),
  deletionGracePeriodSeconds: 30,
  nodeName: 'node-a',
};

function node(opts: { taints?: string[]; ready?: 'True' | 'False' | 'Unknown'; since?: number } = {}): V1Node {
  return {
    spec: { taints: (opts.taints ?? []).map((key) => ({ key, effect: 'NoExecute' })) },
    status: {
      conditions: opts.ready
        ? [
            { type: 'MemoryPressure', status: 'False' },
            {
              type: 'Ready',
              status: opts.ready,
              ...(opts.since !== undefined && { lastTransitionTime: iso(opts.since) as unknown as Date }),
            },
          ]
        : [],
    },
  };
}

const healthy = node({ ready: 'True', since: END - s(3600) });
const outOfService = node({ taints: [TAINT_OUT_OF_SERVICE], ready: 'True', since: END - s(3600) });
/** NotReady since 10 s before the grace period ended. */
const notReady = node({ ready: 'False', since: END - s(10) });

const cases: {
  name: string;
  pod?: TerminatingPodFacts;
  node: V1Node | null;
  now: number;
  notReadySeconds?: number;
  signal: string | undefined;
}[] = [
  // The signals, once the grace period is over.
  { name: 'node gone', node: null, now: PAST, signal: 'node gone' },
  { name: 'node tainted out-of-service', node: outOfService, now: PAST, signal: 'node tainted out-of-service' },
  {
    name: 'out-of-service with NoSchedule (the taint counts whatever its effect)',
    node: { ...outOfService, spec: { taints: [{ key: TAINT_OUT_OF_SERVICE, effect: 'NoSchedule' }] } },
    now: PAST,
    signal: 'node tainted out-of-service',
  },
  {
    name: 'node NotReady for long enough, opted in',
    node: notReady,
    now: PAST,
    notReadySeconds: 10,
    signal: 'node NotReady for 12 s (spec.forceDeleteOnNodeNotReadySeconds 10)',
  },
  {
    name: 'node Ready Unknown (heartbeats stopped) for long enough, opted in',
    node: node({ ready: 'Unknown', since: END - s(60) }),
    now: PAST,
    notReadySeconds: 30,
    signal: 'node NotReady for 62 s (spec.forceDeleteOnNodeNotReadySeconds 30)',
  },
  {
    name: 'opted in with 0: NotReady at all is enough',
    node: node({ ready: 'False', since: PAST }),
    now: PAST,
    notReadySeconds: 0,
    signal: 'node NotReady for 0 s (spec.forceDeleteOnNodeNotReadySeconds 0)',
  },
  // Never on NotReady alone without the opt-in, nor before it has lasted that long.
  { name: 'node NotReady, not opted in', node: notReady, now: PAST + s(3600), signal: undefined },
  { name: 'node NotReady for less than the opt-in', node: notReady, now: PAST, notReadySeconds: 13, signal: undefined },
  {
    name: 'node NotReady, opted in, but no lastTransitionTime to count from',
    node: node({ ready: 'False' }),
    now: PAST,
    notReadySeconds: 0,
    signal: undefined,
  },
  { name: 'node reports no Ready condition, opted in', node: node(), now: PAST, notReadySeconds: 0, signal: undefined },
  {
    name: 'a healthy node: its kubelet is just late',
    node: healthy,
    now: PAST + s(600),
    notReadySeconds: 0,
    signal: undefined,
  },
  {
    name: 'another taint (unreachable) is no signal',
    node: node({ taints: ['node.kubernetes.io/unreachable'] }),
    now: PAST,
    signal: undefined,
  },
  // Never before the grace period is over, whatever the node.
  { name: 'node gone, grace period not over', node: null, now: END - 1, signal: undefined },
  { name: 'node gone, within the margin after it', node: null, now: PAST - 1, signal: undefined },
  { name: 'out-of-service, grace period not over', node: outOfService, now: END, signal: undefined },
  // Pods no force delete can help.
  { name: 'not terminating', pod: { nodeName: 'node-a' }, node: null, now: PAST, signal: undefined },
  {
    name: 'never scheduled (the API server removes it itself)',
    pod: { deletionTimestamp: iso(END), deletionGracePeriodSeconds: 30 },
    node: null,
    now: PAST,
    signal: undefined,
  },
  {
    name: 'already deleted with grace 0: its finalizers hold it',
    pod: { ...terminating, deletionGracePeriodSeconds: 0 },
    node: null,
    now: PAST,
    signal: undefined,
  },
];

describe('deadNodeSignal: when a pod stuck Terminating may be force-deleted', () => {
  for (const c of cases) {
    it(`${c.name} -> ${c.signal ?? 'left to its kubelet'}`, () => {
      const facts = c.node === null ? null : nodeFacts(c.node);
      assert.equal(deadNodeSignal(c.pod ?? terminating, facts, c.now, c.notReadySeconds), c.signal);
    });
  }

  it('pastGracePeriodAt: the deletionTimestamp plus the margin; none for a pod no force delete applies to', () => {
    assert.equal(pastGracePeriodAt(terminating), PAST);
    assert.equal(pastGracePeriodAt({ nodeName: 'node-a' }), undefined);
    assert.equal(pastGracePeriodAt({ ...terminating, deletionGracePeriodSeconds: 0 }), undefined);
    assert.equal(pastGracePeriodAt({ ...terminating, deletionTimestamp: 'not a time' }), undefined);
  });

  it('nodeFacts: taint keys and the Ready condition, Dates or strings alike', () => {
    const since = new Date(END);
    const typed: V1Node = {
      spec: { taints: [{ key: TAINT_OUT_OF_SERVICE, effect: 'NoExecute' }] },
      status: { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: since }] },
    };
    assert.deepEqual(nodeFacts(typed), {
      taintKeys: [TAINT_OUT_OF_SERVICE],
      ready: { status: 'False', lastTransitionTime: since.toISOString() },
    });
    assert.deepEqual(nodeFacts({}), { taintKeys: [] });
  });
});
