import assert from 'node:assert/strict';
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { describe, it } from 'mocha';
import { statusReport } from '../../src/cli/status.js';
import { templateRevisionHash, type LeaderWorkerSet } from '../../src/model/index.js';

const lws: LeaderWorkerSet = {
  metadata: { name: 'demo', namespace: 'e2e', uid: 'lws-uid' },
  spec: {
    replicas: 2,
    podTerminationPolicy: 'Parallel',
    leaderWorkerTemplate: { size: 3, workerTemplate: { spec: { containers: [{ name: 'w', image: 'x' }] } } },
  },
  status: {
    readyReplicas: 1,
    updatedReplicas: 2,
    conditions: [
      {
        type: 'Available',
        status: 'False',
        reason: 'GroupsNotReady',
        message: '1 of 2 groups ready',
        lastTransitionTime: '2026-11-29T08:00:00Z',
        observedGeneration: 1,
      },
    ],
  },
};
const revision = templateRevisionHash(lws.spec);
const ready = { conditions: [{ type: 'Ready', status: 'True' }] };

function pod(
  name: string,
  uid: string,
  labels: Record<string, string>,
  extra: Partial<V1Pod> = {},
  ownerUid?: string,
): V1Pod {
  const ownerReferences = ownerUid
    ? [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'x', uid: ownerUid, controller: true }]
    : undefined;
  return {
    metadata: {
      namespace: 'e2e',
      name,
      uid,
      labels: { 'leaderworkerset.sigs.k8s.io/name': 'demo', ...labels },
      ownerReferences,
    },
    status: ready,
    ...extra,
  };
}
const leaderLabels = {
  'leaderworkerset.sigs.k8s.io/worker-index': '0',
  'leaderworkerset.sigs.k8s.io/template-revision-hash': revision,
};
const sts = (name: string, ownerUid: string | undefined, deleting = false): V1StatefulSet => ({
  metadata: {
    namespace: 'e2e',
    name,
    uid: `sts-${name}`,
    ...(deleting ? { deletionTimestamp: new Date() } : {}),
    ownerReferences: ownerUid
      ? [{ apiVersion: 'v1', kind: 'Pod', name: 'x', uid: ownerUid, controller: true }]
      : undefined,
  },
});

const NOW = Date.parse('2026-12-06T10:00:00.000Z');

describe('cli/status: statusReport', () => {
  it('the LWS header, defaulted, and each group from its pods and worker StatefulSet', () => {
    const pods = [
      pod('demo-0', 'L0', leaderLabels),
      pod('demo-0-1', 'W01', { 'leaderworkerset.sigs.k8s.io/group-index': '0' }, {}, 'sts-demo-0'),
      pod('demo-0-2', 'W02', { 'leaderworkerset.sigs.k8s.io/group-index': '0' }, {}, 'sts-demo-0'),
      pod('demo-1', 'L1', leaderLabels, {
        metadata: { namespace: 'e2e', name: 'demo-1', uid: 'L1', deletionTimestamp: new Date(), labels: leaderLabels },
      }),
      pod('demo-1-1', 'W11', { 'leaderworkerset.sigs.k8s.io/group-index': '1' }, {}, 'sts-demo-1'),
    ];
    const report = statusReport(
      { namespace: 'e2e', name: 'demo' },
      lws,
      pods,
      [
        sts('demo', 'lws-uid'), // the leader StatefulSet is not a group
        sts('demo-0', 'L0'),
        sts('demo-1', 'L1', true),
      ],
      NOW,
    );
    assert.deepEqual(report.lws, {
      namespace: 'e2e',
      name: 'demo',
      policy: 'Parallel',
      replicas: 2,
      size: 3,
      readyReplicas: 1,
      updatedReplicas: 2,
      conditions: [{ type: 'Available', status: 'False', reason: 'GroupsNotReady', message: '1 of 2 groups ready' }],
    });
    assert.deepEqual(
      report.groups.map((g) => [
        g.group,
        g.leaderPod,
        g.phase,
        `${g.readyPods}/${g.size}`,
        g.workerStatefulSet,
        g.revisionUpToDate,
      ]),
      [
        [0, 'demo-0', 'Ready', '3/3', 'demo-0', true],
        [1, 'demo-1', 'Terminating', '1/3', 'demo-1', true],
      ],
    );
  });

  it("defaults: upstream's Default (Sequential), one group of one; no status written yet", () => {
    const bare: LeaderWorkerSet = {
      metadata: { name: 'demo' },
      spec: { leaderWorkerTemplate: { workerTemplate: { spec: { containers: [{ name: 'w', image: 'x' }] } } } },
    };
    const report = statusReport({ namespace: 'e2e', name: 'demo' }, bare, [], [], NOW);
    assert.equal(report.lws.policy, 'Default');
    assert.equal(report.lws.replicas, 1);
    assert.equal(report.lws.readyReplicas, 0);
    assert.deepEqual(report.lws.conditions, []);
    assert.deepEqual(
      report.groups.map((g) => g.phase),
      ['Missing'],
    );
  });

  it('an outdated leader and a not-ready one', () => {
    const pods = [
      pod('demo-0', 'L0', { ...leaderLabels, 'leaderworkerset.sigs.k8s.io/template-revision-hash': 'old' }),
      pod('demo-1', 'L1', leaderLabels, { status: { conditions: [{ type: 'Ready', status: 'False' }] } }),
    ];
    const report = statusReport({ namespace: 'e2e', name: 'demo' }, lws, pods, [], NOW);
    assert.deepEqual(
      report.groups.map((g) => [g.phase, g.revisionUpToDate]),
      [
        ['Provisioning', false],
        ['Provisioning', true],
      ],
    );
  });
  it("restarts and backoff from the leader StatefulSet's annotations, for the leader's revision", () => {
    const revision = leaderLabels['leaderworkerset.sigs.k8s.io/template-revision-hash'];
    const leaderSet = sts('demo', 'lws-uid');
    leaderSet.metadata!.annotations = {
      'leaderworkerset.sigs.k8s.io/group-restart-count': JSON.stringify({ [`${revision}/0`]: 2, [`${revision}/1`]: 1 }),
      'leaderworkerset.sigs.k8s.io/group-recreations': JSON.stringify({
        [`${revision}/0`]: { at: '2026-12-06T10:00:40.000Z', streak: 3 },
        [`${revision}/1`]: { at: '2026-12-06T09:58:00.000Z', streak: 1 },
      }),
    };
    const budgeted: LeaderWorkerSet = {
      ...lws,
      spec: { ...lws.spec, leaderWorkerTemplate: { ...lws.spec.leaderWorkerTemplate, maxGroupRestarts: 4 } },
    };
    const failed = { 'leaderworkerset.sigs.k8s.io/group-failed': 'group 1 was recreated 4 times' };
    const pods = [
      pod('demo-0', 'L0', leaderLabels),
      pod('demo-1', 'L1', leaderLabels, {
        metadata: { namespace: 'e2e', name: 'demo-1', uid: 'L1', labels: leaderLabels, annotations: failed },
      }),
    ];
    const report = statusReport({ namespace: 'e2e', name: 'demo' }, budgeted, pods, [leaderSet], NOW);
    assert.deepEqual(
      report.groups.map((g) => [g.phase, g.restarts, g.backoff]),
      [
        ['Provisioning', { count: 2, max: 4 }, { at: '2026-12-06T10:00:40.000Z', streak: 3 }],
        ['Failed', { count: 1, max: 4 }, undefined],
      ],
    );
  });
});
