// provisionGroup in workflow time, against a fake cluster: a group's worker StatefulSet is created once, never while
// an old group's StatefulSet still holds the name (safe rebuild), and only for a leader that is still there.
import assert from 'node:assert/strict';
import type { LwsTarget } from '../../src/model/index.js';
import { seenAtStart } from '../../src/trigger/decide.js';
import type { ProvisionGroupInput, provisionGroup } from '../../src/workflows/provision-group.js';
import { identityOf, type FakeCluster, type FakePod } from '../fixtures/fake-activities.js';
import { useWorkflowTestEnv, at, heartbeatTimeouts } from './harness.js';

const GRACE = 60_000;

const inputFor = (fake: FakeCluster, leader: FakePod): ProvisionGroupInput => ({
  ref: fake.ref,
  groupIndex: 0,
  leader: identityOf(leader),
});

/** The start the trigger makes: with the LWS and the leader as its watches show them now. */
const startFor = async (fake: FakeCluster, leader: FakePod): Promise<ProvisionGroupInput> => ({
  ...inputFor(fake, leader),
  ...seenAtStart(fake.lws!, fake.podInfo(leader, await fake.now())),
});

/** Group 0 as it was an hour before `now`: a Ready leader, its worker StatefulSet and pods. */
function oldGroup(fake: FakeCluster, now: number) {
  const oldLeader = fake.addLeader({ groupIndex: 0, at: now - 3_600_000, readyAt: now - 3_600_000 });
  const { sts: old, pods: oldPods } = fake.addWorkers({ groupIndex: 0, ownerUid: oldLeader.uid, at: now - 3_600_000 });
  return { oldLeader, old, oldPods };
}

/**
 * A Parallel rebuild at `now`: the old leader gone, its worker StatefulSet foreground-deleted with its pods terminating
 * (unless `held`: a dependent keeps it after them), and the new leader of the group.
 */
async function parallelRebuild(fake: FakeCluster, { held = false } = {}) {
  fake.setLws({ podTerminationPolicy: 'Parallel' });
  const now = await fake.now();
  const { oldLeader, old, oldPods } = oldGroup(fake, now);
  old.held = held;
  fake.deleteStatefulSetAt(old.uid, now, 'Foreground');
  fake.removePodAt(oldLeader.uid, now);
  const leader = fake.addLeader({ groupIndex: 0, at: now });
  return { now, oldLeader, old, oldPods, leader };
}

