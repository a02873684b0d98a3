import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import {
  ANNOTATION_SIZE,
  ANNOTATION_WORKERS_REFUSED,
  computeStatus,
  conditionEvent,
  groupStates,
  LABEL_GROUP_INDEX,
  LABEL_NAME,
  LABEL_TEMPLATE_REVISION_HASH,
  leaderFactsOf,
  lwsFacts,
  statusCounts,
  templateRevisionHash,
  workerSetFactsOf,
  type Condition,
  type LeaderFacts,
  type LeaderWorkerSet,
  type LeaderWorkerSetStatus,
  type PodFacts,
  type StatefulSetFacts,
  type WorkerSetFacts,
} from '../../src/model/index.js';
import { sampleLws } from './model-fixtures.js';

// sampleLws: default/demo, generation 3, replicas 2, size 4.
const lws = sampleLws();
const current = templateRevisionHash(lws.spec);
const T0 = '2025-01-01T00:00:00Z';
const NOW = '2025-01-02T00:00:00Z';

/**
 * One group per letter, by index: n new and Ready, u new and not Ready, o old and Ready, x old and not Ready,
 * w new leader without its worker StatefulSet yet, t terminating, . none.
 */
function cluster(letters: string, size = 4): { leaders: LeaderFacts[]; sets: WorkerSetFacts[] } {
  const leaders: LeaderFacts[] = [];
  const sets: WorkerSetFacts[] = [];
  [...letters].forEach((c, i) => {
    if (c === '.') return;
    const hash = c === 'o' || c === 'x' ? 'old' : current;
    const ready = c === 'n' || c === 'o';
    leaders.push({
      name: `demo-${i}`,
      uid: `leader-${i}`,
      labels: { [LABEL_TEMPLATE_REVISION_HASH]: hash },
      annotations: { [ANNOTATION_SIZE]: String(size) },
      ready: c !== 'x',
      phase: 'Running',
      ...(c === 't' && { deletionTimestamp: T0 }),
    });
    if (c === 'w') return;
    sets.push({
      name: `demo-${i}`,
      ownerUid: `leader-${i}`,
      labels: { [LABEL_TEMPLATE_REVISION_HASH]: hash },
      replicas: size - 1,
      readyReplicas: ready ? size - 1 : 0,
      availableReplicas: ready ? size - 1 : 0,
      rolledOut: true,
    });
  });
  return { leaders, sets };
}

// The rules take the LWS's facts (model/lws-facts.ts), as the reconcile reads them.
const facts = lwsFacts(lws);

function statusOf(l: LeaderWorkerSet, letters: string, now = NOW, statusReplicas = letters.length) {
  const { leaders, sets } = cluster(letters);
  const f = lwsFacts(l);
  return computeStatus(f, statusCounts(f, groupStates(f, leaders, sets)), { statusReplicas }, now);
}

const byType = (s: LeaderWorkerSetStatus): Record<string, Condition> =>
  Object.fromEntries((s.conditions ?? []).map((c) => [c.type, c]));

/** Each condition as `Type=Status`, in order; `-` for one absent. */
const summary = (s: LeaderWorkerSetStatus) =>
  ['Available', 'Progressing', 'UpdateInProgress'].map((t) => `${t}=${byType(s)[t]?.status ?? '-'}`).join(' ');

