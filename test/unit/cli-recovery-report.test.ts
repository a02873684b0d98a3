import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { toJson, type RecreateRun, type TeardownRun } from '../../src/cli/format.js';
import {
  buildRecoveryReport,
  formatRecoveryReport,
  groupSummary,
  joinRuns,
  summaryLine,
  type RecoveryEntry,
  type RecoveryReport,
} from '../../src/cli/recovery-report.js';

const t = (s: number) => new Date(Date.UTC(2026, 10, 29, 8, 0, 0) + s * 1000).toISOString();
const prefix = 'lws/c1/e2e/demo';

function teardown(uid: string, over: Partial<TeardownRun> = {}): TeardownRun {
  const group = over.group ?? 0;
  const workflowId = `${prefix}/group-${group}/teardown/${uid}`;
  return {
    workflowId,
    runId: `run-t-${uid}`,
    group,
    leaderUid: uid,
    lifecycle: 'rebuild',
    policy: 'Parallel',
    status: 'COMPLETED',
    startTime: t(1),
    closeTime: t(10),
    teardownMs: 2140,
    recoveryMs: 3500,
    link: `http://ui/${encodeURIComponent(workflowId)}`,
    timeline: [{ event: 'leader terminating', at: t(1), detail: `demo-${group}; policy Parallel from spec` }],
    ...over,
  };
}

function recreate(uid: string, over: Partial<RecreateRun> = {}): RecreateRun {
  const group = over.group ?? 0;
  const workflowId = `${prefix}/group-${group}/recreate/${uid}${over.recover ? '/recover' : ''}`;
  return {
    workflowId,
    runId: `run-r-${uid}`,
    group,
    leaderUid: uid,
    recover: false,
    status: 'COMPLETED',
    startTime: t(0),
    closeTime: t(1),
    outcome: 'recreated',
    cause: 'container-restart',
    pod: `demo-${group}-1`,
    reason: `a container of demo-${group}-1 restarted`,
    restartCount: 1,
    maxGroupRestarts: 3,
    backoffMs: 0,
    link: `http://ui/${encodeURIComponent(workflowId)}`,
    ...over,
  };
}

/** What a test looks at in an entry: which runs it joined, and what it makes of them. */
const shape = (e: RecoveryEntry) => ({
  runs: [e.recreate?.workflowId.split('/').slice(4).join('/'), e.teardown?.workflowId.split('/').slice(4).join('/')],
  cause: e.cause,
  pod: e.pod,
  outcome: e.outcome,
  notes: e.notes,
});