describe('provisionGroup (time-skipping, fake cluster)', function () {
  this.timeout(60_000);
  const t = useWorkflowTestEnv();

  const provision = (fake: FakeCluster, input: ProvisionGroupInput, keep?: string) =>
    t.runToEnd<typeof provisionGroup>(fake, 'provisionGroup', input, keep);

  it('makes the worker StatefulSet again when it goes while its leader lives; not once the leader goes', async () => {
    const fake = t.fake({ graceMs: GRACE });
    fake.setLws();
    const leader = fake.addLeader({ groupIndex: 0, at: await fake.now() });
    // The first StatefulSet is deleted as the wait for it starts.
    let removed = 0;
    fake.onCall('waitForStatefulSetReady', (now) => {
      if (removed++ === 0) fake.removeStatefulSetAt(fake.createdStatefulSets[0]!.uid, now);
    });
    const result = await provision(fake, inputFor(fake, leader));
    assert.equal(result.outcome, 'provisioned');
    assert.deepEqual(
      fake.createdStatefulSets.map((s) => [s.name, s.ownerUid]),
      [
        ['demo-0', leader.uid],
        ['demo-0', leader.uid],
      ],
    );
    assert.deepEqual(
      result.timeline.map((e) => e.event),
      ['new leader', 'workers created', 'workers gone', 'workers created', 'new group ready'],
    );

    // Its leader going: the group is the teardown's, nothing is made again.
    const gone = t.fake({ graceMs: GRACE });
    gone.setLws();
    const going = gone.addLeader({ groupIndex: 0, at: await gone.now() });
    gone.onCall('waitForStatefulSetReady', (now) => {
      gone.removeStatefulSetAt(gone.createdStatefulSets[0]!.uid, now);
      gone.deletePodAt(going.uid, now);
    });
    assert.equal((await provision(gone, inputFor(gone, going))).outcome, 'provisioned');
    assert.equal(gone.createdStatefulSets.length, 1);
  });

  it('creates the worker StatefulSet once, owned by the leader, without waiting for readiness (LeaderCreated)', async () => {
    const fake = t.fake({ graceMs: GRACE });
    fake.setLws();
    const leader = fake.addLeader({ groupIndex: 0, at: await fake.now() });
    const result = await provision(fake, inputFor(fake, leader));

    assert.equal(result.outcome, 'provisioned');
    const ensures = fake.callsOf('ensureWorkerStatefulSetOf');
    assert.equal(ensures.length, 1);
    assert.equal((ensures[0]!.result as { outcome: string }).outcome, 'created');
    assert.deepEqual((ensures[0]!.args[0] as { leader: unknown }).leader, identityOf(leader));
    assert.deepEqual(
      fake.createdStatefulSets.map((s) => [s.name, s.ownerUid]),
      [['demo-0', leader.uid]],
    );
    assert.equal(fake.callsOf('waitForPodReady').length, 0);
    assert.equal(fake.callsOf('waitForNamesFreed').length, 0);
    assert.deepEqual(
      fake.events.map((e) => [e.reason, e.lws.uid]),
      [['GroupProvisioned', 'lws-uid-1']],
    );
    assert.deepEqual(
      result.timeline.map((e) => e.event),
      ['new leader', 'workers created', 'new group ready'],
    );
  });

  it("its wait for the group's readiness beats at a 30 s timeout; the waits before the workers at 2.5 s", async () => {
    const fake = t.fake({ graceMs: GRACE });
    fake.setLws({ startupPolicy: 'LeaderReady' });
    const now = await fake.now();
    const leader = fake.addLeader({ groupIndex: 0, at: now, readyAt: now + 1_000 });
    const timeouts = await t.withWorker(fake, async (run) => {
      const handle = await run.start<typeof provisionGroup>('provisionGroup', inputFor(fake, leader));
      assert.equal((await handle.result()).outcome, 'provisioned');
      return heartbeatTimeouts((await handle.fetchHistory()).events ?? []);
    });
    // A thousand readiness waits at once beat a thousand times per 2 s at 2.5 s (docs/architecture.md, "Design
    // rationale").
    assert.deepEqual(timeouts, [
      ['waitForPodReady', 2_500],
      ['waitForStatefulSetReady', 30_000],
    ]);
  });

  it('safe rebuild: waits until the old group StatefulSet is gone, then creates exactly once', async () => {
    const fake = t.fake({ graceMs: GRACE });
    // The old group: its leader is gone and its StatefulSet is being foreground-deleted, its pods terminating.
    const { now, oldLeader, old, oldPods, leader } = await parallelRebuild(fake);
    const result = await provision(fake, inputFor(fake, leader), 'provisionGroup-first-look-safe-rebuild');

    assert.equal(result.outcome, 'provisioned');
    const ensures = fake.callsOf('ensureWorkerStatefulSetOf');
    assert.deepEqual(
      ensures.map((c) => c.result),
      [
        { outcome: 'blocked', uid: old.uid, ownerUid: oldLeader.uid, deleting: true, pods: oldPods.map(identityOf) },
        { outcome: 'created', uid: fake.statefulSet('demo-0')!.uid },
      ],
    );
    const waits = fake.callsOf('waitForNamesFreed');
    assert.equal(waits.length, 1);
    assert.deepEqual(waits[0]!.args, [
      { statefulSet: { namespace: 'default', name: 'demo-0', uid: old.uid }, pods: oldPods.map(identityOf) },
    ]);
    // In order: blocked, wait (resolved when the old one was gone), then the one create.
    const oldGone = fake.removedAt.get(old.uid)!;
    assert.ok(Math.abs(oldGone - now - GRACE) < 100, `old StatefulSet gone ${oldGone - now} ms after its deletion`);
    assert.ok(ensures[0]!.endSeq! < waits[0]!.seq && waits[0]!.endSeq! < ensures[1]!.seq);
    assert.ok(ensures[1]!.at >= oldGone, 'created while the old StatefulSet existed');
    // Once the names are free the create is the next call: no read of the LWS or the leader between (the build reads
    // the LWS itself, along with the leader's patch, instead of a read from before the wait).
    const between = fake.calls.filter((c) => c.seq > waits[0]!.endSeq! && c.seq < ensures[1]!.seq).map((c) => c.name);
    assert.deepEqual(
      between.filter((name) => name !== 'releaseForegroundDeletion'),
      [],
    );
    assert.equal((ensures[1]!.args[0] as { afterWait?: boolean }).afterWait, true);
    assert.equal((ensures[0]!.args[0] as { afterWait?: boolean }).afterWait, undefined);
    const mine = fake.createdStatefulSets.filter((s) => s.ownerUid === leader.uid);
    assert.equal(mine.length, 1);
    assert.ok(mine[0]!.at >= oldGone);
    assert.ok(Date.parse(result.timeline.at(-1)!.at) - now >= GRACE);
    assert.deepEqual(
      result.timeline.map((e) => e.event),
      ['new leader', 'waiting for old StatefulSet', 'old StatefulSet gone', 'workers created', 'new group ready'],
    );
    assert.ok(Math.abs(at(result.timeline, 'old StatefulSet gone') - oldGone) < 100);
  });

  it('safe rebuild: an old StatefulSet only its foreground deletion keeps, no pod left, is released by the build, which creates at once', async () => {
    const fake = t.fake({ graceMs: GRACE });
    const { now, old, oldPods, leader } = await parallelRebuild(fake, { held: true });
    for (const pod of oldPods) fake.removePodAt(pod.uid, now);
    assert.equal(fake.statefulSet('demo-0')?.uid, old.uid, 'held after its last pod');
    const result = await provision(fake, inputFor(fake, leader));

    assert.equal(result.outcome, 'provisioned');
    const [build] = fake.callsOf('ensureWorkerStatefulSetOf');
    assert.equal(fake.callsOf('ensureWorkerStatefulSetOf').length, 1, 'one build');
    assert.deepEqual(build!.result, { outcome: 'created', uid: fake.statefulSet('demo-0')!.uid, released: old.uid });
    assert.equal(fake.callsOf('waitForNamesFreed').length, 0, 'no wait');
    assert.deepEqual(
      result.timeline.map((e) => e.event),
      ['new leader', 'old StatefulSet gone', 'workers created', 'new group ready'],
    );
    assert.match(result.timeline[1]!.detail ?? '', new RegExp(`^${old.uid}: released`));
  });

  it('Sequential rebuild: the old StatefulSet already gone, creates at once (as upstream), then marks it as the old pods go', async () => {
    // Once the old leader is gone, the garbage collector deletes the worker StatefulSet it owned in the background (at
    // once) and its pods after it (a grace period). Upstream creates the new StatefulSet then; its pods come as the
    // names free. The mark makes the StatefulSet controller, which backed off meanwhile, make them at once.
    const fake = t.fake({ graceMs: GRACE });
    fake.setLws();
    const now = await fake.now();
    const { oldLeader, old, oldPods } = oldGroup(fake, now);
    fake.removePodAt(oldLeader.uid, now);
    fake.deleteStatefulSetAt(old.uid, now, 'Background');
    await t.sleep(1_000);
    assert.equal(fake.statefulSet('demo-0'), undefined, 'the old StatefulSet is gone at once');
    assert.ok(
      oldPods.every((p) => fake.podByUid(p.uid) !== undefined),
      'its pods still terminate',
    );
    const leader = fake.addLeader({ groupIndex: 0, at: await fake.now() });
    const result = await provision(fake, inputFor(fake, leader), 'provisionGroup-sequential-rebuild');

    assert.equal(result.outcome, 'provisioned');
    const created = fake.statefulSet('demo-0')!;
    assert.deepEqual(
      fake.callsOf('ensureWorkerStatefulSetOf').map((c) => c.result),
      [{ outcome: 'created', uid: created.uid, oldPods: oldPods.map(identityOf) }],
    );
    const lastOldPodGone = Math.max(...oldPods.map((p) => fake.removedAt.get(p.uid)!));
    assert.ok(lastOldPodGone - now >= GRACE, `the old pods went ${lastOldPodGone - now} ms after their deletion`);
    const mine = fake.createdStatefulSets.filter((s) => s.ownerUid === leader.uid);
    assert.equal(mine.length, 1);
    assert.ok(mine[0]!.at < lastOldPodGone, 'created while the old pods still held the names');
    assert.deepEqual(
      fake.callsOf('waitForNamesFreed').map((c) => c.args),
      [[{ pods: oldPods.map(identityOf), successor: { namespace: 'default', name: 'demo-0', uid: created.uid } }]],
    );
    assert.equal(created.oldPodsGoneAt, new Date(lastOldPodGone).toISOString());
    const newPods = [1, 2, 3].map((i) => fake.pod(`demo-0-${i}`)!);
    assert.ok(
      newPods.every((p) => p.ownerUid === created.uid && p.createdAt >= lastOldPodGone),
      'no new pod over an old name',
    );
    assert.deepEqual(
      result.timeline.map((e) => e.event),
      ['new leader', 'workers created', 'waiting for old pods', 'old pods gone', 'new group ready'],
    );
    assert.equal(result.timeline[2]!.detail, '3 still terminating');
    assert.ok(Math.abs(at(result.timeline, 'old pods gone') - lastOldPodGone) < 100);
  });

  // The create after the wait writes the LWS's policy onto the leader (leaderPodPatch): an LWS read before the wait
  // would undo a switch the new generation's reconcile made meanwhile.
  it('safe rebuild: a policy switch during the wait is not undone by the stale LWS read before it', async () => {
    const fake = t.fake({ graceMs: GRACE });
    const { leader } = await parallelRebuild(fake);
    fake.onCall('waitForNamesFreed', () => {
      // kubectl patch lws demo --type=merge -p '{"spec":{"podTerminationPolicy":"Sequential"}}', and the new
      // generation's reconcile annotates the live leaders.
      fake.lws!.spec.podTerminationPolicy = 'Sequential';
      fake.lws!.metadata.generation = 2;
      leader.annotations['leaderworkerset.sigs.k8s.io/pod-termination-policy'] = 'Sequential';
    });
    const result = await provision(fake, inputFor(fake, leader));
    assert.equal(result.outcome, 'provisioned');
    assert.equal(leader.annotations['leaderworkerset.sigs.k8s.io/pod-termination-policy'], 'Sequential');
  });

  it('safe rebuild: a leader that starts terminating during the wait gets no workers (leader-gone)', async () => {
    const fake = t.fake({ graceMs: GRACE });
    const { leader } = await parallelRebuild(fake);
    fake.onCall('waitForNamesFreed', (at) => fake.deletePodAt(leader.uid, at));
    const result = await provision(fake, inputFor(fake, leader));
    assert.equal(result.outcome, 'leader-gone');
    assert.deepEqual(
      fake.callsOf('ensureWorkerStatefulSetOf').map((c) => (c.result as { outcome: string }).outcome),
      ['blocked', 'leader-gone'],
    );
    assert.equal(fake.createdStatefulSets.filter((s) => s.ownerUid === leader.uid).length, 0);
  });

  it('reads the LWS and the leader at once, and builds on that look at the leader: one round trip before the build', async () => {
    const fake = t.fake({ graceMs: GRACE });
    fake.setLws();
    const leader = fake.addLeader({ groupIndex: 0, at: await fake.now() });
    // The LWS read answers only once the leader read has started: made one after the other, the leader read would
    // start only after the hold ran out (timing alone made this flaky under load).
    fake.holdUntil('getLeaderWorkerSet', () => fake.callsOf('getPod').length > 0);
    const result = await provision(fake, inputFor(fake, leader));

    assert.equal(result.outcome, 'provisioned');
    const [lwsRead] = fake.callsOf('getLeaderWorkerSet');
    const pods = fake.callsOf('getPod');
    assert.equal(pods.length, 1, 'the leader read once');
    assert.ok(pods[0]!.seq < lwsRead!.endSeq!, 'the leader read only after the LWS read had returned');
    assert.ok(pods[0]!.endSeq! < fake.callsOf('ensureWorkerStatefulSetOf')[0]!.seq);
  });

  it('started with what the trigger saw: no look first, the leader patched along with the LWS read', async () => {
    const fake = t.fake({ graceMs: GRACE });
    fake.setLws({ podTerminationPolicy: 'Parallel' });
    const leader = fake.addLeader({ groupIndex: 0, at: await fake.now() });
    const input = await startFor(fake, leader);
    assert.ok(input.seen, 'the trigger passes what it saw');
    const result = await provision(fake, input, 'provisionGroup-seen-at-start');

    assert.equal(result.outcome, 'provisioned');
    assert.equal(fake.callsOf('getLeaderWorkerSet').length, 0, 'no read of the LWS before the build');
    assert.equal(fake.callsOf('getPod').length, 0, 'no read of the leader before the build');
    const ensures = fake.callsOf('ensureWorkerStatefulSetOf');
    assert.deepEqual(
      ensures.map((c) => [(c.args[0] as { expected?: unknown }).expected, (c.result as { outcome: string }).outcome]),
      [[{ podTerminationPolicy: 'Parallel', size: 4 }, 'created']],
    );
    assert.equal(leader.annotations['leaderworkerset.sigs.k8s.io/pod-termination-policy'], 'Parallel');
    assert.deepEqual(
      fake.events.map((e) => [e.reason, e.lws.uid]),
      [['GroupProvisioned', 'lws-uid-1']],
    );
  });

  it('started with what the trigger saw, the LWS changed since (stale): read, then built from it as it is', async () => {
    const fake = t.fake({ graceMs: GRACE });
    fake.setLws({ podTerminationPolicy: 'Sequential' });
    const leader = fake.addLeader({ groupIndex: 0, at: await fake.now() });
    const input = await startFor(fake, leader);
    // kubectl patch lws demo -p '{"spec":{"podTerminationPolicy":"Parallel"}}' before the run's first task.
    fake.lws!.spec.podTerminationPolicy = 'Parallel';
    fake.lws!.metadata.generation = 2;
    const result = await provision(fake, input);

    assert.equal(result.outcome, 'provisioned');
    assert.deepEqual(
      fake
        .callsOf('ensureWorkerStatefulSetOf')
        .map((c) => [
          (c.args[0] as { lws: LwsTarget }).lws.generation,
          (c.result as { outcome?: string }).outcome ?? c.result,
        ]),
      [
        [1, 'stale'],
        [2, 'created'],
      ],
    );
    assert.equal(fake.callsOf('getLeaderWorkerSet').length, 1);
    assert.equal(leader.annotations['leaderworkerset.sigs.k8s.io/pod-termination-policy'], 'Parallel');
  });

  it('started with what the trigger saw, the leader gone since: leader-gone, nothing created', async () => {
    const fake = t.fake({ graceMs: GRACE });
    fake.setLws();
    const now = await fake.now();
    const leader = fake.addLeader({ groupIndex: 0, at: now });
    const input = await startFor(fake, leader);
    fake.removePodAt(leader.uid, now);
    const result = await provision(fake, input);

    assert.equal(result.outcome, 'leader-gone');
    assert.deepEqual(fake.createdStatefulSets, []);
  });

  it('started with what the trigger saw under LeaderReady: none is passed, the run looks and waits', async () => {
    const fake = t.fake({ graceMs: GRACE });
    fake.setLws({ startupPolicy: 'LeaderReady' });
    const now = await fake.now();
    const leader = fake.addLeader({ groupIndex: 0, at: now, readyAt: now + 30_000 });
    const input = await startFor(fake, leader);
    assert.equal(input.seen, undefined);
    const result = await provision(fake, input);
    assert.equal(result.outcome, 'provisioned');
    assert.equal(fake.callsOf('waitForPodReady').length, 1);
    assert.ok(fake.createdStatefulSets[0]!.at >= now + 30_000, 'workers created only once the leader was Ready');
  });

  it('LeaderReady: the leader is read again after its wait, not taken from the look before it', async () => {
    const fake = t.fake({ graceMs: GRACE });
    fake.setLws({ startupPolicy: 'LeaderReady' });
    const now = await fake.now();
    const leader = fake.addLeader({ groupIndex: 0, at: now, readyAt: now + 30_000 });
    await provision(fake, inputFor(fake, leader));

    const [ready] = fake.callsOf('waitForPodReady');
    const pods = fake.callsOf('getPod');
    assert.equal(pods.length, 2);
    assert.ok(pods[1]!.seq > ready!.endSeq!, 'the build used a look at the leader from before it was Ready');
  });

  it('LeaderReady: waits for the leader to be Ready before creating the workers', async () => {
    const fake = t.fake({ graceMs: GRACE });
    fake.setLws({ startupPolicy: 'LeaderReady' });
    const now = await fake.now();
    const leader = fake.addLeader({ groupIndex: 0, at: now, readyAt: now + 30_000 });
    const result = await provision(fake, inputFor(fake, leader));

    assert.equal(result.outcome, 'provisioned');
    const [ready] = fake.callsOf('waitForPodReady');
    assert.deepEqual(ready?.args, [identityOf(leader)]);
    assert.deepEqual(ready?.result, { readyAt: new Date(now + 30_000).toISOString() });
    const ensures = fake.callsOf('ensureWorkerStatefulSetOf');
    assert.equal(ensures.length, 1);
    assert.ok(ready!.endSeq! < ensures[0]!.seq, 'ensureWorkerStatefulSet before the leader was Ready');
    assert.ok(ensures[0]!.at >= now + 30_000);
    assert.equal(at(result.timeline, 'leader ready'), now + 30_000);
  });

  it('exclusive placement: waits for the leader to be scheduled, then pins the workers to its topology domain', async () => {
    const fake = t.fake({ graceMs: GRACE });
    fake.setLws(
      {},
      { annotations: { 'leaderworkerset.sigs.k8s.io/exclusive-topology': 'cloud.google.com/gke-nodepool' } },
    );
    const leader = fake.addLeader({ groupIndex: 0, at: await fake.now() });
    const result = await provision(fake, inputFor(fake, leader));

    assert.equal(result.outcome, 'provisioned');
    const [scheduled] = fake.callsOf('waitForPodScheduled');
    assert.deepEqual(scheduled?.args, [identityOf(leader)]);
    assert.deepEqual(
      fake.callsOf('getNodeLabel').map((c) => c.args[0]),
      [{ node: 'fake-node', label: 'cloud.google.com/gke-nodepool' }],
    );
    const [ensure] = fake.callsOf('ensureWorkerStatefulSetOf');
    assert.ok(scheduled!.endSeq! < ensure!.seq, 'workers created before the leader was scheduled');
    assert.deepEqual((ensure!.args[0] as { topology?: unknown }).topology, {
      key: 'cloud.google.com/gke-nodepool',
      value: 'fake-domain',
    });
    assert.deepEqual(
      result.timeline.map((e) => e.event),
      ['new leader', 'leader scheduled', 'workers created', 'new group ready'],
    );
  });

  it('without exclusive placement nothing waits for scheduling', async () => {
    const fake = t.fake({ graceMs: GRACE });
    fake.setLws();
    const leader = fake.addLeader({ groupIndex: 0, at: await fake.now() });
    await provision(fake, inputFor(fake, leader));
    assert.equal(fake.callsOf('waitForPodScheduled').length, 0);
    assert.equal((fake.callsOf('ensureWorkerStatefulSetOf')[0]!.args[0] as { topology?: unknown }).topology, undefined);
  });

  const gone: {
    name: string;
    setup: (fake: FakeCluster, leader: FakePod, now: number) => void;
    startupPolicy?: 'LeaderReady';
    ensureCalls: number;
  }[] = [
    { name: 'the leader pod is gone', setup: (fake, leader, now) => fake.removePodAt(leader.uid, now), ensureCalls: 0 },
    {
      name: 'the leader pod was replaced (same name, another uid)',
      setup: (fake, leader, now) => {
        fake.removePodAt(leader.uid, now);
        fake.addLeader({ groupIndex: 0, at: now, uid: 'replacement-uid' });
      },
      ensureCalls: 0,
    },
    {
      name: 'the leader pod is terminating',
      setup: (fake, leader, now) => fake.deletePodAt(leader.uid, now),
      ensureCalls: 0,
    },
    {
      name: 'LeaderReady, and the leader goes before it is Ready',
      startupPolicy: 'LeaderReady',
      setup: (fake, leader, now) => fake.deletePodAt(leader.uid, now + 10_000),
      ensureCalls: 0,
    },
    {
      name: 'the leader goes between the read and ensureWorkerStatefulSet',
      setup: (fake, leader) => fake.onCall('ensureWorkerStatefulSetOf', (now) => fake.removePodAt(leader.uid, now)),
      ensureCalls: 1,
    },
  ];

  for (const c of gone) {
    it(`leader-gone without creating anything when ${c.name}`, async () => {
      const fake = t.fake({ graceMs: GRACE });
      fake.setLws(c.startupPolicy ? { startupPolicy: c.startupPolicy } : {});
      const now = await fake.now();
      const leader = fake.addLeader({ groupIndex: 0, at: now });
      const input = inputFor(fake, leader);
      c.setup(fake, leader, now);
      const result = await provision(fake, input);

      assert.equal(result.outcome, 'leader-gone');
      assert.equal(fake.callsOf('ensureWorkerStatefulSetOf').length, c.ensureCalls);
      assert.equal(fake.createdStatefulSets.length, 0);
      assert.equal(fake.events.length, 0, 'no GroupProvisioned event');
      assert.equal(result.timeline.at(-1)?.event, 'skipped');
      assert.ok(!result.timeline.some((e) => e.event === 'workers created'));
    });
  }

  for (const lws of ['absent', 'being deleted'] as const) {
    it(`lws-gone when the LWS is ${lws}`, async () => {
      const fake = t.fake();
      fake.setLws({}, lws === 'being deleted' ? { deletionTimestamp: new Date().toISOString() } : {});
      const leader = fake.addLeader({ groupIndex: 0, at: await fake.now() });
      const input = inputFor(fake, leader);
      if (lws === 'absent') fake.lws = null;
      const result = await provision(fake, input);
      assert.equal(result.outcome, 'lws-gone');
      assert.equal(fake.callsOf('ensureWorkerStatefulSetOf').length, 0);
    });
  }

  it('lws-gone, not a failure, when the namespace is being deleted (the create is refused)', async () => {
    const fake = t.fake();
    fake.setLws();
    const leader = fake.addLeader({ groupIndex: 0, at: await fake.now() });
    fake.fail('ensureWorkerStatefulSetOf', 1, 'namespace-terminating');
    const result = await provision(fake, inputFor(fake, leader));
    assert.equal(result.outcome, 'lws-gone');
    assert.equal(fake.callsOf('ensureWorkerStatefulSetOf').length, 1, 'refused once, not retried');
    assert.deepEqual(result.timeline.at(-1), {
      ...result.timeline.at(-1),
      event: 'skipped',
      detail: 'its namespace is being deleted',
    });
    assert.equal(fake.createdStatefulSets.length, 0);
    assert.equal(fake.events.length, 0);
  });

  const refusedMessage =
    'StatefulSet.apps "demo-0" is invalid: spec.template.spec.containers[0].resources.requests: Invalid value: "2": ' +
    'must be less than or equal to cpu limit of 1';

  it('workers refused by the API server: told once (Event, leader annotation), retried with backoff, made once accepted', async () => {
    const fake = t.fake();
    fake.setLws();
    const leader = fake.addLeader({ groupIndex: 0, at: await fake.now() });
    fake.fail('ensureWorkerStatefulSetOf', 3, 'refused', refusedMessage);
    const result = await provision(fake, inputFor(fake, leader), 'provisionGroup-first-look-workers-refused');

    assert.equal(result.outcome, 'provisioned', 'not failed');
    const tries = fake.callsOf('ensureWorkerStatefulSetOf');
    assert.equal(tries.length, 4);
    const gaps = tries.slice(1).map((c, i) => c.at - tries[i]!.at);
    // Each gap is the backoff plus the reads around it (milliseconds of workflow time).
    assert.deepEqual(
      gaps.map((g) => Math.floor(g / 1_000) * 1_000),
      [5_000, 10_000, 20_000],
      `a backoff that doubles: ${gaps.join(', ')} ms`,
    );
    const warnings = fake.events.filter((e) => e.type === 'Warning');
    assert.deepEqual(
      warnings.map((e) => e.reason),
      ['InvalidWorkerTemplate'],
      'one Event for the same refusal',
    );
    assert.match(
      warnings[0]!.message,
      /^group 0: the API server refused worker StatefulSet default\/demo-0 \(HTTP 422\)/,
    );
    assert.ok(warnings[0]!.message.endsWith(refusedMessage), "with the API server's message, which names the field");
    const marks = fake.callsOf('markWorkersRefused').map((c) => (c.args[0] as { message?: string }).message);
    assert.deepEqual(marks, [warnings[0]!.message, undefined], 'written on the leader, and taken off once made');
    assert.ok(result.timeline.some((e) => e.event === 'workers refused'));
    assert.deepEqual(
      fake.createdStatefulSets.map((s) => s.name),
      ['demo-0'],
    );
  });

  it('workers refused until the leader goes (a fixed template rolls it): leader-gone, not a failure', async () => {
    const fake = t.fake();
    fake.setLws();
    const leader = fake.addLeader({ groupIndex: 0, at: await fake.now() });
    fake.fail('ensureWorkerStatefulSetOf', 1_000, 'refused', refusedMessage);
    let tries = 0;
    fake.onCall('ensureWorkerStatefulSetOf', (now) => {
      if (++tries === 8) fake.removePodAt(leader.uid, now + 1);
    });
    const result = await provision(fake, inputFor(fake, leader));
    assert.equal(result.outcome, 'leader-gone');
    const gaps = fake.callsOf('ensureWorkerStatefulSetOf').map((c, i, all) => (i === 0 ? 0 : c.at - all[i - 1]!.at));
    const longest = Math.max(...gaps);
    assert.ok(longest >= 60_000 && longest < 61_000, `capped at a minute: ${longest} ms`);
    assert.equal(fake.events.filter((e) => e.type === 'Warning').length, 1);
  });

  it('the same provision twice: the second is already-provisioned and creates nothing', async () => {
    const fake = t.fake();
    fake.setLws();
    const leader = fake.addLeader({ groupIndex: 0, at: await fake.now() });
    const first = await provision(fake, inputFor(fake, leader));
    const second = await provision(fake, inputFor(fake, leader));

    assert.equal(first.outcome, 'provisioned');
    assert.equal(second.outcome, 'already-provisioned');
    assert.deepEqual(
      fake.callsOf('ensureWorkerStatefulSetOf').map((c) => (c.result as { outcome: string }).outcome),
      ['created', 'exists'],
    );
    assert.equal(fake.createdStatefulSets.length, 1);
    assert.equal(fake.events.length, 1);
  });

  it('the LWS changed between the read and the create (stale): read again, then the workers from the LWS as it is', async () => {
    const fake = t.fake();
    fake.setLws({ podTerminationPolicy: 'Sequential' });
    const leader = fake.addLeader({ groupIndex: 0, at: await fake.now() });
    let changed = false;
    fake.onCall('ensureWorkerStatefulSetOf', () => {
      if (changed) return;
      changed = true;
      fake.lws!.spec.podTerminationPolicy = 'Parallel';
      fake.lws!.metadata.generation = 2;
    });
    const result = await provision(fake, inputFor(fake, leader));
    assert.equal(result.outcome, 'provisioned');
    assert.deepEqual(
      fake
        .callsOf('ensureWorkerStatefulSetOf')
        .map((c) => [(c.args[0] as { lws: LwsTarget }).lws.generation, c.result]),
      [
        [1, 'stale'],
        [2, { outcome: 'created', uid: fake.statefulSet('demo-0')!.uid }],
      ],
    );
    assert.equal(fake.callsOf('getLeaderWorkerSet').length, 2);
    assert.equal(leader.annotations['leaderworkerset.sigs.k8s.io/pod-termination-policy'], 'Parallel');
  });

  it('size 1: no worker StatefulSet, still provisioned', async () => {
    const fake = t.fake();
    const lws = fake.setLws();
    lws.spec.leaderWorkerTemplate.size = 1;
    const leader = fake.addLeader({ groupIndex: 0, at: await fake.now() });
    const result = await provision(fake, inputFor(fake, leader));
    assert.equal(result.outcome, 'provisioned');
    assert.deepEqual(fake.callsOf('ensureWorkerStatefulSetOf')[0]?.result, { outcome: 'not-needed' });
    assert.equal(fake.createdStatefulSets.length, 0);
    assert.equal(result.timeline.at(-1)?.detail, 'size 1: no workers');
  });
});