describe('model/status (upstream semantics)', () => {
  // [case, replicas, partition, groups, ready, updated, conditions]
  const rows: Array<[string, number, number, string, number, number, string]> = [
    ['all groups Ready on the current revision', 2, 0, 'nn', 2, 2, 'Available=True Progressing=- UpdateInProgress=-'],
    ['one group not Ready', 2, 0, 'nu', 1, 2, 'Available=- Progressing=True UpdateInProgress=-'],
    [
      'a group without its worker StatefulSet is not counted',
      2,
      0,
      'nw',
      1,
      1,
      'Available=- Progressing=True UpdateInProgress=-',
    ],
    ['an old group in range: rolling', 2, 0, 'on', 2, 1, 'Available=- Progressing=True UpdateInProgress=True'],
    [
      'a surge group counts as Ready and updated',
      2,
      0,
      'onn',
      3,
      2,
      'Available=- Progressing=True UpdateInProgress=True',
    ],
    [
      'a user partition: old groups below it are not an update in progress',
      3,
      2,
      'oon',
      3,
      1,
      'Available=True Progressing=- UpdateInProgress=-',
    ],
    ['a terminating leader is not counted', 2, 0, 'tn', 1, 1, 'Available=- Progressing=True UpdateInProgress=-'],
  ];
  for (const [name, replicas, partition, letters, ready, updated, conditions] of rows) {
    it(`${name} (${letters})`, () => {
      const l = sampleLws({ replicas, rolloutStrategy: { rollingUpdateConfiguration: { partition } } });
      const status = statusOf(l, letters);
      assert.equal(status.readyReplicas, ready);
      assert.equal(status.updatedReplicas, updated);
      assert.equal(summary(status), conditions);
    });
  }

  it('uses upstream reasons and messages', () => {
    const rolling = byType(statusOf(lws, 'on'));
    assert.deepEqual(
      [rolling['UpdateInProgress']?.reason, rolling['UpdateInProgress']?.message],
      ['GroupsUpdating', 'Rolling Upgrade is in progress'],
    );
    assert.deepEqual(
      [rolling['Progressing']?.reason, rolling['Progressing']?.message],
      ['GroupsProgressing', 'Replicas are progressing'],
    );
    const done = byType(statusOf(lws, 'nn'));
    assert.deepEqual(
      [done['Available']?.reason, done['Available']?.message],
      ['AllGroupsReady', 'All replicas are ready'],
    );
  });

  it('Available turns the other two False; they stay, as upstream, never removed', () => {
    const during = statusOf(lws, 'on', T0);
    const after = statusOf({ ...lws, status: during }, 'nn');
    assert.equal(summary(after), 'Available=True Progressing=False UpdateInProgress=False');
    const again = statusOf({ ...lws, status: after }, 'nu');
    assert.equal(summary(again), 'Available=False Progressing=True UpdateInProgress=False');
  });

  it('UpdateInProgress stays True until Available, as upstream (only Available excludes it)', () => {
    const during = statusOf(lws, 'on', T0);
    assert.equal(
      summary(statusOf({ ...lws, status: during }, 'nu')),
      'Available=- Progressing=True UpdateInProgress=True',
    );
  });

  it('lastTransitionTime moves only when a status flips, also across generations', () => {
    const first = statusOf(lws, 'nn', T0);
    const next = statusOf({ ...lws, metadata: { ...lws.metadata, generation: 4 }, status: first }, 'nn');
    assert.equal(byType(next)['Available']?.lastTransitionTime, T0);
    assert.equal(byType(next)['Available']?.observedGeneration, 4);
  });

  it('status.replicas is the leader StatefulSet status.replicas (surge groups included)', () => {
    assert.equal(statusOf(lws, 'onn', NOW, 3).replicas, 3);
    const { leaders, sets } = cluster('nn');
    const counts = statusCounts(facts, groupStates(facts, leaders, sets));
    assert.equal(computeStatus(facts, counts, undefined, NOW).replicas, 0);
  });

  it('updated needs the worker StatefulSet on the current revision too', () => {
    const { leaders, sets } = cluster('nn');
    sets[1]!.labels = { [LABEL_TEMPLATE_REVISION_HASH]: 'old' };
    assert.equal(statusCounts(facts, groupStates(facts, leaders, sets)).updated, 1);
  });

  it('judges a group by its own size: an old group of size 2 with its one worker is Ready under spec size 3', () => {
    const l = sampleLws({ leaderWorkerTemplate: { ...lws.spec.leaderWorkerTemplate, size: 3 } });
    const { leaders, sets } = cluster('oo', 2);
    assert.deepEqual(
      groupStates(lwsFacts(l), leaders, sets).map((g) => [g.ready, g.updated]),
      [
        [true, false],
        [true, false],
      ],
    );
  });

  it('a worker StatefulSet still rolling its own pods is not Ready (upstream StatefulsetReady)', () => {
    const { leaders, sets } = cluster('n');
    sets[0]!.rolledOut = false;
    assert.equal(groupStates(facts, leaders, sets)[0]?.ready, false);
  });

  it('a leader not Running is not Ready', () => {
    const { leaders, sets } = cluster('n');
    leaders[0]!.phase = 'Pending';
    assert.equal(groupStates(facts, leaders, sets)[0]?.ready, false);
  });

  it('updateDone only at partition 0 with every group updated and Ready', () => {
    const done = (l: LeaderWorkerSet, letters: string) => {
      const { leaders, sets } = cluster(letters);
      const f = lwsFacts(l);
      return statusCounts(f, groupStates(f, leaders, sets)).updateDone;
    };
    assert.equal(done(lws, 'nn'), true);
    assert.equal(done(lws, 'nu'), false);
    assert.equal(done(sampleLws({ rolloutStrategy: { rollingUpdateConfiguration: { partition: 1 } } }), 'nn'), false);
  });

  it('tells a condition turned True as an Event, with the Ready count', () => {
    const { leaders, sets } = cluster('nn');
    const counts = statusCounts(facts, groupStates(facts, leaders, sets));
    assert.deepEqual(conditionEvent(facts, counts), {
      reason: 'AllGroupsReady',
      message: 'All replicas are ready, with 2 groups ready of total 2 groups',
    });
    const after = { ...facts, status: computeStatus(facts, counts, { statusReplicas: 2 }, NOW) };
    assert.equal(conditionEvent(after, counts), undefined);
  });
});