describe('cli/recovery-report: joinRuns', () => {
  const cases: {
    name: string;
    teardowns: TeardownRun[];
    recreates: RecreateRun[];
    expected: ReturnType<typeof shape>[];
  }[] = [
    {
      name: 'a recreate and the teardown of the leader it deleted are one rebuild',
      teardowns: [teardown('u1')],
      recreates: [recreate('u1')],
      expected: [
        {
          runs: ['group-0/recreate/u1', 'group-0/teardown/u1'],
          cause: 'container-restart',
          pod: 'demo-0-1',
          outcome: 'rebuilt',
          notes: [],
        },
      ],
    },
    {
      name: 'a deleted worker pod',
      teardowns: [teardown('u1')],
      recreates: [
        recreate('u1', { cause: 'pod-deletion', pod: 'demo-0-2', reason: 'worker pod demo-0-2 was deleted' }),
      ],
      expected: [
        {
          runs: ['group-0/recreate/u1', 'group-0/teardown/u1'],
          cause: 'pod-deletion',
          pod: 'demo-0-2',
          outcome: 'rebuilt',
          notes: [],
        },
      ],
    },
    {
      name: 'a teardown alone: the leader was deleted by someone else',
      teardowns: [teardown('u1')],
      recreates: [recreate('u2')],
      expected: [
        {
          runs: [undefined, 'group-0/teardown/u1'],
          cause: 'leader-deletion',
          pod: 'demo-0',
          outcome: 'rebuilt',
          notes: [],
        },
        {
          runs: ['group-0/recreate/u2', undefined],
          cause: 'container-restart',
          pod: 'demo-0-1',
          outcome: 'running',
          notes: ['no teardown run of leader u2 listed yet'],
        },
      ],
    },
    {
      name: 'scale-down, rolling update and deletion are torn down, not rebuilt',
      teardowns: [
        teardown('u1', { lifecycle: 'scale-down', recoveryMs: undefined }),
        teardown('u2', { lifecycle: 'rolling-update', recoveryMs: undefined }),
        teardown('u3', { lifecycle: 'delete', recoveryMs: undefined }),
      ],
      recreates: [],
      expected: (['scale-down', 'rolling-update', 'delete'] as const).map((cause, i) => ({
        runs: [undefined, `group-0/teardown/u${i + 1}`],
        cause,
        pod: 'demo-0',
        outcome: 'torn-down' as const,
        notes: [],
      })),
    },
    {
      name: 'budget spent, then the user recovers: the recover joins the teardown, the failed recreate stands alone',
      teardowns: [teardown('u1', { startTime: t(60) })],
      recreates: [
        recreate('u1', { outcome: 'failed', restartCount: 3, backoffMs: undefined }),
        recreate('u1', {
          recover: true,
          outcome: 'recovered',
          cause: 'recover',
          pod: 'demo-0',
          reason: 'the user asked to recover group 0 (leaderworkerset.sigs.k8s.io/recover=true on demo-0)',
          startTime: t(59),
          restartCount: 0,
        }),
      ],
      expected: [
        {
          runs: ['group-0/recreate/u1/recover', 'group-0/teardown/u1'],
          cause: 'recover',
          pod: 'demo-0',
          outcome: 'rebuilt',
          notes: [],
        },
        {
          runs: ['group-0/recreate/u1', undefined],
          cause: 'container-restart',
          pod: 'demo-0-1',
          outcome: 'budget-spent',
          notes: [],
        },
      ],
    },
    {
      name: 'a recreate ignored because the leader went during its backoff: the teardown is someone else’s',
      teardowns: [teardown('u1')],
      recreates: [
        recreate('u1', {
          outcome: 'ignored',
          backoffMs: 10_000,
          timeline: [{ event: 'skipped', at: t(10), detail: 'leader pod deleted or replaced during the backoff' }],
        }),
      ],
      expected: [
        {
          runs: [undefined, 'group-0/teardown/u1'],
          cause: 'leader-deletion',
          pod: 'demo-0',
          outcome: 'rebuilt',
          notes: [],
        },
        {
          runs: ['group-0/recreate/u1', undefined],
          cause: 'container-restart',
          pod: 'demo-0-1',
          outcome: 'ignored',
          notes: ['ignored: leader pod deleted or replaced during the backoff'],
        },
      ],
    },
    {
      name: 'a recreate still in its backoff, and a running teardown joined to its recreate',
      teardowns: [teardown('u2', { group: 1, status: 'RUNNING', lastEvent: 'leader gone' })],
      recreates: [
        recreate('u1', { status: 'RUNNING', outcome: undefined, lastEvent: 'backing off' }),
        recreate('u2', { group: 1, status: 'RUNNING', outcome: undefined }),
      ],
      expected: [
        {
          runs: ['group-1/recreate/u2', 'group-1/teardown/u2'],
          cause: 'container-restart',
          pod: 'demo-1-1',
          outcome: 'running',
          notes: [],
        },
        {
          runs: ['group-0/recreate/u1', undefined],
          cause: 'container-restart',
          pod: 'demo-0-1',
          outcome: 'running',
          notes: [],
        },
      ],
    },
    {
      name: 'notes: force-deleted pods, no replacement, another lifecycle, errors',
      teardowns: [
        teardown('u1', {
          recoveryMs: undefined,
          forceDeleted: [{ pod: 'demo-0-1', node: 'n1', signal: 'node gone' }],
          timeline: [{ event: 'skipped', at: t(9), detail: 'no replacement group within 30 minutes' }],
        }),
        teardown('u2', { lifecycle: 'rolling-update', recoveryMs: undefined }),
        teardown('u3', { status: 'TERMINATED', error: 'Workflow execution terminated' }),
      ],
      recreates: [recreate('u2'), recreate('u4', { status: 'FAILED', outcome: undefined, error: 'boom' })],
      expected: [
        {
          runs: [undefined, 'group-0/teardown/u1'],
          cause: 'leader-deletion',
          pod: 'demo-0',
          outcome: 'not-rebuilt',
          notes: ['force-deleted demo-0-1 on node n1: node gone', 'no replacement group within 30 minutes'],
        },
        {
          runs: ['group-0/recreate/u2', 'group-0/teardown/u2'],
          cause: 'container-restart',
          pod: 'demo-0-1',
          outcome: 'torn-down',
          notes: ['its teardown was judged a rolling-update'],
        },
        {
          runs: [undefined, 'group-0/teardown/u3'],
          cause: 'leader-deletion',
          pod: 'demo-0',
          outcome: 'error',
          notes: ['teardown run: Workflow execution terminated'],
        },
        {
          runs: ['group-0/recreate/u4', undefined],
          cause: 'container-restart',
          pod: 'demo-0-1',
          outcome: 'error',
          notes: ['recreate run: boom'],
        },
      ],
    },
    {
      name: 'a recreate of unknown cause (neither result nor input read) is kept with its reason',
      teardowns: [],
      recreates: [recreate('u1', { cause: undefined, pod: undefined, reason: 'something new', outcome: 'failed' })],
      expected: [
        {
          runs: ['group-0/recreate/u1', undefined],
          cause: 'unknown',
          pod: undefined,
          outcome: 'budget-spent',
          notes: [],
        },
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(joinRuns('demo', c.teardowns, c.recreates).map(shape), c.expected));
  }

  it('a joined entry: when the failure was seen, the teardown’s policy and times, the recreate’s backoff and budget', () => {
    const [entry] = joinRuns('demo', [teardown('u1')], [recreate('u1', { backoffMs: 20_000, restartCount: 2 })]);
    assert.deepEqual(
      [
        entry?.at,
        entry?.reason,
        entry?.policy,
        entry?.backoffMs,
        entry?.teardownMs,
        entry?.recoveryMs,
        entry?.restartCount,
        entry?.maxGroupRestarts,
        entry?.restartsLeft,
      ],
      [t(0), 'a container of demo-0-1 restarted', 'Parallel', 20_000, 2140, 3500, 2, 3, 1],
    );
  });

  it('a teardown alone starts when its leader’s deletion was made, else at its own start', () => {
    const [fromTimeline, fromStart] = joinRuns('demo', [teardown('u1'), teardown('u2', { timeline: undefined })], []);
    assert.equal(fromTimeline?.at, t(1));
    assert.equal(fromTimeline?.reason, 'leader pod demo-0 was deleted, not by the controller');
    assert.equal(fromStart?.at, t(1));
    assert.equal(fromStart?.restartsLeft, undefined);
  });
});

describe('cli/recovery-report: groupSummary', () => {
  const entries = (teardowns: TeardownRun[], recreates: RecreateRun[]) =>
    joinRuns('demo', teardowns, recreates).sort((a, b) => Date.parse(b.at) - Date.parse(a.at));

  it('counts rebuilds by cause, the restarts among them, and the budget left by the newest recreate', () => {
    const summary = groupSummary(
      entries(
        [teardown('u1'), teardown('u2'), teardown('u3', { startTime: t(300), timeline: [] })],
        [
          recreate('u1', { startTime: t(100), restartCount: 1 }),
          recreate('u2', {
            startTime: t(200),
            restartCount: 2,
            cause: 'pod-deletion',
            pod: 'demo-0-1',
            reason: 'worker pod demo-0-1 was deleted',
          }),
          recreate('u4', { startTime: t(400), outcome: 'failed', restartCount: 3 }),
          recreate('u5', { startTime: t(500), outcome: 'ignored', restartCount: undefined }),
        ],
      ),
    );
    assert.deepEqual(summary, {
      rebuilds: 3,
      fromRestarts: 2,
      byCause: { 'leader-deletion': 1, 'pod-deletion': 1, 'container-restart': 1 },
      budgetSpent: 1,
      budgetSpentAt: t(400),
      ignored: 1,
      since: t(100),
      until: t(300),
      restartsLeft: 0,
      maxGroupRestarts: 3,
    });
  });

  it('without maxGroupRestarts, no budget', () => {
    const summary = groupSummary(
      entries([teardown('u1')], [recreate('u1', { restartCount: undefined, maxGroupRestarts: undefined })]),
    );
    assert.deepEqual([summary.rebuilds, summary.restartsLeft, summary.maxGroupRestarts], [1, undefined, undefined]);
  });

  it('a rolling update after the last recreate starts the count again', () => {
    const summary = groupSummary(
      entries(
        [teardown('u1'), teardown('u2', { lifecycle: 'rolling-update', startTime: t(50), timeline: [] })],
        [recreate('u1', { restartCount: 3 })],
      ),
    );
    assert.deepEqual([summary.restartsLeft, summary.maxGroupRestarts], [3, 3]);
  });
});

describe('cli/recovery-report: buildRecoveryReport', () => {
  it('one entry per group, in group order, each newest first', () => {
    const report = buildRecoveryReport({
      lws: { namespace: 'e2e', name: 'demo' },
      temporalNamespace: 'default',
      teardowns: [teardown('a', { group: 3 }), teardown('b', { group: 0 }), teardown('c', { group: 3 })],
      recreates: [recreate('c', { group: 3, startTime: t(30) })],
    });
    assert.deepEqual(
      report.groups.map((g) => [g.group, g.entries.map((e) => e.teardown?.leaderUid)]),
      [
        [0, ['b']],
        [3, ['c', 'a']],
      ],
    );
  });

  it('no runs, no groups', () => {
    const report = buildRecoveryReport({
      lws: { namespace: 'e2e', name: 'demo' },
      temporalNamespace: 'default',
      teardowns: [],
      recreates: [],
    });
    assert.deepEqual(report, { lws: { namespace: 'e2e', name: 'demo' }, temporalNamespace: 'default', groups: [] });
  });
});

describe('cli/recovery-report: summaryLine', () => {
  const base = { rebuilds: 0, fromRestarts: 0, byCause: {}, budgetSpent: 0, ignored: 0 };
  for (const [name, summary, expected] of [
    ['nothing rebuilt', base, 'group 3: 0 rebuilds; 0 from restarts'],
    [
      'one rebuild, its time',
      { ...base, rebuilds: 1, byCause: { 'leader-deletion': 1 }, since: t(0), until: t(0) },
      'group 3: 1 rebuild at 2026-11-29T08:00:00Z (1 leader deletion); 0 from restarts',
    ],
    [
      'rebuilds, the budget, ignored recreates',
      {
        ...base,
        rebuilds: 3,
        fromRestarts: 2,
        byCause: { 'container-restart': 2, 'scale-down': 1 },
        budgetSpent: 2,
        budgetSpentAt: t(7200),
        ignored: 2,
        since: t(0),
        until: t(3600),
        restartsLeft: 0,
        maxGroupRestarts: 2,
      },
      'group 3: 3 rebuilds from 2026-11-29T08:00:00Z to 2026-11-29T09:00:00Z (2 container restarts, 1 scale-down); ' +
        '2 from restarts; restarts left 0 of 2; budget spent 2 times, last at 2026-11-29T10:00:00Z; ' +
        '2 ignored recreates (in --json)',
    ],
  ] as const) {
    it(name, () => assert.equal(summaryLine(3, summary), expected));
  }
});

describe('cli/recovery-report: formatRecoveryReport', () => {
  const report = buildRecoveryReport({
    lws: { namespace: 'e2e', name: 'demo' },
    temporalNamespace: 'default',
    teardowns: [
      teardown('u1', { timeline: [{ event: 'leader terminating', at: t(60) }] }),
      teardown('u2', { group: 1, policy: 'Sequential', status: 'RUNNING', lastEvent: 'leader gone' }),
      teardown('u3', {
        timeline: [{ event: 'leader terminating', at: t(120) }],
        forceDeleted: [{ pod: 'demo-0-1', node: 'n1', signal: 'node tainted out-of-service' }],
      }),
    ],
    recreates: [
      recreate('u1', { startTime: t(59), backoffMs: 10_000, restartCount: 2 }),
      recreate('u0', { startTime: t(30) }),
      recreate('u9', { startTime: t(200), outcome: 'failed', restartCount: 3, backoffMs: undefined }),
      recreate('u8', { startTime: t(300), outcome: 'ignored', restartCount: undefined, backoffMs: undefined }),
    ],
  });
  const text = formatRecoveryReport(report);
  const lines = text.split('\n');

  it('a summary line per group, then a row per rebuild, newest first, ignored recreates left out', () => {
    assert.equal(
      lines[0],
      'group 0: 3 rebuilds from 2026-11-29T08:00:30Z to 2026-11-29T08:02:00Z (2 container restarts, 1 leader deletion); ' +
        '2 from restarts; restarts left 0 of 3; budget spent at 2026-11-29T08:03:20Z; 1 ignored recreate (in --json)',
    );
    assert.match(lines[1] ?? '', /^ {2}WHEN \(UTC\) +WHY +POLICY +BACKOFF +TEARDOWN +RECOVERY +LEFT +STATUS$/);
    const rows = lines.filter((l) => /^ {2}2026-/.test(l));
    assert.deepEqual(
      rows.map((r) => r.trim().split(/ {2,}/)),
      [
        ['2026-11-29T08:03:20Z', 'container restart (demo-0-1)', '-', '-', '-', '-', '0 of 3', 'budget spent'],
        ['2026-11-29T08:02:00Z', 'leader deleted (demo-0)', 'Parallel', '-', '2.14 s', '3.50 s', '-', 'rebuilt'],
        [
          '2026-11-29T08:00:59Z',
          'container restart (demo-0-1)',
          'Parallel',
          '10.00 s',
          '2.14 s',
          '3.50 s',
          '1 of 3',
          'rebuilt',
        ],
        ['2026-11-29T08:00:30Z', 'container restart (demo-0-1)', '-', '0 ms', '-', '-', '2 of 3', 'running'],
        [
          '2026-11-29T08:00:01Z',
          'leader deleted (demo-1)',
          'Sequential',
          '-',
          '2.14 s',
          '3.50 s',
          '-',
          'running: leader gone',
        ],
      ],
    );
    assert.ok(!text.includes('u8'), 'the ignored recreate is only in --json');
  });

  it('notes and both Web UI links under their row', () => {
    const joined = lines.findIndex((l) => l.startsWith('  2026-11-29T08:00:59Z'));
    assert.deepEqual(lines.slice(joined + 1, joined + 3), [
      `      recreate  http://ui/${encodeURIComponent(`${prefix}/group-0/recreate/u1`)}`,
      `      teardown  http://ui/${encodeURIComponent(`${prefix}/group-0/teardown/u1`)}`,
    ]);
    const forced = lines.findIndex((l) => l.startsWith('  2026-11-29T08:02:00Z'));
    assert.deepEqual(lines.slice(forced + 1, forced + 3), [
      '      note: force-deleted demo-0-1 on node n1: node tainted out-of-service',
      `      teardown  http://ui/${encodeURIComponent(`${prefix}/group-0/teardown/u3`)}`,
    ]);
    const pending = lines.findIndex((l) => l.startsWith('  2026-11-29T08:00:30Z'));
    assert.equal(lines[pending + 1], '      note: no teardown run of leader u0 listed yet');
  });

  it('groups apart by a blank line', () => {
    const second = lines.findIndex((l) => l.startsWith('group 1: '));
    assert.equal(lines[second - 1], '');
    assert.equal(lines[second], 'group 1: 1 rebuild at 2026-11-29T08:00:01Z (1 leader deletion); 0 from restarts');
    assert.ok(text.endsWith('\n') && !text.endsWith('\n\n'));
  });

  it('says so when there is no run', () => {
    assert.equal(
      formatRecoveryReport({ lws: { namespace: 'e2e', name: 'demo' }, temporalNamespace: 'default', groups: [] }),
      'no recreate or teardown runs of e2e/demo in Temporal namespace default\n',
    );
  });

  it('--json: groups with their summary and entries, each entry with its runs; numbers stay numbers', () => {
    const parsed = JSON.parse(toJson(report)) as RecoveryReport;
    assert.deepEqual(Object.keys(parsed), ['lws', 'temporalNamespace', 'groups']);
    assert.deepEqual(
      parsed.groups.map((g) => g.group),
      [0, 1],
    );
    const group0 = parsed.groups[0]!;
    assert.deepEqual(Object.keys(group0), ['group', 'summary', 'entries']);
    assert.equal(group0.entries.length, 5, 'the ignored recreate too');
    assert.equal(group0.entries[0]?.outcome, 'ignored');
    const joined = group0.entries.find((e) => e.recreate?.leaderUid === 'u1')!;
    assert.deepEqual(Object.keys(joined), [
      'at',
      'cause',
      'pod',
      'reason',
      'outcome',
      'policy',
      'backoffMs',
      'teardownMs',
      'recoveryMs',
      'restartCount',
      'maxGroupRestarts',
      'restartsLeft',
      'notes',
      'recreate',
      'teardown',
    ]);
    assert.equal(joined.backoffMs, 10_000);
    assert.equal(joined.teardown?.link, `http://ui/${encodeURIComponent(`${prefix}/group-0/teardown/u1`)}`);
    assert.equal(joined.recreate?.link, `http://ui/${encodeURIComponent(`${prefix}/group-0/recreate/u1`)}`);
    const alone = group0.entries.find((e) => e.cause === 'leader-deletion')!;
    assert.equal('recreate' in alone, false, 'what is unknown is left out');
    assert.equal('backoffMs' in alone, false);
  });
});
