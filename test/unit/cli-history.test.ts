import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import {
  policyFromTimeline,
  recoveryQuery,
  recreateRun,
  teardownMsFromTimeline,
  teardownRun,
  type RecreateFacts,
  type RunFacts,
} from '../../src/cli/history.js';
import type { TimelineEntry } from '../../src/workflows/timeline.js';

const wid = 'lws/c1/e2e/demo/group-2/teardown/uid-1';
const t = (s: number) => new Date(Date.UTC(2026, 10, 29, 8, 0, 0) + s).toISOString();

const midRebuild: TimelineEntry[] = [
  { event: 'leader terminating', at: t(0), detail: 'demo-2; policy Parallel from spec' },
  { event: 'workers terminating', at: t(12), detail: 'foreground delete of the worker StatefulSet' },
  { event: 'leader gone', at: t(2010) },
  { event: 'workers gone', at: t(2050) },
];
const afterTeardown: TimelineEntry[] = [
  ...midRebuild,
  { event: 'old StatefulSet gone', at: t(2100) },
  { event: 'new leader', at: t(2200), detail: 'uid-2' },
];

const facts = (over: Partial<RunFacts> = {}): RunFacts => ({
  workflowId: wid,
  runId: 'run-1',
  status: 'COMPLETED',
  startTime: new Date(t(0)),
  closeTime: new Date(t(5000)),
  searchAttributes: {},
  ...over,
});

describe('cli/history: recoveryQuery', () => {
  it('selects both workflow types by ID prefix, the cluster first (search attributes may be unregistered)', () => {
    assert.equal(
      recoveryQuery('c1', { namespace: 'e2e', name: 'demo' }),
      'WorkflowType IN ("teardownGroup", "recreateGroup") AND WorkflowId STARTS_WITH "lws/c1/e2e/demo/"',
    );
  });
});

describe('cli/history: timeline', () => {
  it('reads the resolved policy from the first step', () => {
    assert.equal(policyFromTimeline(midRebuild), 'Parallel');
    assert.equal(policyFromTimeline([{ event: 'leader gone', at: t(0) }]), undefined);
    assert.equal(policyFromTimeline(undefined), undefined);
  });

  it('teardown time only once the timeline shows the teardown is over', () => {
    assert.equal(teardownMsFromTimeline(midRebuild), undefined);
    assert.equal(teardownMsFromTimeline(afterTeardown), 2100);
    assert.equal(
      teardownMsFromTimeline([...midRebuild, { event: 'skipped', at: t(9000), detail: 'no replacement' }]),
      2050,
    );
    assert.equal(teardownMsFromTimeline(undefined), undefined);
    // Instants, not text: ":10.500Z" is after a whole ":10Z", though it sorts before it as text.
    const base = t(0).slice(0, 17);
    const wholeSecond: TimelineEntry[] = [
      { event: 'leader terminating', at: `${base}00.000Z` },
      { event: 'workers gone', at: `${base}10Z` },
      { event: 'leader gone', at: `${base}10.500Z` },
      { event: 'skipped', at: `${base}11.000Z` },
    ];
    assert.equal(teardownMsFromTimeline(wholeSecond), 10_500);
  });
});

