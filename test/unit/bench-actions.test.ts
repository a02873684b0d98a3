import assert from 'node:assert/strict';
import { ActionLedger } from '../../tools/bench/action-ledger.js';
import { actionCounts, actionsBetween, actionsTable, total, type ActionCounts } from '../../tools/bench/actions.js';

// As the Temporal server 1.32 exports it (npm run temporal:up, PROMETHEUS_ENDPOINT): one series per action_type,
// operation and service, labelled with the Temporal namespace.
const page = [
  '# HELP action action counter',
  '# TYPE action counter',
  'action{action_type="grpc_SignalWorkflowExecution",namespace="default",operation="SignalWorkflowExecution",service_name="frontend"} 3',
  'action{action_type="grpc_StartWorkflowExecution",namespace="default",operation="StartWorkflowExecution",service_name="frontend"} 2',
  'action{action_type="command_StartTimer",namespace="default",operation="RespondWorkflowTaskCompleted",service_name="history"} 5',
  'action{action_type="command_StartTimer",namespace="default",operation="Other",service_name="history"} 1',
  'action{action_type="grpc_StartWorkflowExecution",namespace="other",operation="StartWorkflowExecution",service_name="frontend"} 7',
  'action_total{action_type="grpc_RecordActivityTaskHeartbeat",namespace="default",service_name="frontend"} 4',
  'actions_dropped{namespace="default"} 9',
].join('\n');

describe('Temporal Actions per lifecycle (tools/bench/actions.ts)', () => {
  it("sums one namespace's action series by type, whatever the service or operation", () => {
    assert.deepEqual(Object.fromEntries(actionCounts(page, 'default')), {
      grpc_SignalWorkflowExecution: 3,
      grpc_StartWorkflowExecution: 2,
      command_StartTimer: 6,
      grpc_RecordActivityTaskHeartbeat: 4,
    });
    assert.deepEqual(Object.fromEntries(actionCounts(page, 'other')), { grpc_StartWorkflowExecution: 7 });
    assert.equal(actionCounts(page, 'none').size, 0);
  });

  it('counts what moved between two scrapes, new types included', () => {
    const before = new Map([
      ['a', 3],
      ['b', 1],
    ]);
    const after = new Map([
      ['a', 5],
      ['b', 1],
      ['c', 2],
    ]);
    assert.deepEqual(Object.fromEntries(actionsBetween(before, after)), { a: 2, c: 2 });
    assert.equal(total(actionsBetween(before, after)), 4);
  });

  it('prints per-group figures and the price of 1,000 rebuilds', () => {
    const table = actionsTable(
      [
        { lifecycle: 'Parallel rebuild of 1 group', per: 'group', groups: 1, actions: 37, byType: { x: 30, y: 7 } },
        { lifecycle: 'provisioning (2 groups)', per: 'group', groups: 2, actions: 12, byType: { x: 24 } },
      ],
      50,
    );
    assert.match(table, /\| Parallel rebuild of 1 group \| 37 \| group \| x 30, y 7 \|/);
    assert.match(table, /\| provisioning \(2 groups\) \| 12 \| group \| x 12 \|/);
    assert.match(table, /1,000 Parallel rebuilds: 37,000 Actions, \$1\.85 at \$50 per million/);
  });
});

describe('ActionLedger: the counter between two marks goes to the span the first opened', () => {
  it('spans by name, added up over their openings; a mark without a name counts for none', async () => {
    const scrapes: Array<Record<string, number>> = [
      { a: 1 },
      { a: 4, b: 1 }, // 'x' had a +3, b +1
      { a: 5, b: 1 }, // nothing open
      { a: 9, b: 2 }, // 'x' again: a +4, b +1
      { a: 9, b: 2, c: 7 }, // 'y': c +7
    ];
    let i = 0;
    const ledger = new ActionLedger(async (): Promise<ActionCounts> => new Map(Object.entries(scrapes[i++]!)), 0);
    for (const span of ['x', undefined, 'x', 'y', undefined]) await ledger.mark(span);
    assert.deepEqual(ledger.of('x'), { a: 7, b: 2 });
    assert.deepEqual(ledger.of('y'), { c: 7 });
    assert.equal(ledger.of('never'), undefined);
  });

  it('reads only after the delay, so that what the server has not reported yet still counts for the span', async () => {
    let reportedAt = Infinity;
    const ledger = new ActionLedger(
      async (): Promise<ActionCounts> => new Map([['a', Date.now() >= reportedAt ? 2 : 1]]),
      50,
    );
    await ledger.mark('x');
    reportedAt = Date.now() + 30; // the span's last Action, reported 30 ms after the span ended
    await ledger.mark();
    assert.deepEqual(ledger.of('x'), { a: 1 });
  });
});
