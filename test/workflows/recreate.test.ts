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
          cause: 'container-restart',
          pod: 'demo-0-2',
          reason: 'container worker of demo-0-2 restarted',
          groupHadStarted: c.groupHadStarted,
        },
        c.outcome === 'recreated' && c.restartPolicy === undefined ? 'recreateGroup-recreated' : undefined,
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

  it('a leader already replaced by a newer pod is not deleted (its uid): ignored', async () => {
    const { fake, leader, now } = await readyGroup('RecreateGroupOnPodRestart');
    fake.removePodAt(leader.uid, now);
    const newer = fake.addLeader({ groupIndex: 0, at: now });
    const result = await recreate(fake, {
      ref: fake.ref,
      groupIndex: 0,
      leader: identityOf(leader),
      cause: 'container-restart',
      pod: 'demo-0-1',
      reason: 'pod demo-0-1 deleted',
      groupHadStarted: true,
    });
    assert.equal(result.outcome, 'ignored');
    assert.equal(fake.callsOf('deletePod').length, 0);
    assert.deepEqual(
      result.timeline.map((e) => e.detail),
      ['leader pod absent'],
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
      cause: 'container-restart',
      pod: 'demo-0-1',
      reason: 'pod demo-0-1 deleted',
      groupHadStarted: true,
    });
    assert.equal(result.outcome, 'ignored');
    assert.equal(fake.callsOf('deletePod').length, 0);
    assert.deepEqual(
      result.timeline.map((e) => e.detail),
      ['leader pod already-deleting'],
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
      cause: 'container-restart',
      pod: 'demo-0',
      reason: 'container leader of demo-0 restarted',
      groupHadStarted: true,
    });
    assert.equal(result.outcome, 'ignored');
    assert.equal(fake.callsOf('deletePod').length, 0);
  });

  describe('spec.leaderWorkerTemplate.maxGroupRestarts (KEP-820)', () => {
    async function budgeted(maxGroupRestarts: number | undefined) {
      const fake = t.fake();
      fake.setLws({
        leaderWorkerTemplate: {
          size: 2,
          workerTemplate: { spec: { containers: [{ name: 'worker', image: 'nginx:latest' }] } },
          ...(maxGroupRestarts !== undefined && { maxGroupRestarts }),
        },
      });
      return fake;
    }
    /** A new incarnation of group 0 (the last one gone), and its recreate after a container restart. */
    async function restartOnce(fake: FakeCluster, opts: { recover?: boolean; keep?: string } = {}) {
      const now = await fake.now();
      const before = fake.pod('demo-0');
      let leader = before;
      if (before === undefined || before.deletionTimestamp !== undefined) {
        if (before) fake.removePodAt(before.uid, now);
        leader = fake.addLeader({ groupIndex: 0, at: now, readyAt: now });
      }
      const result = await recreate(
        fake,
        {
          ref: fake.ref,
          groupIndex: 0,
          leader: identityOf(leader!),
          cause: 'container-restart',
          pod: 'demo-0-1',
          reason: 'a container of demo-0-1 restarted',
          groupHadStarted: true,
          ...(opts.recover && { cause: 'recover' as const, pod: 'demo-0', recover: true }),
        },
        opts.keep,
      );
      return { result, leader: leader! };
    }
    const counts = (fake: FakeCluster) => JSON.parse(fake.groupRestarts.counts ?? '{}') as Record<string, number>;

    it('counts each recreation on the leader StatefulSet, per revision and group, and leaves the group failed past it', async () => {
      const fake = await budgeted(2);
      const outcomes: string[] = [];
      for (let i = 0; i < 3; i++) outcomes.push((await restartOnce(fake)).result.outcome);
      assert.deepEqual(outcomes, ['recreated', 'recreated', 'failed']);
      assert.deepEqual(Object.values(counts(fake)), [2]);
      assert.match(Object.keys(counts(fake))[0]!, /^[0-9a-f]+\/0$/, '<revision>/<group>');

      // The third incarnation stays as it is, for debugging, and says why on its leader and in a Warning Event.
      const leader = fake.pod('demo-0')!;
      assert.equal(leader.deletionTimestamp, undefined);
      assert.equal(fake.callsOf('deletePod').length, 2);
      const failed = fake.events.at(-1)!;
      assert.deepEqual([failed.type, failed.reason], ['Warning', 'MaxGroupRestartsExceeded']);
      assert.match(failed.message, /group 0 was recreated 2 times \(spec.leaderWorkerTemplate.maxGroupRestarts 2\)/);
      assert.match(failed.message, /kubectl annotate pod demo-0 leaderworkerset.sigs.k8s.io\/recover=true/);
      assert.equal(
        leader.annotations['leaderworkerset.sigs.k8s.io/group-failed'],
        failed.message.split(': ').slice(1).join(': '),
      );
      assert.deepEqual(
        fake.events
          .filter((e) => e.reason === 'GroupRecreated')
          .map((e) => e.message.replace(/deleted leader \S+/, '')),
        [1, 2].map(
          (n) =>
            `group 0: a container of demo-0-1 restarted;  (RecreateGroupOnPodRestart) (${n} of maxGroupRestarts 2)`,
        ),
      );

      // The user's recover: rebuilt at once, its count started again.
      const recovered = await restartOnce(fake, { recover: true, keep: 'recreateGroup-recovered' });
      assert.equal(recovered.result.outcome, 'recovered');
      assert.notEqual(recovered.leader.deletionTimestamp, undefined);
      assert.deepEqual(Object.values(counts(fake)), [0]);
      assert.equal(fake.events.at(-1)!.reason, 'GroupRecovered');
      assert.deepEqual(
        recovered.result.timeline.map((e) => e.event),
        ['group recovered'],
      );
      assert.equal((await restartOnce(fake)).result.outcome, 'recreated');
    });

    it('0: the first failure is terminal', async () => {
      const fake = await budgeted(0);
      assert.equal((await restartOnce(fake, { keep: 'recreateGroup-budget-spent' })).result.outcome, 'failed');
      assert.equal(fake.callsOf('deletePod').length, 0);
    });

    it('without it, no limit, and the count is still kept for tools that read it', async () => {
      const fake = await budgeted(undefined);
      for (let i = 0; i < 4; i++) assert.equal((await restartOnce(fake)).result.outcome, 'recreated');
      assert.deepEqual(Object.values(counts(fake)), [4]);
    });
  });
  describe('spec.leaderWorkerTemplate.groupRestartBackoff', () => {
    async function crashing(groupRestartBackoff?: Record<string, number>) {
      const fake = t.fake();
      fake.setLws({
        leaderWorkerTemplate: {
          size: 2,
          workerTemplate: { spec: { containers: [{ name: 'worker', image: 'nginx:latest' }] } },
          ...(groupRestartBackoff && { groupRestartBackoff }),
        },
      });
      return fake;
    }
    /** Group 0's next incarnation, up at once, and the recreate of it after its worker restarted. */
    async function failOnce(fake: FakeCluster, keep?: string) {
      const now = await fake.now();
      const before = fake.pod('demo-0');
      if (before) fake.removePodAt(before.uid, now);
      const leader = fake.addLeader({ groupIndex: 0, at: now, readyAt: now });
      const started = await fake.now();
      const result = await recreate(
        fake,
        {
          ref: fake.ref,
          groupIndex: 0,
          leader: identityOf(leader),
          cause: 'container-restart',
          pod: 'demo-0-1',
          reason: 'a container of demo-0-1 restarted',
          groupHadStarted: true,
        },
        keep,
      );
      const waitedMs = (leader.deletedAt ?? started) - started;
      return { result, leader, waitedMs };
    }
    /**
     * The wait the run decided on, and the leader deleted once it was over. The test server's clock also runs while
     * the workflow works, more so on a busy machine: a margin of 3 s.
     */
    function assertWaited({ result, waitedMs }: Awaited<ReturnType<typeof failOnce>>, ms: number, message?: string) {
      assert.equal(result.backoffMs ?? 0, ms, message);
      assert.ok(
        waitedMs >= ms && waitedMs < ms + 3000,
        `${message ?? 'the wait'}: leader deleted after ${waitedMs} ms`,
      );
    }

    it("waits nothing the first time, then 10 s doubling to 5 min (the kubelet's values), on a timer of the run", async () => {
      const fake = await crashing();
      const waits: number[] = [];
      for (let i = 0; i < 7; i++) {
        const failed = await failOnce(fake, i === 1 ? 'recreateGroup-backoff' : undefined);
        assert.equal(failed.result.outcome, 'recreated');
        assertWaited(failed, failed.result.backoffMs ?? 0, 'the leader is deleted once the wait is over');
        waits.push((failed.result.backoffMs ?? 0) / 1000);
      }
      assert.deepEqual(waits, [0, 10, 20, 40, 80, 160, 300]);
      const backOffs = fake.events.filter((e) => e.reason === 'GroupRecreateBackOff');
      assert.equal(backOffs.length, 6);
      assert.ok(backOffs.every((e) => e.type === 'Warning'));
      assert.match(
        backOffs[0]!.message,
        /group 0: a container of demo-0-1 restarted; 2nd recreation in a row: waiting 10 s/,
      );
      const record = JSON.parse(fake.groupRestarts.recreations ?? '{}') as Record<string, { streak: number }>;
      assert.deepEqual(
        Object.values(record).map((r) => r.streak),
        [7],
      );
    });

    it('tells the wait on the timeline, and starts over once the group was not recreated for resetAfterSeconds', async () => {
      const fake = await crashing({ initialIntervalSeconds: 4, maximumIntervalSeconds: 6, resetAfterSeconds: 120 });
      assertWaited(await failOnce(fake), 0);
      const second = await failOnce(fake);
      assertWaited(second, 4000);
      assert.deepEqual(
        second.result.timeline.map((e) => e.event),
        ['backing off', 'group recreated'],
      );
      assert.match(
        second.result.timeline[0]!.detail!,
        /2nd recreation in a row: waiting 4 s before deleting leader demo-0/,
      );
      // Why, on the leader as it goes, for the teardown that follows.
      assert.equal(
        second.leader.annotations['leaderworkerset.sigs.k8s.io/recreate-reason'],
        'a container of demo-0-1 restarted, after a 4 s backoff',
      );
      assertWaited(await failOnce(fake), 6000, 'capped at maximumIntervalSeconds');
      await t.sleep(121_000);
      assertWaited(await failOnce(fake), 0, 'a group that lasted resetAfterSeconds is recreated at once');
    });

    it('initialIntervalSeconds 0 turns it off', async () => {
      const fake = await crashing({ initialIntervalSeconds: 0 });
      for (let i = 0; i < 3; i++) assertWaited(await failOnce(fake), 0);
    });

    it('a leader deleted during the wait (scale-down, rolling update) is left to that: nothing deleted', async () => {
      const fake = await crashing();
      await failOnce(fake);
      const now = await fake.now();
      fake.removePodAt(fake.pod('demo-0')!.uid, now);
      const leader = fake.addLeader({ groupIndex: 0, at: now, readyAt: now });
      const result = await t.withWorker(fake, async (run) => {
        const handle = await run.start<typeof recreateGroup>('recreateGroup', {
          ref: fake.ref,
          groupIndex: 0,
          leader: identityOf(leader),
          cause: 'container-restart',
          pod: 'demo-0-1',
          reason: 'a container of demo-0-1 restarted',
          groupHadStarted: true,
        });
        // The run is on its timer once the Warning Event is out; then the rollout deletes the leader.
        for (let i = 0; i < 200 && !fake.events.some((e) => e.reason === 'GroupRecreateBackOff'); i++) {
          await new Promise((r) => setTimeout(r, 25));
        }
        fake.deletePodAt(leader.uid, await fake.now());
        return handle.result();
      });
      assert.equal(result.outcome, 'ignored');
      assert.equal(result.backoffMs, 10_000);
      assert.equal(fake.callsOf('deletePod').length, 1, 'only the first recreation deleted a leader');
    });

    it("a recover is not delayed, and the group's waits start over", async () => {
      const fake = await crashing();
      await failOnce(fake);
      await failOnce(fake);
      const now = await fake.now();
      fake.removePodAt(fake.pod('demo-0')!.uid, now);
      const leader = fake.addLeader({ groupIndex: 0, at: now, readyAt: now });
      const result = await recreate(fake, {
        ref: fake.ref,
        groupIndex: 0,
        leader: identityOf(leader),
        cause: 'recover',
        pod: 'demo-0',
        reason: 'the user asked to recover group 0',
        groupHadStarted: true,
        recover: true,
      });
      assert.equal(result.outcome, 'recovered');
      assert.equal(result.backoffMs, undefined);
      assert.equal(fake.groupRestarts.recreations, '{}');
      assertWaited(await failOnce(fake), 0);
    });
  });
});
