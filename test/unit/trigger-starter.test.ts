import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { silentLogger } from '../../src/log.js';
import type { StartAction } from '../../src/trigger/decide.js';
import { WorkflowStarter } from '../../src/trigger/starter.js';

type Call = {
  op: 'start' | 'signalWithStart' | 'signal';
  workflowId: string;
  requestEagerStart?: boolean;
  workflowType?: string;
  workflowTaskTimeout?: string;
  /** The typed search attributes a start carried, by name. */
  searchAttributes?: Record<string, unknown>;
  /** A signal's arguments, and when it was sent. */
  signalArgs?: unknown[];
  at?: number;
};

type StartSearchAttributes = { typedSearchAttributes?: SearchAttributePair[] };

/** A Temporal client stand-in: records calls and answers each with what `answer` says, after `delayMs`. */
function fakeClient(answer: (call: Call, n: number) => 'ok' | 'exists' | 'gone' | 'fail', delayMs = 20) {
  const calls: Call[] = [];
  const respond = async (call: Call) => {
    calls.push(call);
    const n = calls.filter((c) => c.workflowId === call.workflowId).length;
    await new Promise((r) => setTimeout(r, delayMs));
    const a = answer(call, n);
    if (a === 'exists') throw new WorkflowExecutionAlreadyStartedError('exists', call.workflowId, 'teardownGroup');
    if (a === 'gone') throw new WorkflowNotFoundError('workflow execution already completed', call.workflowId, '');
    if (a === 'fail') throw new Error('unavailable');
    // A handle's one field the starter reads: whether the server started it eagerly.
    return { eagerlyStarted: call.requestEagerStart === true };
  };
  const client = {
    workflow: {
      start: (
        workflowType: string,
        o: { workflowId: string; requestEagerStart?: boolean; workflowTaskTimeout?: string } & StartSearchAttributes,
      ) =>
        respond({
          op: 'start',
          workflowId: o.workflowId,
          workflowType,
          ...(o.workflowTaskTimeout && { workflowTaskTimeout: o.workflowTaskTimeout }),
          ...(o.requestEagerStart === undefined ? {} : { requestEagerStart: o.requestEagerStart }),
          ...(o.typedSearchAttributes === undefined
            ? {}
            : {
                searchAttributes: Object.fromEntries(o.typedSearchAttributes.map((p) => [p.key.name, p.value])),
              }),
        }),
      signalWithStart: (
        workflowType: string,
        o: { workflowId: string; signalArgs?: unknown[]; workflowTaskTimeout?: string },
      ) =>
        respond({
          op: 'signalWithStart',
          workflowId: o.workflowId,
          workflowType,
          ...(o.workflowTaskTimeout && { workflowTaskTimeout: o.workflowTaskTimeout }),
          signalArgs: o.signalArgs,
          at: Date.now(),
        }),
      getHandle: (workflowId: string) => ({
        signal: (_signal: unknown, ...signalArgs: unknown[]) =>
          respond({ op: 'signal', workflowId, signalArgs, at: Date.now() }),
      }),
    },
  } as unknown as Client;
  return { client, calls };
}

const ref = { namespace: 'default', name: 'demo' };
const leader = { namespace: 'default', name: 'demo-0', uid: 'u' };

function action(workflowId: string, kind: StartAction['kind'] = 'start'): StartAction {
  const common = { kind, workflowId, summary: workflowId, ref, reason: 'test' };
  return kind === 'start'
    ? { ...common, workflowType: 'teardownGroup', args: [{ ref, groupIndex: 0, leader, lifecycle: 'rebuild' }] }
    : { ...common, workflowType: 'reconcileLeaderWorkerSet', args: [{ ref, generation: 1 }] };
}

function starterWith(
  client: Client,
  outcomes: string[],
  errors: string[] = [],
  eagerStart?: boolean,
  searchAttributes = false,
) {
  return new WorkflowStarter({
    client,
    eagerStart,
    cluster: 'c1',
    taskQueue: 'q',
    log: silentLogger,
    searchAttributes,
    retryBaseMs: 5,
    onStarted: (a, outcome) => outcomes.push(`${a.workflowId}:${outcome}`),
    onError: (a) => errors.push(a.workflowId),
  });
}

const settle = (ms = 150) => new Promise((r) => setTimeout(r, ms));

