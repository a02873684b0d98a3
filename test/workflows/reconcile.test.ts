// reconcileLeaderWorkerSet against a fake cluster: it applies one generation (headless Service, leader StatefulSet,
// policy annotation), keeps the status in step with the groups on every `changed` signal (and every 5 minutes
// without one), and ends when a newer generation takes over or the LWS goes.
import assert from 'node:assert/strict';
import {
  applyDefaults,
  selectors,
  LABEL_TEMPLATE_REVISION_HASH,
  templateRevisionHash,
  type LwsTarget,
  type LeaderWorkerSetStatus,
} from '../../src/model/index.js';
import type { ReconcileInput, ReconcileResult, reconcileLeaderWorkerSet } from '../../src/workflows/reconcile.js';
import { identityOf, type ActivityName, type FakeCluster } from '../fixtures/fake-activities.js';
import { useWorkflowTestEnv, eventually } from './harness.js';

const RESYNC = 5 * 60_000;
const changedSignalName = 'changed';

const isRunning = async (handle: { describe(): Promise<{ status: { name: string } }> }) =>
  (await handle.describe()).status.name === 'RUNNING';

/** `demo` at generation 3, 2 groups of 4: group 0 fully Ready, group 1's leader not Ready yet. */
async function twoGroups(fake: FakeCluster) {
  fake.setLws({}, { generation: 3 });
  const now = await fake.now();
  const leaders = [0, 1].map((groupIndex) => {
    const leader = fake.addLeader({
      groupIndex,
      at: now - 60_000,
      ...(groupIndex === 0 ? { readyAt: now - 60_000 } : {}),
    });
    fake.addWorkers({ groupIndex, ownerUid: leader.uid, at: now - 60_000 });
    return leader;
  });
  return { leaders, now };
}

/** The leader StatefulSet as an earlier template left it: `replicas` groups, written with `revision`. */
function leaderStatefulSetAt(fake: FakeCluster, revision: string, replicas = 2, partition = 0, lwsReplicas = 2) {
  fake.leaderStatefulSet = { applied: 'earlier', writes: 0, replicas, partition, revision, lwsReplicas };
}

/** 2 groups, rolled with a surge group: maxSurge 1, maxUnavailable 0. */
const surgeSpec = { replicas: 2, rolloutStrategy: { rollingUpdateConfiguration: { maxUnavailable: 0, maxSurge: 1 } } };

const statusWrites = (fake: FakeCluster) =>
  fake.callsOf('updateLeaderWorkerSetStatus').map((c) => (c.args[0] as { status: LeaderWorkerSetStatus }).status);

const available = (status: LeaderWorkerSetStatus | undefined) =>
  status?.conditions?.find((c) => c.type === 'Available')?.status;

/** The names of the calls, in the order they started, from the `from`-th on. */
const namesFrom = (fake: FakeCluster, from: number): ActivityName[] => fake.calls.slice(from).map((c) => c.name);

/** A pass reads the LWS and lists the groups at the same time: those two in either order, then the rest. */
const passOrder = (names: ActivityName[]): ActivityName[] => [...names.slice(0, 2).sort(), ...names.slice(2)];

