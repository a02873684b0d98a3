import assert from 'node:assert/strict';
import type { WorkflowService } from '@temporalio/client';
import type { Logger } from '../../src/log.js';
import { drainPinnedRuns, pinnedRunsQuery, type DrainOutcome } from '../../src/worker/drain.js';

const version = { deploymentName: 'lws-temporal-east', buildId: '0.1.0-abc' };

/** One answer of the fake server per poll: a version status and a count of pinned runs, or a failure. */
type Answer = { status: number; open?: number } | 'fail' | 'hang';

/** A server that answers `answers` in turn (the last one again once they run out), and what it was asked. */
function fakeService(answers: Answer[]) {
  const queries: string[] = [];
  let poll = 0;
  const answer = () => answers[Math.min(poll, answers.length - 1)]!;
  const service = {
    async describeWorkerDeploymentVersion() {
      const a = answer();
      if (a === 'hang') return new Promise(() => undefined);
      if (a === 'fail') {
        poll++;
        throw new Error('14 UNAVAILABLE');
      }
      if (a.open === undefined) poll++;
      return { workerDeploymentVersionInfo: { status: a.status } };
    },
    async countWorkflowExecutions({ query }: { query: string }) {
      queries.push(query);
      const a = answer();
      poll++;
      return { count: typeof a === 'object' ? a.open : 0 };
    },
  };
  return { service: service as unknown as WorkflowService, queries, polls: () => poll };
}

function recordingLog() {
  const lines: { msg: string; fields?: Record<string, unknown> }[] = [];
  const log: Logger = {
    debug() {},
    info: (msg, fields) => void lines.push({ msg, fields }),
    warn: (msg, fields) => void lines.push({ msg, fields }),
    error() {},
    child: () => log,
  };
  return { log, lines };
}

const CURRENT = 2;
const RAMPING = 3;
const DRAINING = 4;

describe('the worker drains the runs pinned to its build on SIGTERM (src/worker/drain.ts)', () => {
  it('asks for the open pinned runs of its own version only, quoted', () => {
    assert.equal(
      pinnedRunsQuery(version),
      "ExecutionStatus = 'Running' AND TemporalWorkflowVersioningBehavior = 'Pinned' AND " +
        "TemporalWorkerDeploymentVersion = 'lws-temporal-east:0.1.0-abc'",
    );
    assert.match(pinnedRunsQuery({ deploymentName: "it's", buildId: 'b' }), /= 'it''s:b'$/);
  });

  const cases: { name: string; answers: Answer[]; outcome: DrainOutcome; polls: number; interruptAfter?: number }[] = [
    {
      name: 'a current build stops at once (a pod restart)',
      answers: [{ status: CURRENT }],
      outcome: 'current',
      polls: 1,
    },
    { name: 'so does a ramping one', answers: [{ status: RAMPING }], outcome: 'current', polls: 1 },
    {
      name: 'an old build waits until no run is pinned to it',
      answers: [
        { status: DRAINING, open: 2 },
        { status: DRAINING, open: 1 },
        { status: DRAINING, open: 0 },
      ],
      outcome: 'drained',
      polls: 3,
    },
    {
      name: 'a failed call is asked again',
      answers: ['fail', { status: DRAINING, open: 1 }, 'fail', { status: DRAINING, open: 0 }],
      outcome: 'drained',
      polls: 4,
    },
    {
      name: 'a build made current again while it drains stops waiting (a rollback)',
      answers: [{ status: DRAINING, open: 3 }, { status: CURRENT }],
      outcome: 'current',
      polls: 2,
    },
    { name: 'a server that never answers ends the drain', answers: ['fail'], outcome: 'unreachable', polls: 5 },
    { name: 'a server that hangs ends it too', answers: ['hang'], outcome: 'unreachable', polls: 0 },
    {
      name: 'a second signal ends it',
      answers: [{ status: DRAINING, open: 1 }],
      outcome: 'interrupted',
      polls: 2,
      interruptAfter: 2,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const { service, queries, polls } = fakeService(c.answers);
      const { log, lines } = recordingLog();
      const outcome = await drainPinnedRuns({
        service,
        namespace: 'default',
        version,
        log,
        interrupted: () => c.interruptAfter !== undefined && polls() >= c.interruptAfter,
        intervalMs: 1,
        callMs: 20,
        unreachableMs: 50,
      });
      assert.equal(outcome, c.outcome);
      if (c.outcome !== 'unreachable') assert.equal(polls(), c.polls);
      assert.ok(queries.every((q) => q === pinnedRunsQuery(version)));
      const draining = lines.filter((l) => l.msg.startsWith('draining'));
      const waited = c.answers.some((a) => typeof a === 'object' && (a.open ?? 0) > 0);
      // Progress is told at the first wait (then every 15 s): once here.
      assert.equal(draining.length, waited ? 1 : 0);
      if (waited) assert.equal(typeof draining[0]!.fields?.open, 'number');
      if (c.outcome === 'unreachable') assert.match(lines.at(-1)!.msg, /stopping without draining/);
    });
  }
});