describe('cli/history: teardownRun', () => {
  const link = 'http://ui/link';

  it('a completed run: policy, lifecycle and durations come from its result', () => {
    const run = teardownRun(
      facts({
        result: {
          policy: 'Parallel',
          lifecycle: 'rebuild',
          teardownMs: 2100,
          recoveryMs: 3300,
          timeline: afterTeardown,
        },
        searchAttributes: { lifecycle: 'scale-down', policy: 'Sequential', group: 7 },
      }),
      link,
    );
    assert.deepEqual(run, {
      workflowId: wid,
      runId: 'run-1',
      group: 2,
      leaderUid: 'uid-1',
      lifecycle: 'rebuild',
      policy: 'Parallel',
      status: 'COMPLETED',
      startTime: t(0),
      closeTime: t(5000),
      teardownMs: 2100,
      recoveryMs: 3300,
      forceDeleted: undefined,
      lastEvent: 'new leader',
      error: undefined,
      link,
      timeline: afterTeardown,
    });
  });

  it('a running run: the timeline gives the policy, the search attributes the lifecycle', () => {
    const run = teardownRun(
      facts({
        status: 'RUNNING',
        closeTime: undefined,
        timeline: midRebuild,
        searchAttributes: { lifecycle: 'delete' },
      }),
      link,
    );
    assert.equal(run.policy, 'Parallel');
    assert.equal(run.lifecycle, 'delete');
    assert.equal(run.teardownMs, undefined);
    assert.equal(run.lastEvent, 'workers gone');
    assert.equal(run.closeTime, undefined);
  });

  it('without search attributes or a result, the start input fills in', () => {
    const run = teardownRun(
      facts({
        workflowId: 'not-ours',
        status: 'FAILED',
        error: 'Workflow execution failed: boom',
        input: { lifecycle: 'rolling-update', policy: 'Sequential', groupIndex: 4 },
      }),
      link,
    );
    assert.deepEqual(
      [run.group, run.lifecycle, run.policy, run.error],
      [4, 'rolling-update', 'Sequential', 'Workflow execution failed: boom'],
    );
  });

  it('the pods a newer worker force-deleted', () => {
    const forceDeleted = [{ pod: 'demo-2-1', node: 'n1', signal: 'node gone' }];
    const run = teardownRun(facts({ result: { policy: 'Sequential', lifecycle: 'rebuild', forceDeleted } }), link);
    assert.deepEqual(run.forceDeleted, forceDeleted);
  });
});

describe('cli/history: recreateRun', () => {
  const link = 'http://ui/recreate';
  const rid = 'lws/c1/e2e/demo/group-2/recreate/uid-1';
  const recreateFacts = (over: Partial<RecreateFacts> = {}): RecreateFacts => ({
    workflowId: rid,
    runId: 'run-r',
    status: 'COMPLETED',
    startTime: new Date(t(0)),
    closeTime: new Date(t(300)),
    searchAttributes: {},
    ...over,
  });
  const recreated: TimelineEntry[] = [
    { event: 'group recreated', at: t(250), detail: 'a container of demo-2-1 restarted (1 of maxGroupRestarts 3)' },
  ];

  it('a completed run: everything from its result', () => {
    const run = recreateRun(
      recreateFacts({
        result: {
          outcome: 'recreated',
          cause: 'container-restart',
          pod: 'demo-2-1',
          reason: 'a container of demo-2-1 restarted',
          restartCount: 2,
          maxGroupRestarts: 3,
          backoffMs: 10_000,
          timeline: recreated,
        },
      }),
      link,
    );
    assert.deepEqual(run, {
      workflowId: rid,
      runId: 'run-r',
      group: 2,
      leaderUid: 'uid-1',
      recover: false,
      status: 'COMPLETED',
      startTime: t(0),
      closeTime: t(300),
      outcome: 'recreated',
      cause: 'container-restart',
      pod: 'demo-2-1',
      reason: 'a container of demo-2-1 restarted',
      restartCount: 2,
      maxGroupRestarts: 3,
      backoffMs: 10_000,
      lastEvent: 'group recreated',
      error: undefined,
      link,
      timeline: recreated,
    });
  });

  it('a result without backoffMs that deleted the leader waited for nothing', () => {
    const run = recreateRun(recreateFacts({ result: { outcome: 'recreated', reason: 'r', timeline: [] } }), link);
    assert.equal(run.backoffMs, 0);
    const ignored = recreateRun(recreateFacts({ result: { outcome: 'ignored', reason: 'r', timeline: [] } }), link);
    assert.equal(ignored.backoffMs, undefined);
  });

  it('a running recover: the ID says recover, the input the reason', () => {
    const run = recreateRun(
      recreateFacts({
        workflowId: `${rid}/recover`,
        status: 'RUNNING',
        closeTime: undefined,
        timeline: [],
        input: { reason: 'the user asked to recover group 2', recover: true },
      }),
      link,
    );
    assert.deepEqual(
      [run.recover, run.leaderUid, run.outcome, run.reason, run.lastEvent],
      [true, 'uid-1', undefined, 'the user asked to recover group 2', undefined],
    );
  });

  it('an ID of another shape: group and leader from the search attributes and the input', () => {
    const run = recreateRun(
      recreateFacts({
        workflowId: 'not-ours',
        searchAttributes: { group: 5 },
        input: { leader: { namespace: 'e2e', name: 'demo-5', uid: 'uid-9' } },
      }),
      link,
    );
    assert.deepEqual([run.group, run.leaderUid, run.recover], [5, 'uid-9', false]);
  });
});
