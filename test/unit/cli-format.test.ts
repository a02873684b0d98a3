import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import {
  formatDuration,
  formatStatus,
  formatTime,
  table,
  toJson,
  workflowLink,
  type StatusReport,
} from '../../src/cli/format.js';
import type { GroupRow } from '../../src/cli/phase.js';

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
        'GROUP  LEADER  PHASE    READY  WORKER STATEFULSET  UP TO DATE  RESTARTS',
        '0      demo-0  Ready    2/2    demo-0              yes         -',
        '1      -       Missing  0/2    -                   -           -',
        '',
      ].join('\n'),
    );
  });

  it('restarts against the budget, and when a group waiting in backoff is recreated', () => {
    const [ready, missing] = statusReport.groups as [GroupRow, GroupRow];
    const groups: GroupRow[] = [
      {
        ...ready,
        phase: 'Provisioning',
        restarts: { count: 3, max: 5 },
        backoff: { at: '2026-12-06T10:02:13.000Z', streak: 3 },
      },
      { ...missing, restarts: { count: 1 } },
    ];
    const lines = formatStatus({ ...statusReport, groups })
      .split('\n')
      .slice(-4);
    assert.deepEqual(lines, [
      'GROUP  LEADER  PHASE         READY  WORKER STATEFULSET  UP TO DATE  RESTARTS  RECREATED AT (BACKOFF)',
      '0      demo-0  Provisioning  2/2    demo-0              yes         3/5       2026-12-06T10:02:13.000Z (3rd in a row)',
      '1      -       Missing       0/2    -                   -           1         -',
      '',
    ]);
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