describe('model/status: what a reconcile pass records of each group', () => {
  const leader: PodFacts = {
    namespace: 'ns',
    name: 'demo-1',
    uid: 'l3',
    labels: {
      [LABEL_NAME]: 'demo',
      [LABEL_GROUP_INDEX]: '1',
      [LABEL_TEMPLATE_REVISION_HASH]: 'abc',
      'leaderworkerset.sigs.k8s.io/group-key': 'f'.repeat(40),
    },
    annotations: { [ANNOTATION_SIZE]: '4', [ANNOTATION_WORKERS_REFUSED]: 'cpu: banana', other: 'x' },
    createdAt: '2026-12-03T07:00:00Z',
    deletionTimestamp: '2026-12-03T07:01:00Z',
    deletionGracePeriodSeconds: 60,
    ready: true,
    phase: 'Running',
    restartCount: 2,
    ownerUid: 'sts',
  };
  const workers: StatefulSetFacts = {
    namespace: 'ns',
    name: 'demo-1',
    uid: 'w3',
    labels: { [LABEL_NAME]: 'demo', [LABEL_TEMPLATE_REVISION_HASH]: 'abc' },
    ownerUid: 'l3',
    replicas: 3,
    readyReplicas: 2,
    availableReplicas: 2,
    rolledOut: true,
  };

  it('a leader: identity, readiness, deletion, its revision, size and refusal; nothing else', () => {
    assert.deepEqual(leaderFactsOf(leader), {
      name: 'demo-1',
      uid: 'l3',
      labels: { [LABEL_TEMPLATE_REVISION_HASH]: 'abc' },
      annotations: { [ANNOTATION_SIZE]: '4', [ANNOTATION_WORKERS_REFUSED]: 'cpu: banana' },
      ready: true,
      phase: 'Running',
      deletionTimestamp: '2026-12-03T07:01:00Z',
    });
  });

  it('a worker StatefulSet: name, owner, revision and counts', () => {
    assert.deepEqual(workerSetFactsOf(workers), {
      name: 'demo-1',
      ownerUid: 'l3',
      labels: { [LABEL_TEMPLATE_REVISION_HASH]: 'abc' },
      replicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      rolledOut: true,
    });
  });

  it('the groups judged from the records as from the full facts', () => {
    const { deletionTimestamp: _, ...live } = leader;
    const current = { [LABEL_TEMPLATE_REVISION_HASH]: facts.revision };
    const on = { ...live, labels: { ...live.labels, ...current }, annotations: { [ANNOTATION_SIZE]: '4' } };
    const sts = { ...workers, labels: { ...workers.labels, ...current }, readyReplicas: 3, availableReplicas: 3 };
    const full = groupStates(facts, [on], [sts]);
    assert.deepEqual(full, [{ groupIndex: 1, terminating: false, formed: true, ready: true, updated: true }]);
    assert.deepEqual(groupStates(facts, [leaderFactsOf(on)], [workerSetFactsOf(sts)]), full);
  });
});
