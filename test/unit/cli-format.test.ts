import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import {
  formatDuration,
  formatHistory,
  formatStatus,
  formatTime,
  table,
  toJson,
  workflowLink,
  type HistoryReport,
  type StatusReport,
  type TeardownRun,
} from '../../src/cli/format.js';

const wid = 'lws/c1/e2e/demo/group-0/teardown/3f1c-uid';

describe('cli/format: workflowLink', () => {
  it('encodes the workflow ID (it has slashes) as one path segment', () => {
    assert.equal(
      workflowLink('http://localhost:8233', 'default', wid, 'run-1'),
      'http://localhost:8233/namespaces/default/workflows/lws%2Fc1%2Fe2e%2Fdemo%2Fgroup-0%2Fteardown%2F3f1c-uid/run-1/history',
    );
  });

  it('drops trailing slashes of the base and keeps a path prefix', () => {
    assert.equal(
      workflowLink('https://temporal.example.com/ui//', 'prod ns', 'a/b', 'r'),
      'https://temporal.example.com/ui/namespaces/prod%20ns/workflows/a%2Fb/r/history',
    );
  });
});

describe('cli/format: durations and times', () => {
  for (const [ms, text] of [
    [undefined, '-'],
    [Number.NaN, '-'],
    [0, '0 ms'],
    [850, '850 ms'],
    [999.4, '999 ms'],
    [1000, '1.00 s'],
    [5123, '5.12 s'],
    [95_000, '1m 35.0s'],
  ] as const) {
    it(`${String(ms)} -> ${text}`, () => assert.equal(formatDuration(ms), text));
  }

  it('times in UTC to whole seconds', () => {
    assert.equal(formatTime('2026-11-29T08:42:26.123Z'), '2026-11-29T08:42:26Z');
    assert.equal(formatTime(undefined), '-');
    assert.equal(formatTime('not a time'), 'not a time');
  });
});

describe('cli/format: table', () => {
  it('pads every column but the last', () => {
    assert.equal(
      table(
        ['A', 'LONGER', 'LINK'],
        [
          ['1', 'x', 'http://a'],
          ['22', 'yy', 'http://bbbb'],
        ],
      ),
      'A   LONGER  LINK\n1   x       http://a\n22  yy      http://bbbb\n',
    );
  });
});

const statusReport: StatusReport = {
  lws: {
    namespace: 'e2e',
    name: 'demo',
    policy: 'Parallel',
    replicas: 2,
    size: 2,
    readyReplicas: 1,
    updatedReplicas: 2,
    conditions: [
      { type: 'Available', status: 'False', reason: 'GroupsNotReady', message: '1 of 2 groups ready' },
      { type: 'Progressing', status: 'True', reason: 'GroupsProgressing', message: '' },
    ],
  },
  groups: [
    {
      group: 0,
      leaderPod: 'demo-0',
      phase: 'Ready',
      readyPods: 2,
      size: 2,
      workerStatefulSet: 'demo-0',
      revisionUpToDate: true,
    },
    { group: 1, phase: 'Missing', readyPods: 0, size: 2 },
  ],
};