describe('reconcileLeaderWorkerSet (time-skipping, fake cluster)', function () {
  this.timeout(60_000);
  const t = useWorkflowTestEnv();

  it('applies the Service and leader StatefulSet once, writes status, and follows `changed` signals', async () => {
    const fake = t.fake();
    const { leaders } = await twoGroups(fake);
    const result = await t.withWorker(fake, async (run) => {
      const handle = await run.start<typeof reconcileLeaderWorkerSet>('reconcileLeaderWorkerSet', {
        ref: fake.ref,
        generation: 3,
      });
      run.keepHistory(handle, 'reconcileLeaderWorkerSet-signals');

      // First pass: the groups (a rollout step is planned from them), apply, then status.
      await eventually('the first status write', () => fake.completed('updateLeaderWorkerSetStatus').length === 1);
      const first = namesFrom(fake, 0);
      const order: ActivityName[] = [
        'getLeaderWorkerSet',
        'listGroups',
        'ensureControllerRevisionOf',
        'ensureHeadlessServiceOf',
        'ensureLeaderStatefulSetOf',
        'updateLeaderWorkerSetStatus',
      ];
      assert.deepEqual(passOrder(first.filter((n) => order.includes(n))), order);
      assert.equal(fake.completed('ensureControllerRevisionOf')[0]?.result, 'created');
      assert.equal(fake.completed('ensureHeadlessServiceOf')[0]?.result, 'created');
      assert.equal(fake.services.get('default/demo'), 'lws-uid-1');
      assert.equal(fake.leaderStatefulSet?.writes, 1);
      await eventually('the condition told', () => fake.events.length === 3);
      assert.deepEqual(
        fake.events.map((e) => [e.reason, e.type]),
        [
          ['CreatingRevision', 'Normal'],
          ['LeaderStatefulSetCreated', 'Normal'],
          ['GroupsProgressing', 'Normal'],
        ],
      );
      // The policy is recorded on the leader pods as the API stores it (Default, upstream's name for Sequential), for
      // teardowns after the LWS is gone.
      for (const leader of leaders) {
        assert.equal(leader.annotations['leaderworkerset.sigs.k8s.io/pod-termination-policy'], 'Default');
      }
      const [status1] = statusWrites(fake);
      // The leader StatefulSet's status.replicas (upstream's), read before it was written in this pass.
      assert.equal(status1?.replicas, 0);
      assert.equal(status1?.readyReplicas, 1);
      assert.equal(status1?.observedGeneration, 3);
      assert.equal(status1?.hpaPodSelector, selectors.leadersOf('demo'));
      // As upstream: a condition is added only as True, so Available is not there yet.
      assert.equal(available(status1), undefined);
      assert.equal(status1?.conditions?.find((c) => c.type === 'Progressing')?.status, 'True');
      assert.deepEqual(fake.lws?.status, status1);

      // Without a signal nothing happens (the workflow waits on its condition).
      const callsAfterFirst = fake.calls.length;
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(fake.calls.length, callsAfterFirst);

      // Group 1 becomes Ready: one signal, one pass, a new status; nothing is applied again.
      leaders[1]!.readyAt = await fake.now();
      await handle.signal('changed');
      await eventually('the second status write', () => fake.completed('updateLeaderWorkerSetStatus').length === 2);
      // Every group Ready on the current revision: Available told, and the revisions no group uses pruned.
      await eventually('the prune', () => fake.completed('pruneControllerRevisions').length === 1);
      const second = namesFrom(fake, callsAfterFirst);
      assert.deepEqual(passOrder(second), [
        'getLeaderWorkerSet',
        'listGroups',
        'updateLeaderWorkerSetStatus',
        'recordEvent',
        'pruneControllerRevisions',
      ]);
      assert.ok(fake.events.some((e) => e.reason === 'AllGroupsReady'));
      const status2 = statusWrites(fake)[1];
      assert.equal(status2?.readyReplicas, 2);
      assert.equal(status2?.replicas, 2);
      assert.equal(available(status2), 'True');
      assert.equal(status2?.conditions?.find((c) => c.type === 'Progressing')?.status, 'False');

      // A signal with nothing changed: a look, and no write of the same status.
      const callsAfterSecond = fake.calls.length;
      await handle.signal('changed');
      await eventually('the third look', () => fake.completed('listGroups').length === 3);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(passOrder(namesFrom(fake, callsAfterSecond)), ['getLeaderWorkerSet', 'listGroups']);

      // A newer generation: this run is superseded.
      fake.lws!.metadata.generation = 4;
      await handle.signal('changed');
      return handle.result();
    });
    assert.equal(result, 'superseded');
    assert.equal(fake.callsOf('ensureLeaderStatefulSetOf').length, 1);
    assert.equal(fake.callsOf('ensureHeadlessServiceOf').length, 1);
  });

  it('with maxSurge, steers a rolling update: a surge group first, an old group only when a Ready one is spare, then back', async () => {
    const fake = t.fake();
    fake.setLws(surgeSpec, { generation: 5 });
    const now = await fake.now();
    const revision = templateRevisionHash(applyDefaults(fake.lws!).spec);
    /** A group of 4 whose leader runs the current template or an old one. */
    const group = (groupIndex: number, current: boolean) => {
      const leader = fake.addLeader({ groupIndex, at: now - 60_000, readyAt: now - 60_000 });
      leader.labels[LABEL_TEMPLATE_REVISION_HASH] = current ? revision : 'old-revision';
      fake.addWorkers({ groupIndex, ownerUid: leader.uid, at: now - 60_000 });
      return leader;
    };
    const [leader0, leader1] = [group(0, false), group(1, false)];
    leaderStatefulSetAt(fake, 'old-revision');
    /** A group's leader replaced on the current template: its new workers carry that revision too. */
    const onCurrent = (groupIndex: number, leader: { labels: Record<string, string> }) => {
      leader.labels[LABEL_TEMPLATE_REVISION_HASH] = revision;
      fake.statefulSet(`demo-${groupIndex}`)!.labels[LABEL_TEMPLATE_REVISION_HASH] = revision;
    };
    const writes = () => fake.callsOf('ensureLeaderStatefulSetOf').map((c) => c.args[1]);
    const steps = () => fake.events.filter((e) => e.reason === 'RollingUpdateStep').map((e) => e.message);

    const result = await t.withWorker(fake, async (run) => {
      const handle = await run.start<typeof reconcileLeaderWorkerSet>('reconcileLeaderWorkerSet', {
        ref: fake.ref,
        generation: 5,
      });
      run.keepHistory(handle, 'reconcileLeaderWorkerSet-rollout-steps');
      await eventually('the first pass', () => fake.completed('updateLeaderWorkerSetStatus').length === 1);
      // The groups are listed before the leader StatefulSet is written, and once per pass.
      assert.deepEqual(passOrder(namesFrom(fake, 0).filter((n) => n !== 'recordEvent' && n !== 'annotateLeaderPods')), [
        'getLeaderWorkerSet',
        'listGroups',
        'ensureControllerRevisionOf',
        'ensureHeadlessServiceOf',
        'ensureLeaderStatefulSetOf',
        'updateLeaderWorkerSetStatus',
      ]);
      // Both old groups stay up until the surge group (index 2, on the new template) is Ready.
      assert.deepEqual(writes(), [{ replicas: 3, partition: 2 }]);
      const applied = fake.events.find((e) => e.reason === 'LeaderStatefulSetUpdated');
      assert.match(applied!.message, /rolling update: 3 groups \(1 surge\), the new template from group 2 up/);

      /** One more pass, and the leader StatefulSet written `written` times by its end. */
      const pass = async (n: number, written: number) => {
        await handle.signal('changed');
        await eventually(`pass ${n}`, () => fake.completed('listGroups').length === n);
        await eventually(`write ${written}`, () => fake.completed('ensureLeaderStatefulSetOf').length === written);
      };
      group(2, true);
      await pass(2, 2);
      assert.deepEqual(writes()[1], { replicas: 3, partition: 1 }, 'the surge group is Ready: group 1 may go');
      // Group 1 back on the new template and Ready: group 0 may go.
      onCurrent(1, leader1);
      await pass(3, 3);
      assert.deepEqual(writes()[2], { replicas: 3, partition: 0 });
      // Group 0 replaced but not Ready yet: the surge group stays.
      onCurrent(0, leader0);
      delete leader0.readyAt;
      await pass(4, 3);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(writes().length, 3, 'nothing to write');
      leader0.readyAt = await fake.now();
      await pass(5, 4);
      assert.deepEqual(writes()[3], { replicas: 2, partition: 0 }, 'every group Ready: the surge group goes');
      // Each step names the one before it, so that one guarded patch moves the StatefulSet on.
      assert.deepEqual(
        fake.callsOf('ensureLeaderStatefulSetOf').map((c) => c.args[2] ?? undefined),
        [undefined, ...writes().slice(0, 3)],
      );
      await eventually('the last step told', () => steps().length === 3);
      assert.deepEqual(steps(), [
        'rolling update: 3 groups (1 surge), the new template from group 1 up',
        'rolling update: 3 groups (1 surge), the new template from group 0 up',
        'rolling update done: 2 groups, the new template from group 0 up',
      ]);
      fake.lws!.metadata.generation = 6;
      await handle.signal('changed');
      return handle.result();
    });
    assert.equal(result, 'superseded');
  });

  it("a template change takes its first step right after the generation's write, with no signal: none tells of the reconcile's own writes", async () => {
    const fake = t.fake();
    fake.setLws({ replicas: 2 }, { generation: 5 });
    const now = await fake.now();
    for (const groupIndex of [0, 1]) {
      const leader = fake.addLeader({ groupIndex, at: now - 60_000, readyAt: now - 60_000 });
      leader.labels[LABEL_TEMPLATE_REVISION_HASH] = 'old-revision';
      fake.addWorkers({ groupIndex, ownerUid: leader.uid, at: now - 60_000 });
    }
    leaderStatefulSetAt(fake, 'old-revision');
    const writes = () => fake.callsOf('ensureLeaderStatefulSetOf').map((c) => c.args[1]);
    const result = await t.withWorker(fake, async (run) => {
      const handle = await run.start<typeof reconcileLeaderWorkerSet>('reconcileLeaderWorkerSet', {
        ref: fake.ref,
        generation: 5,
      });
      await eventually('the first step', () => writes().length === 2);
      // The new revision written with every group kept on its template, then group 1 may go (maxUnavailable 1).
      assert.deepEqual(writes(), [
        { replicas: 2, partition: 2 },
        { replicas: 2, partition: 1 },
      ]);
      // Then it waits for the groups: the step's own write sets off one more look, and nothing more.
      await eventually('the look after the step', () => fake.completed('listGroups').length === 3);
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(fake.completed('listGroups').length, 3, 'no pass without a change');
      assert.equal(writes().length, 2);
      fake.lws!.metadata.generation = 6;
      await handle.signal('changed');
      return handle.result();
    });
    assert.equal(result, 'superseded');
  });

  it('a new generation while surge groups are kept after the last old group keeps them until the groups are Ready', async () => {
    const fake = t.fake();
    fake.setLws(surgeSpec, { generation: 5 });
    const now = await fake.now();
    // The tail of a rollout: every group on the new template, group 0 replaced but not Ready, the surge group Ready.
    const [leader0] = [0, 1, 2].map((groupIndex) => {
      const leader = fake.addLeader({ groupIndex, at: now - 60_000, readyAt: now - 60_000 });
      fake.addWorkers({ groupIndex, ownerUid: leader.uid, at: now - 60_000 });
      return leader;
    });
    delete leader0!.readyAt;
    leaderStatefulSetAt(fake, templateRevisionHash(applyDefaults(fake.lws!).spec), 3, 0, 2);
    const writes = () => fake.callsOf('ensureLeaderStatefulSetOf').map((c) => c.args[1]);
    const condition = (type: string) => fake.lws!.status?.conditions?.find((c) => c.type === type)?.status;
    const run = (input: ReconcileInput, body: (signal: () => Promise<void>) => Promise<void>, keep?: string) =>
      t.withWorker(fake, async (r) => {
        const handle = await r.start<typeof reconcileLeaderWorkerSet>('reconcileLeaderWorkerSet', input);
        if (keep) r.keepHistory(handle, keep);
        await eventually('the first pass', () => fake.completed('updateLeaderWorkerSetStatus').length > statuses);
        await body(() => handle.signal('changed'));
        return handle.result();
      });
    let statuses = 0;
    // Generation 5: the plan reads the leader StatefulSet as it stands, so the surge group stays while group 0 is
    // not Ready.
    const first = await run({ ref: fake.ref, generation: 5 }, async (signal) => {
      assert.deepEqual(writes(), [{ replicas: 3, partition: 0 }]);
      assert.equal(condition('Progressing'), 'True');
      statuses = fake.completed('updateLeaderWorkerSetStatus').length;
      fake.lws!.spec.podTerminationPolicy = 'Parallel'; // a spec change, not a template change: generation 6
      fake.lws!.metadata.generation = 6;
      await signal();
    });
    assert.equal(first, 'superseded');
    // Generation 6 keeps the surge group too, and lets it go once group 0 is Ready.
    const second = await run(
      { ref: fake.ref, generation: 6 },
      async (signal) => {
        assert.deepEqual(writes()[1], { replicas: 3, partition: 0 }, 'the surge group kept');
        leader0!.readyAt = await fake.now();
        await signal();
        await eventually('the surge group released', () => writes().length === 3);
        assert.deepEqual(writes()[2], { replicas: 2, partition: 0 });
        await eventually('the status caught up', () => condition('Available') === 'True');
        assert.equal(condition('Progressing'), 'False');
        fake.lws!.metadata.generation = 7;
        await signal();
      },
      'reconcileLeaderWorkerSet-surge-kept-across-generations',
    );
    assert.equal(second, 'superseded');
  });

  // The trigger batches a burst of changes into one signal (trigger/starter.ts): each signal makes a pass at once, and
  // a rollout's next step comes as soon as the trigger says a group is Ready.
  for (const rolling of [true, false]) {
    it(`a signal makes a pass at once, ${rolling ? 'during a rolling update' : 'with no rollout'}`, async () => {
      const fake = t.fake();
      const { leaders } = await twoGroups(fake);
      leaders[1]!.readyAt = await fake.now();
      if (rolling) {
        for (const l of leaders) l.labels[LABEL_TEMPLATE_REVISION_HASH] = 'old-revision';
        leaderStatefulSetAt(fake, 'old-revision');
      }
      const looks = () => fake.callsOf('listGroups').map((c) => c.at);
      const result = await t.withWorker(fake, async (run) => {
        const handle = await run.start<typeof reconcileLeaderWorkerSet>('reconcileLeaderWorkerSet', {
          ref: fake.ref,
          generation: 3,
        });
        if (rolling) run.keepHistory(handle, 'reconcileLeaderWorkerSet-step-at-signal');
        await eventually('the first pass', () => fake.completed('updateLeaderWorkerSetStatus').length === 1);
        const signalledAt = await fake.now();
        await handle.signal('changed');
        await eventually('the second look', () => looks().length === 2);
        const delay = looks()[1]! - signalledAt;
        // Two reads of the test server's time can disagree by a few ms (seen: the look 3 ms "before" the signal).
        assert.ok(delay >= -50 && delay <= 500, `looked ${delay} ms after the signal (-50 to 500)`);
        fake.lws!.metadata.generation = 4;
        await handle.signal('changed');
        return handle.result();
      });
      assert.equal(result, 'superseded');
    });
  }

  it('looks again every 5 minutes without a signal, and ends with deleted once the LWS is gone', async () => {
    const fake = t.fake();
    await twoGroups(fake);
    const result = await t.withWorker(fake, async (run) => {
      const handle = await run.start<typeof reconcileLeaderWorkerSet>('reconcileLeaderWorkerSet', {
        ref: fake.ref,
        generation: 3,
      });
      await eventually('the first pass', () => fake.completed('updateLeaderWorkerSetStatus').length === 1);
      await t.sleep(RESYNC + 1_000);
      const looks = fake.completed('listGroups');
      assert.equal(looks.length, 2, 'a resync after 5 minutes');
      const gap = looks[1]!.at - looks[0]!.at;
      assert.ok(gap >= RESYNC && gap < RESYNC + 2_000, `resync after ${gap} ms`);
      fake.lws = null;
      await t.sleep(RESYNC + 1_000);
      return handle.result();
    });
    assert.equal(result, 'deleted');
    assert.equal(fake.callsOf('getLeaderWorkerSet').length, 3);
  });

  it("another LWS's StatefulSet on the leader name: a Warning Event and a NameConflict condition until it is gone", async () => {
    const fake = t.fake();
    await twoGroups(fake);
    fake.leaderNameTakenBy = 'the worker StatefulSet of group 1 of LeaderWorkerSet de';
    await t.withWorker(fake, async (run) => {
      await run.start<typeof reconcileLeaderWorkerSet>('reconcileLeaderWorkerSet', { ref: fake.ref, generation: 3 });
      await eventually('the first pass', () => fake.completed('updateLeaderWorkerSetStatus').length === 1);
      const conflict = statusWrites(fake)[0]!.conditions!.find((c) => c.type === 'NameConflict');
      assert.equal(conflict?.status, 'True');
      assert.equal(conflict?.reason, 'NameTaken');
      assert.match(
        conflict!.message,
        /StatefulSet default\/demo is the worker StatefulSet of group 1 of LeaderWorkerSet de/,
      );
      assert.match(conflict!.message, /rename or delete one of the two/);
      assert.deepEqual(
        fake.events.filter((e) => e.type === 'Warning').map((e) => e.reason),
        ['NameConflict'],
      );
      assert.equal(fake.leaderStatefulSet, undefined, 'nothing written over the name');
      // The other LWS is renamed away: the next resync applies this one and the condition goes.
      fake.leaderNameTakenBy = undefined;
      await t.sleep(RESYNC + 1_000);
      await eventually('the status without the conflict', () =>
        statusWrites(fake).some((s) => s.conditions?.every((c) => c.type !== 'NameConflict')),
      );
      assert.ok(fake.leaderStatefulSet, 'the leader StatefulSet is written');
    });
  });

  const refusedMessage =
    'StatefulSet.apps "demo" is invalid: spec.template.spec.containers[0].name: Invalid value: "Main": a lowercase ' +
    'RFC 1123 label must consist of lower case alphanumeric characters';
  const replicaFailure = (status: LeaderWorkerSetStatus | undefined) =>
    status?.conditions?.find((c) => c.type === 'ReplicaFailure');

  it('a leader StatefulSet the API server refuses: a Warning Event once and a ReplicaFailure condition, no failure; a fixed generation clears it', async () => {
    const fake = t.fake();
    await twoGroups(fake);
    fake.fail('ensureLeaderStatefulSetOf', 2, 'refused', refusedMessage);
    await t.withWorker(fake, async (run) => {
      const handle = await run.start<typeof reconcileLeaderWorkerSet>('reconcileLeaderWorkerSet', {
        ref: fake.ref,
        generation: 3,
      });
      run.keepHistory(handle, 'reconcileLeaderWorkerSet-leader-refused');
      await eventually('the first status write', () => fake.completed('updateLeaderWorkerSetStatus').length === 1);
      const condition = replicaFailure(statusWrites(fake)[0]);
      assert.equal(condition?.status, 'True');
      assert.equal(condition?.reason, 'InvalidLeaderTemplate');
      assert.match(condition!.message, /^the API server refused leader StatefulSet default\/demo \(HTTP 422\)/);
      assert.ok(condition!.message.endsWith(refusedMessage), condition!.message);
      const warnings = () => fake.events.filter((e) => e.type === 'Warning');
      assert.deepEqual(
        warnings().map((e) => [e.reason, e.message]),
        [['InvalidLeaderTemplate', condition!.message]],
      );
      // Its own status write is a change of the LWS: the next pass is refused the same, and tells nothing again.
      fake.lws!.status = statusWrites(fake)[0];
      await handle.signal(changedSignalName);
      await eventually('a second refusal', () => fake.callsOf('ensureLeaderStatefulSetOf').length === 2);
      await t.sleep(2_000);
      assert.equal(warnings().length, 1, 'told once');
      assert.equal(fake.completed('updateLeaderWorkerSetStatus').length, 1, 'the same status is not written again');
      assert.equal(await isRunning(handle), true, 'waiting, not failed');
      // The user fixes the template: a new generation, which this run leaves to its own.
      fake.lws!.metadata.generation = 4;
      await handle.signal(changedSignalName);
      assert.equal(await handle.result(), 'superseded');
    });
    await t.withWorker(fake, async (run) => {
      await run.start<typeof reconcileLeaderWorkerSet>('reconcileLeaderWorkerSet', { ref: fake.ref, generation: 4 });
      await eventually(
        'a status write of generation 4',
        () => fake.completed('updateLeaderWorkerSetStatus').length === 2,
      );
      assert.equal(replicaFailure(statusWrites(fake)[1]), undefined, 'the condition is gone');
      assert.ok(fake.leaderStatefulSet, 'the leader StatefulSet is written');
      // Left running: withWorker terminates it once its workflow task is done.
    });
  });

  it("a group's workers refused, as its provisioning wrote on the leader: a ReplicaFailure condition while it has none", async () => {
    const fake = t.fake();
    fake.setLws({}, { generation: 3 });
    const now = await fake.now();
    const told = 'group 0: the API server refused worker StatefulSet default/demo-0 (HTTP 422), built from ...';
    const leader = fake.addLeader({ groupIndex: 0, at: now - 60_000, readyAt: now - 60_000 });
    leader.annotations['leaderworkerset.sigs.k8s.io/workers-refused'] = told;
    const other = fake.addLeader({ groupIndex: 1, at: now - 60_000, readyAt: now - 60_000 });
    other.annotations['leaderworkerset.sigs.k8s.io/workers-refused'] = 'made since';
    fake.addWorkers({ groupIndex: 1, ownerUid: other.uid, at: now - 60_000 });
    await t.withWorker(fake, async (run) => {
      const handle = await run.start<typeof reconcileLeaderWorkerSet>('reconcileLeaderWorkerSet', {
        ref: fake.ref,
        generation: 3,
      });
      await eventually('the first status write', () => fake.completed('updateLeaderWorkerSetStatus').length === 1);
      const condition = replicaFailure(statusWrites(fake)[0]);
      assert.deepEqual(
        [condition?.status, condition?.reason, condition?.message],
        ['True', 'InvalidWorkerTemplate', told],
      );
      // The rollout of a fixed template replaces the leader: its successor carries nothing.
      fake.lws!.status = statusWrites(fake)[0];
      delete leader.annotations['leaderworkerset.sigs.k8s.io/workers-refused'];
      await handle.signal(changedSignalName);
      await eventually('the status without it', () => fake.completed('updateLeaderWorkerSetStatus').length === 2);
      assert.equal(replicaFailure(statusWrites(fake)[1]), undefined);
    });
  });

  const endings: {
    name: string;
    setup: (fake: FakeCluster) => void;
    generation: number;
    result: ReconcileResult;
  }[] = [
    { name: 'the LWS is gone', setup: (fake) => (fake.lws = null), generation: 3, result: 'deleted' },
    {
      name: 'the LWS is being deleted',
      setup: (fake) => (fake.lws!.metadata.deletionTimestamp = new Date().toISOString()),
      generation: 3,
      result: 'deleted',
    },
    { name: 'the generation already advanced', setup: () => {}, generation: 2, result: 'superseded' },
    {
      name: 'the spec is invalid (size 0)',
      setup: (fake) => (fake.lws!.spec.leaderWorkerTemplate.size = 0),
      generation: 3,
      result: 'invalid',
    },
  ];

  for (const c of endings) {
    it(`${c.result} at once, applying nothing, when ${c.name}`, async () => {
      const fake = t.fake();
      await twoGroups(fake);
      const input: ReconcileInput = { ref: fake.ref, generation: c.generation };
      c.setup(fake);
      const result = await t.withWorker(fake, async (run) =>
        (await run.start<typeof reconcileLeaderWorkerSet>('reconcileLeaderWorkerSet', input)).result(),
      );
      assert.equal(result, c.result);
      for (const name of [
        'ensureHeadlessServiceOf',
        'ensureLeaderStatefulSetOf',
        'updateLeaderWorkerSetStatus',
      ] as const) {
        assert.equal(fake.callsOf(name).length, 0, `${name} was called`);
      }
      if (c.result === 'invalid') {
        assert.deepEqual(
          fake.events.map((e) => [e.type, e.reason]),
          [['Warning', 'InvalidSpec']],
        );
        assert.match(fake.events[0]!.message, /spec\.leaderWorkerTemplate\.size/);
      } else {
        assert.equal(fake.events.length, 0);
      }
    });
  }

  it('a new generation between the read and the writes: stale, nothing of the old decision applied, superseded', async () => {
    const fake = t.fake();
    await twoGroups(fake);
    // The writes read the LWS themselves (issue 28): the one they find is no longer the one the pass decided on.
    fake.onCall('ensureControllerRevisionOf', () => (fake.lws!.metadata.generation = 4));
    const result = await t.withWorker(fake, async (run) =>
      (
        await run.start<typeof reconcileLeaderWorkerSet>('reconcileLeaderWorkerSet', { ref: fake.ref, generation: 3 })
      ).result(),
    );
    assert.equal(result, 'superseded');
    assert.deepEqual(
      fake.completed('ensureControllerRevisionOf').map((c) => c.result),
      ['stale'],
    );
    assert.equal(fake.revisions.size, 0);
    for (const name of [
      'ensureHeadlessServiceOf',
      'ensureLeaderStatefulSetOf',
      'updateLeaderWorkerSetStatus',
    ] as const) {
      assert.equal(fake.callsOf(name).length, 0, `${name} was called`);
    }
    assert.equal(fake.callsOf('getLeaderWorkerSet').length, 2, 'read again after the stale write');
  });

  // `kubectl delete` then `kubectl apply`: a new LWS (another uid) under the name this run keeps applied, while the old
  // one's leaders still terminate.
  for (const c of [
    { generation: 3, then: 'a fresh run applies it once the old leaders are gone', runs: 2 },
    { generation: 1, then: "it is left to its generation's reconcile", runs: 1 },
  ]) {
    it(`an LWS created again under the same name at generation ${c.generation}: ${c.then}`, async () => {
      const fake = t.fake();
      const { leaders } = await twoGroups(fake);
      const { result, continued } = await t.withWorker(fake, async (run) => {
        const handle = await run.start<typeof reconcileLeaderWorkerSet>('reconcileLeaderWorkerSet', {
          ref: fake.ref,
          generation: 3,
        });
        if (c.runs === 2) run.keepHistory(handle, 'reconcileLeaderWorkerSet-created-again');
        await eventually('the first pass', () => fake.completed('updateLeaderWorkerSetStatus').length === 1);
        // The garbage collector took the old one's Service and leader StatefulSet with it; its leaders terminate.
        fake.setLws({}, { uid: 'lws-uid-2', generation: c.generation });
        fake.services.clear();
        fake.leaderStatefulSet = undefined;
        const deletedAt = await fake.now();
        for (const leader of leaders) {
          leader.ownerUid = 'old-leader-statefulset-uid';
          fake.deletePodAt(leader.uid, deletedAt);
        }
        // Once the new LWS is applied, a newer generation ends the run at its next look (its resync). No test sleep
        // runs beside the wait on the old leaders: the time-skipping server then skips only while both sleep, and a
        // stalled heartbeat between them leaves time at wall-clock pace (sdk-java#2246), a real minute of grace.
        fake.onCall('getLeaderWorkerSet', () => {
          if (fake.completed('ensureLeaderStatefulSetOf').length === 3) fake.lws!.metadata.generation = 4;
        });
        await handle.signal('changed');
        const result = await handle.result();
        const last = await handle.describe();
        return { result, continued: last.runId !== handle.firstExecutionRunId };
      });
      assert.equal(result, c.runs === 2 ? 'superseded' : 'deleted');
      assert.equal(continued, c.runs === 2, 'continued as new');
      const ensures = fake.callsOf('ensureLeaderStatefulSetOf');
      if (c.runs === 1) {
        assert.deepEqual(
          ensures.map((e) => e.result),
          ['created'],
        );
        assert.equal(fake.services.get('default/demo'), undefined);
        return;
      }
      // The new one's StatefulSet is created only once the old leaders no longer hold the names.
      assert.deepEqual(
        ensures.map((e) => [(e.args[0] as LwsTarget).uid, e.result]),
        [
          ['lws-uid-1', 'created'],
          ['lws-uid-2', { outcome: 'blocked', pods: leaders.map(identityOf) }],
          ['lws-uid-2', 'created'],
        ],
      );
      const oldGone = Math.max(...leaders.map((l) => fake.removedAt.get(l.uid)!));
      assert.ok(oldGone >= leaders[0]!.deletedAt! + fake.graceMs, 'the old leaders took their grace period');
      assert.ok(ensures[2]!.at >= oldGone, `created ${oldGone - ensures[2]!.at} ms before the old leaders were gone`);
      assert.equal(fake.services.get('default/demo'), 'lws-uid-2');
    });
  }

  // The LWS going mid-pass ends the run as deleted, not failed; the call that found it gone is not retried.
  const goneMidPass: [string, ActivityName, (fake: FakeCluster) => void, ActivityName][] = [
    [
      'the namespace is being deleted (the Service create is refused)',
      'ensureHeadlessServiceOf',
      (fake) => fake.fail('ensureHeadlessServiceOf', 1, 'namespace-terminating'),
      'ensureLeaderStatefulSetOf',
    ],
    [
      "the LWS goes between the pass's read and its status write (404)",
      'updateLeaderWorkerSetStatus',
      (fake) => fake.onCall('updateLeaderWorkerSetStatus', () => (fake.lws = null)),
      'recordEvent',
    ],
  ];
  for (const [when, refused, setup, notAfter] of goneMidPass) {
    it(`deleted, not a failure, when ${when}`, async () => {
      const fake = t.fake();
      await twoGroups(fake);
      setup(fake);
      const input: ReconcileInput = { ref: fake.ref, generation: fake.lws!.metadata.generation ?? 1 };
      const result = await t.withWorker(fake, async (run) =>
        (await run.start<typeof reconcileLeaderWorkerSet>('reconcileLeaderWorkerSet', input)).result(),
      );
      assert.equal(result, 'deleted');
      assert.equal(fake.callsOf(refused).length, 1, 'refused once, not retried');
      assert.equal(fake.completed(refused).length, 0);
      const refusedAt = fake.callsOf(refused)[0]!.seq;
      assert.ok(!fake.callsOf(notAfter).some((c) => c.seq > refusedAt), `no ${notAfter} after it`);
    });
  }

  it('any other permanent failure still fails the reconcile', async () => {
    const fake = t.fake();
    await twoGroups(fake);
    fake.fail('ensureHeadlessServiceOf', 1, 'permanent');
    const input: ReconcileInput = { ref: fake.ref, generation: fake.lws!.metadata.generation ?? 1 };
    await assert.rejects(
      t.withWorker(fake, async (run) =>
        (await run.start<typeof reconcileLeaderWorkerSet>('reconcileLeaderWorkerSet', input)).result(),
      ),
      (err: Error) => err.name === 'WorkflowFailedError',
    );
  });

  it('a new generation updates the leader StatefulSet; a restarted run of the same generation changes nothing', async () => {
    const fake = t.fake();
    await twoGroups(fake);
    const run = (generation: number) =>
      t.withWorker(fake, async (r) => {
        const handle = await r.start<typeof reconcileLeaderWorkerSet>('reconcileLeaderWorkerSet', {
          ref: fake.ref,
          generation,
        });
        // The first pass has applied the leader StatefulSet (the groups are listed along with the LWS, so a
        // completed list does not yet mean the LWS was read).
        await eventually('a pass', () => fake.completed('ensureLeaderStatefulSetOf').length > looks);
        looks = fake.completed('ensureLeaderStatefulSetOf').length;
        fake.lws!.metadata.generation = generation + 1; // ends the run at its next look
        await handle.signal('changed');
        return handle.result();
      });
    let looks = 0;
    assert.equal(await run(3), 'superseded');
    fake.lws!.spec.replicas = 3;
    fake.lws!.metadata.generation = 4;
    assert.equal(await run(4), 'superseded');
    fake.lws!.metadata.generation = 4;
    assert.equal(await run(4), 'superseded');
    assert.deepEqual(
      fake.callsOf('ensureLeaderStatefulSetOf').map((c) => c.result),
      ['created', 'updated', 'unchanged'],
    );
    assert.deepEqual(
      fake.events.map((e) => e.reason).filter((r) => r.startsWith('LeaderStatefulSet')),
      ['LeaderStatefulSetCreated', 'LeaderStatefulSetUpdated'],
    );
  });
});
