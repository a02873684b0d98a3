// recreateGroup against a fake cluster: the restart policy decides whether a pod restart rebuilds the whole group,
// which the workflow does by deleting the leader pod (that incarnation only: uid precondition).
import assert from 'node:assert/strict';
import type { RestartPolicy } from '../../src/model/index.js';
import type { RecreateGroupInput, recreateGroup } from '../../src/workflows/recreate-group.js';
import { identityOf, type FakeCluster } from '../fixtures/fake-activities.js';
import { useWorkflowTestEnv } from './harness.js';

describe('recreateGroup (time-skipping, fake cluster)', function () {
  this.timeout(60_000);
  const t = useWorkflowTestEnv();

  const recreate = (fake: FakeCluster, input: RecreateGroupInput, keep?: string) =>
    t.runToEnd<typeof recreateGroup>(fake, 'recreateGroup', input, keep);

  async function readyGroup(restartPolicy: RestartPolicy | undefined) {
    const fake = t.fake();
    fake.setLws({
      leaderWorkerTemplate: {
        size: 4,
        workerTemplate: { spec: { containers: [{ name: 'worker', image: 'nginx:latest' }] } },
        ...(restartPolicy ? { restartPolicy } : {}),
      },
    });
    const now = await fake.now();
    const leader = fake.addLeader({ groupIndex: 0, at: now - 60_000, readyAt: now - 60_000 });
    fake.addWorkers({ groupIndex: 0, ownerUid: leader.uid, at: now - 60_000 });
    return { fake, leader, now };
  }

  const cases: { restartPolicy?: RestartPolicy; groupHadStarted: boolean; outcome: 'recreated' | 'ignored' }[] = [
    { restartPolicy: 'None', groupHadStarted: true, outcome: 'ignored' },
    { restartPolicy: 'None', groupHadStarted: false, outcome: 'ignored' },
    { restartPolicy: 'RecreateGroupOnPodRestart', groupHadStarted: true, outcome: 'recreated' },
    { restartPolicy: 'RecreateGroupOnPodRestart', groupHadStarted: false, outcome: 'recreated' },
    { restartPolicy: 'RecreateGroupAfterStart', groupHadStarted: true, outcome: 'recreated' },
    { restartPolicy: 'RecreateGroupAfterStart', groupHadStarted: false, outcome: 'ignored' },
    // The default is RecreateGroupOnPodRestart.
    { groupHadStarted: false, outcome: 'recreated' },
  ];

  for (const c of cases) {
    const policy = c.restartPolicy ?? 'default';
    it(`${policy}, group ${c.groupHadStarted ? 'had started' : 'had not started'}: ${c.outcome}`, async () => {
      const { fake, leader, now } = await readyGroup(c.restartPolicy);
      const result = await recreate(
        fake,
        {
          ref: fake.ref,
          groupIndex: 0,
          leader: identityOf(leader),
          reason: 'container worker of demo-0-2 restarted',
          groupHadStarted: c.groupHadStarted,
        },
        c.outcome === 'recreated' && c.restartPolicy === undefined ? 'recreateGroup-lws-facts-recreated' : undefined,
      );

      assert.equal(result.outcome, c.outcome);
      const deletes = fake.callsOf('deletePod');
      if (c.outcome === 'recreated') {
        // Exactly this incarnation of the leader, by uid; its workers follow through the teardown.
        assert.deepEqual(
          deletes.map((d) => [d.args[0], d.result]),
          [[identityOf(leader), 'deleted']],
        );
        assert.ok(leader.deletedAt !== undefined && leader.deletedAt >= now);
        assert.equal(fake.callsOf('deleteWorkerStatefulSet').length, 0);
        assert.deepEqual(
          fake.events.map((e) => [e.reason, e.type]),
          [['GroupRecreated', 'Normal']],
        );
        assert.match(fake.events[0]!.message, /container worker of demo-0-2 restarted/);
        assert.deepEqual(
          result.timeline.map((e) => e.event),
          ['group recreated'],
        );
      } else {
        assert.equal(deletes.length, 0);
        assert.equal(leader.deletionTimestamp, undefined);
        assert.equal(fake.events.length, 0);
        assert.deepEqual(
          result.timeline.map((e) => e.event),
          ['skipped'],
        );
      }
    });
  }

  it('a leader already replaced by a newer pod is not deleted (uid precondition): ignored', async () => {
    const { fake, leader, now } = await readyGroup('RecreateGroupOnPodRestart');
    fake.removePodAt(leader.uid, now);
    const newer = fake.addLeader({ groupIndex: 0, at: now });
    const result = await recreate(fake, {
      ref: fake.ref,
      groupIndex: 0,
      leader: identityOf(leader),
      reason: 'pod demo-0-1 deleted',
      groupHadStarted: true,
    });
    assert.equal(result.outcome, 'ignored');
    assert.deepEqual(
      fake.callsOf('deletePod').map((d) => [d.args[0], d.result]),
      [[identityOf(leader), 'absent']],
    );
    assert.equal(fake.pod('demo-0')?.uid, newer.uid);
    assert.equal(newer.deletionTimestamp, undefined);
    assert.equal(fake.events.length, 0);
  });

  it('a leader already terminating is left alone: ignored', async () => {
    const { fake, leader, now } = await readyGroup('RecreateGroupOnPodRestart');
    fake.deletePodAt(leader.uid, now);
    const result = await recreate(fake, {
      ref: fake.ref,
      groupIndex: 0,
      leader: identityOf(leader),
      reason: 'pod demo-0-1 deleted',
      groupHadStarted: true,
    });
    assert.equal(result.outcome, 'ignored');
    assert.deepEqual(
      fake.callsOf('deletePod').map((d) => d.result),
      ['already-deleting'],
    );
    assert.equal(leader.deletedAt, now);
  });

  it('the LWS is gone: ignored, nothing deleted', async () => {
    const { fake, leader } = await readyGroup('RecreateGroupOnPodRestart');
    const ref = fake.ref;
    fake.lws = null;
    const result = await recreate(fake, {
      ref,
      groupIndex: 0,
      leader: identityOf(leader),
      reason: 'container leader of demo-0 restarted',
      groupHadStarted: true,
    });
    assert.equal(result.outcome, 'ignored');
    assert.equal(fake.callsOf('deletePod').length, 0);
  });
});