describe('cli/format: status', () => {
  it('prints the LWS header and one row per group', () => {
    assert.equal(
      formatStatus(statusReport),
      [
        'LeaderWorkerSet  e2e/demo',
        'Policy           Parallel',
        'Replicas         2 (ready 1, updated 2), size 2',
        'Conditions       Available=False  GroupsNotReady: 1 of 2 groups ready',
        '                 Progressing=True  GroupsProgressing',
        '',
        'GROUP  LEADER  PHASE    READY  WORKER STATEFULSET  UP TO DATE',
        '0      demo-0  Ready    2/2    demo-0              yes',
        '1      -       Missing  0/2    -                   -',
        '',
      ].join('\n'),
    );
  });

  it('a StatefulSet the API server refused: its ReplicaFailure condition with reason and message', () => {
    const message =
      'group 0: the API server refused worker StatefulSet default/demo-0 (HTTP 422), built from ' +
      'spec.leaderWorkerTemplate.workerTemplate: spec.template.spec.restartPolicy: Unsupported value: "Never"';
    const refused = { type: 'ReplicaFailure', status: 'True', reason: 'InvalidWorkerTemplate', message };
    const text = formatStatus({ lws: { ...statusReport.lws, conditions: [refused] }, groups: [] });
    assert.ok(text.includes(`Conditions       ReplicaFailure=True  InvalidWorkerTemplate: ${message}\n`), text);
  });

  it('says so when there are no conditions or groups yet', () => {
    const text = formatStatus({ lws: { ...statusReport.lws, conditions: [] }, groups: [] });
    assert.match(text, /Conditions {7}\(none yet\)\n/);
    assert.match(text, /\n\nno groups\n$/);
  });

  it('--json is the report itself, indented, one trailing newline', () => {
    const text = toJson(statusReport);
    assert.deepEqual(JSON.parse(text), JSON.parse(JSON.stringify(statusReport)));
    assert.ok(text.endsWith('}\n') && text.includes('\n  "groups": ['));
  });
});

const completed: TeardownRun = {
  workflowId: wid,
  runId: 'run-1',
  group: 0,
  lifecycle: 'rebuild',
  policy: 'Parallel',
  status: 'COMPLETED',
  startTime: '2026-11-29T08:40:00.500Z',
  closeTime: '2026-11-29T08:40:05.000Z',
  teardownMs: 2140,
  recoveryMs: 3500,
  lastEvent: 'new group ready',
  link: workflowLink('http://localhost:8233', 'default', wid, 'run-1'),
};
const running: TeardownRun = {
  workflowId: 'lws/c1/e2e/demo/group-1/teardown/u2',
  runId: 'run-2',
  group: 1,
  lifecycle: 'scale-down',
  policy: 'Sequential',
  status: 'RUNNING',
  startTime: '2026-11-29T08:41:00.000Z',
  lastEvent: 'leader gone',
  link: 'http://ui/x',
};

describe('cli/format: history', () => {
  const report: HistoryReport = { lws: { namespace: 'e2e', name: 'demo' }, temporalNamespace: 'default', runs: [] };

  it('one row per run, with the policy, durations, status and link', () => {
    const text = formatHistory({ ...report, runs: [running, { ...completed }] });
    const lines = text.trimEnd().split('\n');
    assert.equal(lines.length, 3);
    assert.match(lines[0] ?? '', /^GROUP +LIFECYCLE +POLICY +STATUS +STARTED \(UTC\) +TEARDOWN +RECOVERY +WEB UI$/);
    assert.match(
      lines[1] ?? '',
      /^1 +scale-down +Sequential +running: leader gone +2026-11-29T08:41:00Z +- +- +http:\/\/ui\/x$/,
    );
    assert.match(
      lines[2] ?? '',
      /^0 +rebuild +Parallel +completed +2026-11-29T08:40:00Z +2\.14 s +3\.50 s +http:\/\/localhost/,
    );
    assert.ok(lines[2]?.endsWith(completed.link));
  });

  it('lists errors under the table, and lowercases statuses', () => {
    const failed: TeardownRun = { ...completed, status: 'TIMED_OUT', teardownMs: undefined, error: 'boom' };
    const text = formatHistory({ ...report, runs: [failed] });
    assert.match(text, / timed-out /);
    assert.ok(text.endsWith(`\n\n${wid} (run-1): boom\n`));
  });

  it('says so when there is no run', () => {
    assert.equal(formatHistory(report), 'no teardown runs of e2e/demo in Temporal namespace default\n');
  });

  it('--json keeps numbers as numbers and omits what is unknown', () => {
    const parsed = JSON.parse(toJson({ ...report, runs: [running] })) as HistoryReport;
    assert.deepEqual(parsed.runs[0], running);
    assert.equal('teardownMs' in (parsed.runs[0] ?? {}), false);
    assert.deepEqual(parsed.lws, { namespace: 'e2e', name: 'demo' });
  });
});