describe('trigger: WorkflowStarter', () => {
  it("asks for eager workflow start only when it shares the worker's connection, and never for signals", async () => {
    for (const eagerStart of [true, false, undefined]) {
      const { client, calls } = fakeClient(() => 'ok');
      const starter = starterWith(client, [], [], eagerStart);
      starter.submit(action('lws/default/demo/0/teardown'));
      starter.submit(action('lws/default/demo/reconcile', 'signal-with-start'));
      await settle();
      const start = calls.find((c) => c.op === 'start');
      assert.equal(start?.requestEagerStart === true, eagerStart === true, `eagerStart ${eagerStart}`);
      assert.equal(calls.find((c) => c.op === 'signalWithStart')?.requestEagerStart, undefined);
    }
  });

  it('gives each lifecycle its workflow task timeout: 2 s where a crash would hold up a delete, 10 s to provision', async () => {
    const { client, calls } = fakeClient(() => 'ok');
    const starter = starterWith(client, []);
    const provision = {
      ...action('lws/default/demo/0/provision'),
      workflowType: 'provisionGroup',
      args: [{ ref, groupIndex: 0, leader }],
    } as StartAction;
    starter.submit(action('lws/default/demo/0/teardown'));
    starter.submit(provision);
    starter.submit(action('lws/default/demo/reconcile', 'signal-with-start'));
    await settle();
    assert.deepEqual(calls.map((c) => [c.workflowType, c.workflowTaskTimeout]).sort(), [
      ['provisionGroup', '10s'],
      ['reconcileLeaderWorkerSet', '2s'],
      ['teardownGroup', '2s'],
    ]);
  });

  // Each attribute the start does not carry, a workflow that wants it must upsert: one more write for the server.
  const searchAttributeCases: [string, Partial<StartAction>, boolean, Record<string, unknown> | undefined][] = [
    [
      'a teardown: LWS, group, lifecycle and its policy',
      { groupIndex: 2, lifecycle: 'rebuild', policy: 'Parallel' },
      true,
      {
        LwsCluster: 'c1',
        LwsNamespace: 'default',
        LwsName: 'demo',
        GroupIndex: 2,
        Lifecycle: 'rebuild',
        TerminationPolicy: 'Parallel',
      },
    ],
    [
      'a provisioning: no policy',
      { groupIndex: 0, lifecycle: 'provision' },
      true,
      { LwsCluster: 'c1', LwsNamespace: 'default', LwsName: 'demo', GroupIndex: 0, Lifecycle: 'provision' },
    ],
    ['none when the server does not have them registered', { groupIndex: 2, policy: 'Sequential' }, false, undefined],
  ];
  for (const [what, fields, registered, expected] of searchAttributeCases) {
    it(`starts with search attributes: ${what}`, async () => {
      const { client, calls } = fakeClient(() => 'ok');
      const starter = starterWith(client, [], [], false, registered);
      starter.submit({ ...action('wf-sa'), ...fields } as StartAction);
      await settle();
      assert.deepEqual(calls[0]?.searchAttributes, expected);
    });
  }

  it('makes one start for a burst of identical decisions, and none once the server has the workflow', async () => {
    const { client, calls } = fakeClient(() => 'ok');
    const outcomes: string[] = [];
    const starter = starterWith(client, outcomes);
    for (let i = 0; i < 5; i++) starter.submit(action('wf-a'));
    await settle();
    starter.submit(action('wf-a'));
    await settle();
    assert.deepEqual(
      calls.map(({ op, workflowId }) => ({ op, workflowId })),
      [{ op: 'start', workflowId: 'wf-a' }],
    );
    assert.deepEqual(outcomes, ['wf-a:started']);
  });

  it('takes "already started" as done: no retry, no error', async () => {
    const { client, calls } = fakeClient(() => 'exists');
    const outcomes: string[] = [];
    const errors: string[] = [];
    const starter = starterWith(client, outcomes, errors);
    starter.submit(action('wf-b'));
    await settle();
    starter.submit(action('wf-b'));
    await settle();
    assert.equal(calls.length, 1);
    assert.deepEqual(outcomes, ['wf-b:deduplicated']);
    assert.deepEqual(errors, []);
  });

  it('retries a failed start until it lands', async () => {
    const { client, calls } = fakeClient((_c, n) => (n < 3 ? 'fail' : 'ok'), 1);
    const outcomes: string[] = [];
    const starter = starterWith(client, outcomes);
    starter.submit(action('wf-c'));
    await settle(300);
    assert.equal(calls.length, 3);
    assert.deepEqual(outcomes, ['wf-c:started']);
  });

  it('after giving up, starts again on the next decision (nothing stays marked in flight)', async () => {
    let down = true;
    const { client, calls } = fakeClient(() => (down ? 'fail' : 'ok'), 1);
    const outcomes: string[] = [];
    const errors: string[] = [];
    const starter = starterWith(client, outcomes, errors);
    starter.submit(action('wf-d'));
    await settle(800);
    assert.deepEqual(errors, ['wf-d'], 'gave up after its attempts');
    const attempts = calls.length;
    assert.ok(attempts >= 2, `retried (${attempts} attempts)`);
    down = false;
    starter.submit(action('wf-d'));
    await settle();
    assert.equal(calls.length, attempts + 1);
    assert.deepEqual(outcomes, ['wf-d:started']);
  });

  it('coalesces signals that arrive while one is in flight into one more signal', async () => {
    const { client, calls } = fakeClient(() => 'ok', 30);
    const outcomes: string[] = [];
    const starter = starterWith(client, outcomes);
    for (let i = 0; i < 10; i++) starter.submit(action('wf-r', 'signal-with-start'));
    await settle(900);
    assert.deepEqual(
      calls.map((c) => c.op),
      ['signalWithStart', 'signalWithStart'],
    );
    assert.deepEqual(outcomes, ['wf-r:signalled', 'wf-r:signalled']);
  });

  it('sends a plain signal to an open run, and leaves one that has ended alone: no start, no retry, no error', async () => {
    const { client, calls } = fakeClient((c) => (c.workflowId === 'wf-ended' ? 'gone' : 'ok'));
    const outcomes: string[] = [];
    const errors: string[] = [];
    const starter = starterWith(client, outcomes, errors);
    starter.submit(action('wf-open', 'signal'));
    starter.submit(action('wf-ended', 'signal'));
    await settle();
    assert.deepEqual(
      calls.map((c) => `${c.op} ${c.workflowId}`),
      ['signal wf-open', 'signal wf-ended'],
    );
    assert.deepEqual(outcomes, ['wf-open:signalled']);
    assert.deepEqual(errors, []);
  });

  it('sends the latest kind when changes came during a signal: an LWS created again after its deletion is started', async () => {
    const { client, calls } = fakeClient(() => 'ok', 30);
    const starter = starterWith(client, []);
    starter.submit(action('wf-again', 'signal'));
    starter.submit(action('wf-again', 'signal-with-start'));
    await settle(900);
    assert.deepEqual(
      calls.map((c) => c.op),
      ['signal', 'signalWithStart'],
    );
  });

  // What the resync asks before it tells a reconcile again: [what, the server's answer, whether it counts as told]
  const toldCases: [string, 'ok' | 'gone' | 'fail', boolean][] = [
    ['a signal landed', 'ok', true],
    ['the run had ended (a plain signal)', 'gone', false],
    ['given up after its retries', 'fail', false],
  ];
  for (const [what, answer, told] of toldCases) {
    it(`signalledSince: ${what}: ${told ? 'told' : 'not told'}, and forgotten once older than asked`, async () => {
      const { client } = fakeClient(() => answer, 5);
      const starter = starterWith(client, []);
      const before = Date.now();
      starter.submit(action('wf-t', answer === 'gone' ? 'signal' : 'signal-with-start'));
      await settle(600);
      assert.equal(starter.signalledSince('wf-t', before), told);
      assert.equal(starter.signalledSince('wf-other', before), false);
      starter.forgetSignalsBefore(Date.now() + 1);
      assert.equal(starter.signalledSince('wf-t', 0), false);
    });
  }

  // A change of an LWS's pods or StatefulSets (batch) goes with the rest of its burst after the 1 s batch window; any
  // other change (the LWS's own, a group Ready during a rollout, a resync) at once, taking the batched ones along.
  // [what, the changes (ms after the first; whether batched), each signal's bounds (ms after the first change)]
  const batchCases: [string, [number, boolean][], [number, number][]][] = [
    ['an urgent change: at once', [[0, false]], [[0, 150]]],
    [
      'a burst of batched changes: one signal after the window',
      [
        [0, true],
        [100, true],
        [300, true],
      ],
      [[950, 1_400]],
    ],
    [
      'an urgent change during the window: ends it, one signal for both',
      [
        [0, true],
        [200, false],
      ],
      [[150, 500]],
    ],
    [
      'a batched change while an urgent signal is in flight: one more after the window',
      [
        [0, false],
        [10, true],
      ],
      [
        [0, 150],
        [1_000, 1_500],
      ],
    ],
  ];
  for (const [what, changes, bounds] of batchCases) {
    it(`signal batching: ${what}`, async () => {
      const { client, calls } = fakeClient(() => 'ok', 30);
      const starter = starterWith(client, []);
      const first = Date.now();
      for (const [at, batch] of changes) {
        await new Promise((r) => setTimeout(r, at - (Date.now() - first)));
        starter.submit({ ...action('wf-s', 'signal-with-start'), batch });
      }
      await settle(1_800);
      assert.equal(calls.length, bounds.length, JSON.stringify(calls));
      calls.forEach((call, n) => {
        const [min, max] = bounds[n]!;
        const at = call.at! - first;
        assert.ok(at >= min && at <= max, `signal ${n + 1} at ${at} ms (${min}-${max})`);
        assert.deepEqual(call.signalArgs, [], 'the signal carries nothing');
      });
    });
  }
});
