// teardownGroup in workflow time, against a fake cluster: what each termination policy makes the controller do, and
// when the group's pods are gone (docs/api.md, "spec.podTerminationPolicy"). The trigger passes the policy it knew as
// `policy` (under Parallel the workflow's first call is then the delete); without it the workflow reads first, then
// decides.
import assert from 'node:assert/strict';
import { ActivityFailure, ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import {
  FORCE_DELETE_MARGIN_MS,
  LABEL_TEMPLATE_REVISION_HASH,
  type Lifecycle as LifecycleName,
  type PodTerminationPolicy,
  notWantedAbove,
} from '../../src/model/index.js';
import { Lifecycle, TerminationPolicy } from '../../src/workflows/search-attributes.js';
import type { TeardownGroupInput, teardownGroup } from '../../src/workflows/teardown-group.js';
import type { TimelineEntry, TimelineEvent } from '../../src/workflows/timeline.js';
import { identityOf, type ActivityName, type FakeCluster } from '../fixtures/fake-activities.js';
import { useWorkflowTestEnv, at, describeTimeline, eventually, heartbeatTimeouts } from './harness.js';

/** Pod grace period: long, as in the AI/ML workloads the policy is for. */
const GRACE = 60_000;
/** A new pod is Ready this long after it is created. */
const READY = 5_000;
/**
 * What "about" means: until the test awaits the result, the server's clock runs at wall-clock pace, so the few
 * activity round trips before the delete (tens of ms, more on a loaded machine) count as workflow time.
 */
const SLACK = 2_000;

const near = (actual: number | undefined, expected: number, what: string) =>
  assert.ok(
    actual !== undefined && Math.abs(actual - expected) <= SLACK,
    `${what} was ${actual} ms, not about ${expected} ms`,
  );

/** The teardown's first calls: whichever comes first is the moment the trigger saw the leader terminating. */
const FIRST_CALLS: ActivityName[] = [
  'deleteSeenWorkers',
  'deleteWorkerStatefulSet',
  'getLeaderWorkerSet',
  'getPod',
  'getStatefulSet',
];

/**
 * Group 0 of `demo`: a Ready leader with a worker StatefulSet of 3 Ready pods. The LWS exists with `spec` policy unless
 * `lws` is 'gone'; the leader pod carries the `annotation` policy; `hint` is the policy the trigger passes. The leader
 * is deleted (terminating for GRACE) at the teardown's first call, so that `t0()`, the deletion, is the teardown's
 * start (until the test awaits the result, time passes at wall-clock pace, and worker start-up would count too).
 */
async function terminatingGroup(
  fake: FakeCluster,
  opts: {
    spec?: PodTerminationPolicy;
    annotation?: PodTerminationPolicy;
    /** `created-again`: an LWS of that name exists, created after the leader (the group's own was deleted). */
    lws?: 'exists' | 'gone' | 'created-again';
    hint?: PodTerminationPolicy;
    /** Why the leader goes (default scale-down): the LWS wants 2 groups for a rebuild, 0 for a scale-down. */
    lifecycle?: 'rebuild' | 'scale-down';
    /** The group (default 0). */
    group?: number;
  } = {},
) {
  const lifecycle = opts.lifecycle ?? 'scale-down';
  const groupIndex = opts.group ?? 0;
  // As the teardown judges it again from its reads, the LWS agrees with the lifecycle.
  fake.setLws({
    replicas: lifecycle === 'rebuild' ? 2 : 0,
    ...(opts.spec ? { podTerminationPolicy: opts.spec } : {}),
  });
  const longAgo = (await fake.now()) - 3_600_000;
  const leader = fake.addLeader({ groupIndex, at: longAgo, readyAt: longAgo, policy: opts.annotation });
  const { sts, pods } = fake.addWorkers({ groupIndex, ownerUid: leader.uid, at: longAgo });
  assert.equal(pods.length, 3);
  let deletedAt: number | undefined;
  const deleteLeader = (now: number) => {
    if (deletedAt !== undefined) return;
    deletedAt = now;
    fake.deletePodAt(leader.uid, now);
  };
  for (const name of FIRST_CALLS) fake.onCall(name, deleteLeader);
  if (opts.lws === 'gone') fake.lws = null;
  if (opts.lws === 'created-again') fake.lws!.metadata.creationTimestamp = new Date(longAgo + 60_000).toISOString();
  const input: TeardownGroupInput = {
    ref: fake.ref,
    groupIndex,
    leader: { namespace: leader.namespace, name: leader.name, uid: leader.uid },
    lifecycle: opts.lws === 'gone' || opts.lws === 'created-again' ? 'delete' : lifecycle,
    ...(opts.hint ? { policy: opts.hint } : {}),
  };
  const t0 = () => {
    assert.ok(deletedAt !== undefined, 'the teardown made no call');
    return deletedAt;
  };
  return { t0, leader, sts, pods, input };
}

/** The Event each step of a teardown's timeline is recorded as. */
const EVENT_BY_STEP: Partial<Record<TimelineEvent, string>> = {
  'leader terminating': 'GroupLeaderTerminating',
  'workers terminating': 'GroupWorkersTerminating',
  'leader gone': 'GroupLeaderGone',
  'workers gone': 'GroupWorkersGone',
  'old StatefulSet gone': 'GroupOldStatefulSetGone',
  'new leader': 'GroupNewLeader',
  'new group ready': 'GroupNewGroupReady',
};

/** Whether the call that started as `seq` went out in the workflow's first round: before any Event or wait. */
function inFirstRound(fake: FakeCluster, seq: number): boolean {
  const later: ActivityName[] = [
    'recordEvent',
    'recordEvents',
    'waitForPodGone',
    'waitForPodsGone',
    'waitForStatefulSetGone',
  ];
  return fake.calls.every((c) => !later.includes(c.name) || seq < c.seq);
}

/** Asserts that the events happen in this order in time (within SLACK), each exactly once. */
function assertChronological(timeline: TimelineEntry[], order: TimelineEvent[]) {
  const times = order.map((event) => at(timeline, event));
  for (let i = 1; i < order.length; i++) {
    assert.ok(
      times[i - 1]! <= times[i]! + SLACK,
      `"${order[i - 1]}" should come before "${order[i]}": ${describeTimeline(timeline)}`,
    );
  }
}

describe('teardownGroup (time-skipping, fake cluster)', function () {
  this.timeout(60_000);
  const t = useWorkflowTestEnv();

  const teardown = (fake: FakeCluster, input: TeardownGroupInput, keep?: string) =>
    t.runToEnd<typeof teardownGroup>(fake, 'teardownGroup', input, keep);

  const rebuilds: { policy: PodTerminationPolicy; order: TimelineEvent[]; teardown: number; recovery: number }[] = [
    {
      policy: 'Parallel',
      order: [
        'leader terminating',
        'workers terminating',
        'leader gone',
        'workers gone',
        'old StatefulSet gone',
        'new leader',
        'new group ready',
      ],
      teardown: GRACE,
      recovery: GRACE + READY,
    },
    {
      // The garbage collector deletes the worker StatefulSet (in the background) once the leader is gone; its pods
      // then terminate for their own grace period, and the new workers can only start after them (same names).
      policy: 'Sequential',
      order: [
        'leader terminating',
        'leader gone',
        'workers terminating',
        'old StatefulSet gone',
        'new leader',
        'workers gone',
        'new group ready',
      ],
      teardown: 2 * GRACE,
      recovery: 2 * GRACE + READY,
    },
  ];

  for (const c of rebuilds) {
    it(`rebuild under ${c.policy}: timeline in order, teardown about ${c.teardown / GRACE} x grace`, async () => {
      const fake = t.fake({ graceMs: GRACE, podReadyAfterMs: READY, leaderController: true, provisioner: true });
      const { t0, leader, sts, pods, input } = await terminatingGroup(fake, {
        spec: c.policy,
        hint: c.policy,
        lifecycle: 'rebuild',
      });
      const result = await teardown(fake, input, `teardownGroup-rebuild-${c.policy}`);

      assert.equal(result.policy, c.policy);
      assert.equal(result.lifecycle, 'rebuild');
      assert.equal(result.timeline[0]?.event, 'leader terminating');
      assert.match(result.timeline[0]?.detail ?? '', new RegExp(`policy ${c.policy} from spec`));
      assertChronological(result.timeline, c.order);
      near(result.teardownMs, c.teardown, 'teardownMs');
      near(result.recoveryMs, c.recovery, 'recoveryMs');

      // The fake's own record agrees with the timeline: when the leader and the workers really went.
      const leaderGone = fake.removedAt.get(leader.uid)!;
      near(leaderGone - t0(), GRACE, 'leader gone after');
      const workersGone = Math.max(...pods.map((p) => fake.removedAt.get(p.uid)!));
      near(workersGone - t0(), c.teardown, 'workers gone after');
      near(at(result.timeline, 'leader gone'), leaderGone, 'timeline "leader gone"');
      near(at(result.timeline, 'workers gone'), workersGone, 'timeline "workers gone"');

      // The controller never deletes pods itself; the new group got exactly one new worker StatefulSet, after the old.
      assert.equal(fake.callsOf('deletePod').length, 0);
      const newLeader = fake.pod('demo-0')!;
      assert.notEqual(newLeader.uid, leader.uid);
      const created = fake.createdStatefulSets.filter((s) => s.ownerUid === newLeader.uid);
      assert.equal(created.length, 1);
      assert.ok(fake.removedAt.get(sts.uid)! <= created[0]!.at, 'new StatefulSet while the old one existed');
      // The measurements go to the worker's metrics as reported.
      assert.deepEqual(
        fake.completed('reportTeardown').map((c) => c.args[0]),
        [{ policy: c.policy, lifecycle: 'rebuild', teardownMs: result.teardownMs, recoveryMs: result.recoveryMs }],
      );
      // The steps are Events on the LWS too (kubectl describe lws): each step once, the replacement's two in one call.
      assert.deepEqual(fake.events.map((e) => e.reason).sort(), c.order.map((step) => EVENT_BY_STEP[step]).sort());
      assert.ok(fake.events.every((e) => e.lws.uid === 'lws-uid-1'));
      const last = fake.callsOf('recordEvents').at(-1)?.args[0] as { reason: string }[];
      assert.deepEqual(
        last.map((e) => e.reason),
        ['GroupNewLeader', 'GroupNewGroupReady'],
      );
    });
  }

  it('its waits, on which only its own report waits, beat at a 30 s heartbeat timeout', async () => {
    const fake = t.fake({ graceMs: GRACE, podReadyAfterMs: READY, leaderController: true, provisioner: true });
    const { input } = await terminatingGroup(fake, { spec: 'Parallel', hint: 'Parallel', lifecycle: 'rebuild' });
    const timeouts = await t.withWorker(fake, async (run) => {
      const handle = await run.start<typeof teardownGroup>('teardownGroup', input);
      await handle.result();
      return heartbeatTimeouts((await handle.fetchHistory()).events ?? []);
    });
    // Each heartbeat is a write on the Temporal server and an Action on Temporal Cloud (model/crash-recovery.ts).
    assert.deepEqual(timeouts.sort(), [
      ['waitForPodGone', 30_000],
      ['waitForPodsGone', 30_000],
      ['waitForReplacementGroupReady', 30_000],
      ['waitForStatefulSetGone', 30_000],
    ]);
  });

  it('the first round is one local activity and its two Events one more; each wait records its own Events (each result is a turn of the workflow thread)', async () => {
    const fake = t.fake({ graceMs: GRACE });
    const { pods, sts, input } = await terminatingGroup(fake, { spec: 'Parallel', hint: 'Parallel' });
    const workers = {
      statefulSet: identityOf(sts),
      pods: pods.map(identityOf),
    };
    const result = await teardown(fake, { ...input, workers }, 'teardownGroup-parallel-first-round');

    const [first] = fake.callsOf('beginTeardown');
    assert.equal(fake.callsOf('beginTeardown').length, 1);
    assert.equal((first?.result as { deleted?: string }).deleted, 'deleted');
    // Its calls all ran inside it: the delete and the reads (for this group above the LWS's replicas, a scale-down,
    // the leader StatefulSet's read after the worker StatefulSet's).
    const inside = fake.calls.filter((c) => c.seq > first!.seq && c.seq < first!.endSeq!).map((c) => c.name);
    const expected = { deleteSeenWorkers: 1, getLeaderWorkerSet: 1, getPod: 1, getStatefulSet: 2, listGroupPods: 1 };
    for (const [name, count] of Object.entries(expected)) {
      assert.equal(inside.filter((n) => n === name).length, count, `${name} inside beginTeardown`);
    }
    const [events] = fake.callsOf('recordEvents');
    assert.deepEqual(
      (events?.args[0] as { reason: string }[]).map((e) => e.reason),
      ['GroupLeaderTerminating', 'GroupWorkersTerminating'],
    );
    // Later, each wait records the Events of its end itself (a scale-down: no replacement, so no more calls).
    const batches = fake.callsOf('recordEvents');
    assert.equal(batches.length, 1);
    const inBatch = (seq: number) => batches.some((b) => b.seq < seq && seq < b.endSeq!);
    assert.ok(
      fake.callsOf('recordEvent').every((c) => inBatch(c.seq)),
      'no Event of its own after the first round',
    );
    const recordedByWaits = fake.calls
      .filter((c) => c.name.startsWith('waitFor') && c.name.endsWith('Gone'))
      .flatMap((c) => ((c.args[0] as { tell?: { reason: string }[] }).tell ?? []).map((e) => e.reason));
    assert.deepEqual(recordedByWaits.sort(), ['GroupLeaderGone', 'GroupOldStatefulSetGone', 'GroupWorkersGone']);
    assert.deepEqual(
      fake.events
        .map((e) => e.reason)
        .slice(2)
        .sort(),
      recordedByWaits,
      'recorded as the waits ended',
    );
    assert.deepEqual(
      result.timeline.slice(0, 2).map((e) => e.event),
      ['leader terminating', 'workers terminating'],
    );
    near(result.teardownMs, GRACE, 'teardownMs');
  });

  it("Parallel (trigger's hint) without the workers it saw: deletes this leader's workers right after the first reads, while it is terminating", async () => {
    const fake = t.fake({ graceMs: GRACE });
    const { t0, leader, sts, pods, input } = await terminatingGroup(fake, { spec: 'Parallel', hint: 'Parallel' });
    const result = await teardown(fake, input);

    const [first] = fake.callsOf('beginTeardown');
    const [del] = fake.callsOf('deleteWorkerStatefulSet');
    assert.ok(
      del && first!.endSeq! < del.seq && inFirstRound(fake, del.seq),
      'after the reads, before any Event or wait',
    );
    // Decided by the workflow from what it read: this leader's StatefulSet, by its uid.
    assert.deepEqual(del.args, [
      { namespace: 'default', name: 'demo-0', uid: sts.uid, ownerUid: leader.uid, propagationPolicy: 'Foreground' },
    ]);
    assert.equal(del.result, 'deleted');
    assert.equal(fake.callsOf('deleteWorkerStatefulSet').length, 1);
    assert.equal(fake.removedAt.has(sts.uid), true);

    // Before the leader is gone: in the fake's time, and before waitForPodGone(leader) returned.
    const leaderGone = fake.removedAt.get(leader.uid)!;
    assert.ok(del.at < leaderGone - GRACE / 2, `deleted at +${del.at - t0()} ms, leader gone at +${leaderGone - t0()}`);
    const leaderWaits = fake.callsOf('waitForPodGone');
    assert.deepEqual(
      leaderWaits.map((c) => {
        const { tell: _events, ...target } = c.args[0] as Record<string, unknown>;
        return target;
      }),
      [{ namespace: 'default', name: 'demo-0', uid: leader.uid }],
    );
    assert.ok(del.endSeq! < leaderWaits[0]!.endSeq!, 'delete returned before the leader wait resolved');
    // So the workers terminated together with the leader: all gone about 1 x grace after the leader's deletion.
    for (const p of pods) near(p.deletedAt! - t0(), 0, `worker ${p.name} deletion`);
    near(result.teardownMs, GRACE, 'teardownMs');
    assert.deepEqual(
      result.timeline.slice(0, 2).map((e) => e.event),
      ['leader terminating', 'workers terminating'],
    );
  });

  it('Parallel with the workers the trigger saw: the first call deletes them by uid, reading nothing first', async () => {
    const fake = t.fake({ graceMs: GRACE });
    const { t0, leader, sts, pods, input } = await terminatingGroup(fake, { spec: 'Parallel', hint: 'Parallel' });
    const workers = { statefulSet: identityOf(sts), pods: pods.map(identityOf) };
    const result = await teardown(fake, { ...input, workers }, 'teardownGroup-parallel-seen-workers');

    const [del] = fake.callsOf('deleteSeenWorkers');
    assert.ok(del && inFirstRound(fake, del.seq), 'the delete goes out in the first round of calls');
    assert.deepEqual(del.args, [workers]);
    assert.equal(del.result, 'deleted');
    assert.deepEqual(fake.callsOf('deleteWorkerStatefulSet'), []);
    assert.ok(fake.removedAt.get(leader.uid)! - del.at > GRACE / 2, 'deleted while the leader was terminating');
    for (const p of pods) near(p.deletedAt! - t0(), 0, `worker ${p.name} deletion`);
    near(result.teardownMs, GRACE, 'teardownMs');
    assert.equal(result.policy, 'Parallel');
    assert.deepEqual(
      result.timeline.slice(0, 2).map((e) => e.event),
      ['leader terminating', 'workers terminating'],
    );
  });

  it("workers seen by uid never reach a replacement group's StatefulSet or pods of the same names", async () => {
    const fake = t.fake({ graceMs: GRACE });
    fake.setLws({ podTerminationPolicy: 'Parallel' });
    const now = await fake.now();
    // The old group is gone; the names belong to the replacement group now.
    const replacement = fake.addLeader({ groupIndex: 0, at: now, readyAt: now });
    const { sts, pods } = fake.addWorkers({ groupIndex: 0, ownerUid: replacement.uid, at: now });
    const stale = (o: { namespace: string; name: string; uid: string }) => ({ ...identityOf(o), uid: `old-${o.name}` });
    const result = await teardown(fake, {
      ref: fake.ref,
      groupIndex: 0,
      leader: { namespace: 'default', name: 'demo-0', uid: 'old-leader-uid' },
      lifecycle: 'scale-down',
      policy: 'Parallel',
      workers: { statefulSet: stale(sts), pods: pods.map(stale) },
    });
    assert.equal(result.policy, 'Parallel');
    assert.deepEqual(
      fake.callsOf('deleteSeenWorkers').map((c) => c.result),
      ['absent'],
    );
    assert.deepEqual(fake.callsOf('deleteWorkerStatefulSet'), []);
    assert.equal(fake.statefulSet('demo-0')?.deletedAt, undefined);
    assert.ok(pods.every((p) => p.deletedAt === undefined));
    assert.equal(fake.pod('demo-0')?.deletionTimestamp, undefined);
  });

  it("Parallel without a hint: reads, then deletes with the StatefulSet's uid as precondition, the leader as owner", async () => {
    const fake = t.fake({ graceMs: GRACE });
    const { t0, leader, sts, input } = await terminatingGroup(fake, { spec: 'Parallel' });
    const result = await teardown(fake, input);

    const deletes = fake.callsOf('deleteWorkerStatefulSet');
    assert.equal(deletes.length, 1);
    const del = deletes[0]!;
    assert.deepEqual(del.args, [
      { namespace: 'default', name: 'demo-0', uid: sts.uid, ownerUid: leader.uid, propagationPolicy: 'Foreground' },
    ]);
    assert.equal(del.result, 'deleted');
    const [read] = fake.callsOf('getStatefulSet');
    assert.ok(read!.endSeq! < del.seq, 'deleted before reading the StatefulSet');
    const leaderGone = fake.removedAt.get(leader.uid)!;
    assert.ok(del.at < leaderGone - GRACE / 2, `deleted at +${del.at - t0()} ms`);
    assert.ok(del.endSeq! < fake.callsOf('waitForPodGone')[0]!.endSeq!);
    near(result.teardownMs, GRACE, 'teardownMs');
  });

  for (const hint of [undefined, 'Sequential'] as const) {
    it(`Sequential (hint ${hint ?? 'none'}): never deletes; the garbage collector removes the workers after the leader`, async () => {
      const fake = t.fake({ graceMs: GRACE });
      const { leader, sts, pods, input } = await terminatingGroup(fake, { spec: 'Sequential', hint });
      const result = await teardown(fake, input);

      assert.equal(result.policy, 'Sequential');
      assert.equal(fake.callsOf('deleteWorkerStatefulSet').length, 0);
      assert.equal(fake.callsOf('deletePod').length, 0);
      const leaderGone = fake.removedAt.get(leader.uid)!;
      assert.ok(fake.removedAt.get(sts.uid)! >= leaderGone);
      for (const p of pods) assert.ok(p.deletedAt! >= leaderGone, `${p.name} terminated before the leader was gone`);
      near(result.teardownMs, 2 * GRACE, 'teardownMs');
    });
  }

  // A teardown that starts late (the trigger was down, or saw the deletion only in a resync) still counts from the
  // leader's deletion, as the trigger passes it; without it, it counts from its own start and reports less.
  const late: [string, boolean, number][] = [
    ['counts from the deletion the trigger passes', true, 2 * GRACE],
    ['without it, counts from its own start', false, 2 * GRACE - 20_000],
  ];
  for (const [what, passed, expected] of late) {
    it(`Sequential, started 20 s after the leader's deletion: ${what}`, async () => {
      const fake = t.fake({ graceMs: GRACE });
      fake.setLws({ podTerminationPolicy: 'Sequential' });
      const now = await fake.now();
      const longAgo = now - 3_600_000;
      const leader = fake.addLeader({ groupIndex: 0, at: longAgo, readyAt: longAgo });
      fake.addWorkers({ groupIndex: 0, ownerUid: leader.uid, at: longAgo });
      const deletedAt = now - 20_000;
      fake.deletePodAt(leader.uid, deletedAt);
      const result = await teardown(fake, {
        ref: fake.ref,
        groupIndex: 0,
        leader: { namespace: leader.namespace, name: leader.name, uid: leader.uid },
        lifecycle: 'scale-down',
        ...(passed ? { leaderDeletedAt: new Date(deletedAt).toISOString() } : {}),
      });
      near(result.teardownMs, expected, 'teardownMs');
      const first = result.timeline[0];
      assert.equal(first?.event, 'leader terminating');
      if (passed) assert.equal(first?.at, new Date(deletedAt).toISOString());
      else assert.ok(Date.parse(first!.at) >= now, 'the timeline starts at the workflow start');
    });
  }

  it('a leaderDeletedAt after the workflow start (a clock ahead of the worker) counts from the start', async () => {
    const fake = t.fake({ graceMs: GRACE });
    const { input } = await terminatingGroup(fake, { spec: 'Sequential' });
    const ahead = new Date((await fake.now()) + 3_600_000).toISOString();
    const result = await teardown(fake, { ...input, leaderDeletedAt: ahead });
    near(result.teardownMs, 2 * GRACE, 'teardownMs');
  });

  // Where the workflow takes the policy from (no hint): the LWS spec while the LWS exists (the annotation is then
  // ignored), else the terminating leader pod's annotation, else Sequential; an LWS created after the leader (deleted
  // and created again under its name) is not the group's. Deleting: about 1 x grace; else 2 x.
  const sources: {
    name: string;
    spec?: PodTerminationPolicy;
    annotation?: PodTerminationPolicy;
    lws: 'exists' | 'gone' | 'created-again';
    policy: PodTerminationPolicy;
    source: 'spec' | 'annotation' | 'default';
    /** The name its history is kept under for the replay tests. */
    keep?: string;
  }[] = [
    { name: 'spec Parallel', spec: 'Parallel', lws: 'exists', policy: 'Parallel', source: 'spec' },
    { name: 'spec Sequential', spec: 'Sequential', lws: 'exists', policy: 'Sequential', source: 'spec' },
    {
      name: 'spec Parallel over annotation Sequential',
      spec: 'Parallel',
      annotation: 'Sequential',
      lws: 'exists',
      policy: 'Parallel',
      source: 'spec',
    },
    {
      name: 'spec Sequential over annotation Parallel',
      spec: 'Sequential',
      annotation: 'Parallel',
      lws: 'exists',
      policy: 'Sequential',
      source: 'spec',
    },
    {
      name: 'spec unset (default) over annotation Parallel',
      annotation: 'Parallel',
      lws: 'exists',
      policy: 'Sequential',
      source: 'default',
    },
    {
      name: 'LWS deleted, annotation Parallel',
      spec: 'Sequential',
      annotation: 'Parallel',
      lws: 'gone',
      policy: 'Parallel',
      source: 'annotation',
    },
    {
      name: 'LWS deleted, annotation Sequential',
      spec: 'Parallel',
      annotation: 'Sequential',
      lws: 'gone',
      policy: 'Sequential',
      source: 'annotation',
    },
    { name: 'LWS deleted, no annotation', spec: 'Parallel', lws: 'gone', policy: 'Sequential', source: 'default' },
    {
      name: 'LWS created again with Sequential, annotation Parallel',
      spec: 'Sequential',
      annotation: 'Parallel',
      lws: 'created-again',
      policy: 'Parallel',
      source: 'annotation',
      keep: 'teardownGroup-lws-created-again',
    },
    {
      name: 'LWS created again with Parallel, annotation Sequential',
      spec: 'Parallel',
      annotation: 'Sequential',
      lws: 'created-again',
      policy: 'Sequential',
      source: 'annotation',
    },
  ];

  for (const c of sources) {
    it(`policy source: ${c.name} -> ${c.policy} from ${c.source}`, async () => {
      const fake = t.fake({ graceMs: GRACE });
      const { sts, leader, input } = await terminatingGroup(fake, c);
      const result = await teardown(fake, input, c.keep);
      assert.equal(result.policy, c.policy);
      assert.match(result.timeline[0]?.detail ?? '', new RegExp(`\\bpolicy ${c.policy} from ${c.source}\\b`));
      const deletes = fake.callsOf('deleteWorkerStatefulSet');
      if (c.policy === 'Parallel') {
        assert.equal(deletes.length, 1);
        assert.deepEqual(deletes[0]!.args[0], {
          namespace: 'default',
          name: 'demo-0',
          uid: sts.uid,
          ownerUid: leader.uid,
          propagationPolicy: 'Foreground',
        });
        near(result.teardownMs, GRACE, 'teardownMs');
      } else {
        assert.equal(deletes.length, 0);
        near(result.teardownMs, 2 * GRACE, 'teardownMs');
      }
      // Events go to the LWS; once it is gone there is nothing to attach them to (an LWS created again under its name
      // is another, which never had this group).
      if (c.lws === 'exists') assert.ok(fake.events.length > 0);
      else assert.equal(fake.events.length, 0);
    });
  }

  // The trigger starts a teardown with the policy it saw as a search attribute; each upsert is one more visibility
  // write for the server, so the workflow upserts only a policy the start does not already carry.
  const policyAttributeCases: [string, PodTerminationPolicy | undefined, PodTerminationPolicy, boolean][] = [
    ['the start carries the policy the workflow resolves: no upsert', 'Parallel', 'Parallel', false],
    ['the start carries another (the spec changed since): upserted', 'Sequential', 'Parallel', true],
    ['the start carries none: upserted', undefined, 'Sequential', true],
  ];
  for (const [what, atStart, spec, upserted] of policyAttributeCases) {
    it(`TerminationPolicy search attribute: ${what}`, async () => {
      const fake = t.fake({ graceMs: GRACE });
      const { input } = await terminatingGroup(fake, { spec });
      const typedSearchAttributes: SearchAttributePair[] = [{ key: Lifecycle, value: input.lifecycle }];
      if (atStart) typedSearchAttributes.push({ key: TerminationPolicy, value: atStart });
      const history = await t.withWorker(fake, async (run) => {
        const handle = await run.startWith<typeof teardownGroup>(
          'teardownGroup',
          { typedSearchAttributes },
          { ...input, searchAttributes: true },
        );
        assert.equal((await handle.result()).policy, spec);
        assert.equal((await handle.describe()).typedSearchAttributes.get(TerminationPolicy), spec);
        return handle.fetchHistory();
      });
      const policyUpserts = (history.events ?? []).filter(
        (e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.TerminationPolicy,
      );
      assert.equal(policyUpserts.length, upserted ? 1 : 0);
    });
  }

  // The trigger judges the lifecycle from its watches, which may lag the spec; the teardown judges it again from its
  // first reads, made after the leader's deletion, and only a different judgement costs a patch marker and an upsert.
  // A group above the LWS's replicas that the leader StatefulSet still wants is a surge group of a rolling update.
  // [what, the trigger's judgement, the group and the cluster now, the leader built from the current template, the
  // teardown's, the name its history is kept under for the replay tests]
  type Now = { group?: number; replicas?: number; leaderReplicas?: number; lwsCreatedAfterLeader?: boolean };
  const lifecycleCases: [string, LifecycleName, Now, boolean, LifecycleName, string?][] = [
    ['the same: kept, no marker, no upsert', 'rebuild', {}, true, 'rebuild'],
    [
      'a surge group the rollout still keeps: a rebuild, its replacement waited for',
      'scale-down',
      { group: 2, leaderReplicas: 3 },
      true,
      'rebuild',
      'teardownGroup-surge-group-rebuilt',
    ],
    [
      'a surge group the rollout released a moment before: a scale-down',
      'rebuild',
      { group: 2, leaderReplicas: 2 },
      true,
      'scale-down',
    ],
    [
      'scaled down a moment before: a scale-down, no replacement waited for',
      'rebuild',
      { replicas: 0 },
      true,
      'scale-down',
      'teardownGroup-lifecycle-judged-again',
    ],
    ['a template change the trigger had not seen: a rolling update', 'rebuild', {}, false, 'rolling-update'],
    ['scaled down and up again: a rebuild, its replacement waited for', 'scale-down', {}, true, 'rebuild'],
    ['a delete stays a delete, whatever LWS of that name exists now', 'delete', {}, true, 'delete'],
    [
      "the LWS deleted and created again: the older one's deletion, no replacement waited for",
      'rebuild',
      { lwsCreatedAfterLeader: true },
      true,
      'delete',
    ],
  ];
  for (const [what, judged, now, current, expected, keep] of lifecycleCases) {
    it(`lifecycle judged again from the first reads: ${what}`, async () => {
      const fake = t.fake({ graceMs: GRACE, podReadyAfterMs: READY, leaderController: true, provisioner: true });
      const { leader, input } = await terminatingGroup(fake, { lifecycle: 'rebuild', group: now.group });
      if (now.replicas !== undefined) fake.lws!.spec.replicas = now.replicas;
      fake.leaderReplicas = now.leaderReplicas;
      if (now.lwsCreatedAfterLeader) {
        fake.lws!.metadata.creationTimestamp = new Date(leader.createdAt + 60_000).toISOString();
      }
      if (!current) leader.labels[LABEL_TEMPLATE_REVISION_HASH] = 'an-old-revision';
      const typedSearchAttributes: SearchAttributePair[] = [{ key: Lifecycle, value: judged }];
      const { result, history } = await t.withWorker(fake, async (run) => {
        const handle = await run.startWith<typeof teardownGroup>(
          'teardownGroup',
          { typedSearchAttributes },
          { ...input, lifecycle: judged, searchAttributes: true },
        );
        if (keep) run.keepHistory(handle, keep);
        const result = await handle.result();
        assert.equal((await handle.describe()).typedSearchAttributes.get(Lifecycle), expected);
        return { result, history: await handle.fetchHistory() };
      });
      assert.equal(result.lifecycle, expected);
      assert.equal(
        fake.callsOf('waitForReplacementGroupReady').length,
        expected === 'rebuild' ? 1 : 0,
        'a replacement is waited for in a rebuild only',
      );
      const events = history.events ?? [];
      const lifecycleUpserts = events.filter(
        (e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.Lifecycle,
      );
      assert.equal(lifecycleUpserts.length, expected === judged ? 0 : 1);
      // A short lifecycle stays on the worker version that started it: no patch marker in its Web UI timeline.
      const patchMarkers = events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch');
      assert.equal(patchMarkers.length, 0);
    });
  }

  for (const hint of [undefined, 'Parallel'] as const) {
    it(`never deletes a replacement group's StatefulSet (owned by another leader), hint ${hint ?? 'none'}`, async () => {
      const fake = t.fake({ graceMs: GRACE });
      fake.setLws({ podTerminationPolicy: 'Parallel' });
      const now = await fake.now();
      // The old leader is already gone (the teardown started late); the name belongs to the replacement group now.
      const replacement = fake.addLeader({ groupIndex: 0, at: now, readyAt: now });
      const { sts } = fake.addWorkers({ groupIndex: 0, ownerUid: replacement.uid, at: now });
      const result = await teardown(fake, {
        ref: fake.ref,
        groupIndex: 0,
        leader: { namespace: 'default', name: 'demo-0', uid: 'old-leader-uid' },
        lifecycle: 'scale-down',
        ...(hint ? { policy: hint } : {}),
      });
      assert.equal(result.policy, 'Parallel');
      // Its controller is not the old leader: nothing to delete, whatever the hint.
      assert.deepEqual(fake.callsOf('deleteSeenWorkers'), []);
      assert.deepEqual(fake.callsOf('deleteWorkerStatefulSet'), []);
      assert.equal(fake.callsOf('waitForStatefulSetGone').length, 0);
      assert.equal(fake.callsOf('waitForPodsGone').length, 0);
      const still = fake.statefulSet('demo-0');
      assert.equal(still?.uid, sts.uid);
      assert.equal(still?.deletedAt, undefined);
      assert.equal(fake.pod('demo-0')?.deletionTimestamp, undefined);
    });
  }

  it('without a hint, Parallel never deletes the workers of a leader that is not terminating', async () => {
    const fake = t.fake({ graceMs: GRACE });
    fake.setLws({ podTerminationPolicy: 'Parallel' });
    const now = await fake.now();
    const leader = fake.addLeader({ groupIndex: 0, at: now, readyAt: now });
    const { sts, pods } = fake.addWorkers({ groupIndex: 0, ownerUid: leader.uid, at: now });
    const input: TeardownGroupInput = {
      ref: fake.ref,
      groupIndex: 0,
      leader: { namespace: 'default', name: 'demo-0', uid: leader.uid },
      lifecycle: 'scale-down',
    };
    const { result, deletedAt } = await t.withWorker(fake, async (run) => {
      const handle = await run.start<typeof teardownGroup>('teardownGroup', input);
      await eventually('the leader wait', () => fake.callsOf('waitForPodGone').length > 0);
      await t.sleep(10 * 60_000); // ten minutes of workflow time: nothing is deleted
      assert.equal(fake.callsOf('deleteWorkerStatefulSet').length, 0);
      assert.equal(fake.statefulSet('demo-0')?.deletedAt, undefined);
      // Only now is the leader deleted. The decision was taken at the start ("not terminating"), so the workflow
      // keeps observing and the garbage collector removes the workers after the leader.
      const deletedAt = await fake.now();
      fake.deletePodAt(leader.uid, deletedAt);
      return { result: await handle.result(), deletedAt };
    });
    assert.equal(fake.callsOf('deleteWorkerStatefulSet').length, 0);
    assert.ok(fake.removedAt.get(sts.uid)! >= fake.removedAt.get(leader.uid)!);
    near(Math.max(...pods.map((p) => fake.removedAt.get(p.uid)!)) - deletedAt, 2 * GRACE, 'workers gone after');
    assert.ok(result.teardownMs! > 10 * 60_000, `teardownMs ${result.teardownMs}`);
  });

  // The trigger's hint only saves time: the LWS spec, which wins while the LWS exists, still decides.
  it('a stale Parallel hint does not override the LWS spec (Sequential): no delete', async () => {
    const fake = t.fake({ graceMs: GRACE });
    const { input } = await terminatingGroup(fake, { spec: 'Sequential', hint: 'Parallel' });
    const result = await teardown(fake, input);
    assert.equal(result.policy, 'Sequential');
    // Judged from the spec it read: nothing was deleted.
    assert.deepEqual([...fake.callsOf('deleteSeenWorkers'), ...fake.callsOf('deleteWorkerStatefulSet')], []);
    near(result.teardownMs, 2 * GRACE, 'teardownMs');
  });

  // Parallel never deletes a group that is not terminating (docs/api.md, "Parallel"), whatever the trigger said.
  it('a Parallel hint never deletes the workers of a leader that is not terminating', async () => {
    const fake = t.fake({ graceMs: GRACE });
    fake.setLws({ podTerminationPolicy: 'Parallel' });
    const now = await fake.now();
    const leader = fake.addLeader({ groupIndex: 0, at: now, readyAt: now });
    fake.addWorkers({ groupIndex: 0, ownerUid: leader.uid, at: now });
    const deletes = await t.withWorker(fake, async (run) => {
      const handle = await run.start<typeof teardownGroup>('teardownGroup', {
        ref: fake.ref,
        groupIndex: 0,
        leader: { namespace: 'default', name: 'demo-0', uid: leader.uid },
        lifecycle: 'scale-down',
        policy: 'Parallel',
      });
      await eventually('the leader wait', () => fake.callsOf('waitForPodGone').length > 0);
      const deletes = [...fake.callsOf('deleteSeenWorkers'), ...fake.callsOf('deleteWorkerStatefulSet')]
        .map((c) => c.result)
        .filter((r) => r === 'deleted');
      fake.deletePodAt(leader.uid, await fake.now()); // lets the workflow finish
      await handle.result();
      return deletes;
    });
    assert.deepEqual(deletes, [], 'the workers of a live leader were deleted');
  });

  describe('dead nodes: pods stuck Terminating are force-deleted once past their grace period (model/dead-node.ts)', () => {
    /** Past the grace period before a wait names a pod stuck. */
    const PAST = GRACE + FORCE_DELETE_MARGIN_MS;
    const stuckCases: {
      policy: PodTerminationPolicy;
      signal: string;
      /** Which of the group's pods are on the dead node: the leader, and these workers (by index). */
      workers: number[];
      /** When each force delete goes out, after the leader's deletion: [leader's, workers']. */
      forcedAt: [number, number];
      teardown: number;
    }[] = [
      {
        // The leader first; the garbage collector then deletes the workers, which are stuck in their turn.
        policy: 'Sequential',
        signal: 'node gone',
        workers: [0, 1, 2],
        forcedAt: [PAST, 2 * PAST],
        teardown: 2 * PAST,
      },
      {
        // Together; the workers on healthy nodes go by themselves, in their grace period.
        policy: 'Parallel',
        signal: 'node tainted out-of-service',
        workers: [0],
        forcedAt: [PAST, PAST],
        teardown: PAST,
      },
    ];
    for (const c of stuckCases) {
      it(`${c.policy}, ${c.signal}: each wait that ends stuck is followed by the force delete of those pods, told as a Warning, then the wait again`, async () => {
        const fake = t.fake({ graceMs: GRACE, podReadyAfterMs: READY, leaderController: true, provisioner: true });
        const { t0, leader, pods, input } = await terminatingGroup(fake, {
          spec: c.policy,
          hint: c.policy,
          lifecycle: 'rebuild',
        });
        const stranded = [leader, ...c.workers.map((i) => pods[i]!)];
        const healthy = pods.filter((p) => !stranded.includes(p));
        fake.strandOnDeadNode(
          stranded.map((p) => p.uid),
          { node: 'node-x', signal: c.signal },
        );
        const result = await teardown(fake, input, `teardownGroup-dead-node-${c.policy}`);

        // Exactly the stranded pods were force-deleted, each once, the leader's and the workers' each by its wait.
        const forced = fake.completed('forceDeletePods');
        const named = (call: (typeof forced)[number]) =>
          (call.args[0] as { pods: { pod: { name: string } }[] }).pods.map((s) => s.pod.name);
        assert.deepEqual(forced.map(named), [[leader.name], c.workers.map((i) => pods[i]!.name)]);
        near(forced[0]!.at - t0(), c.forcedAt[0], 'leader force-deleted after');
        near(forced[1]!.at - t0(), c.forcedAt[1], 'workers force-deleted after');
        for (const p of healthy) near(fake.removedAt.get(p.uid)! - t0(), GRACE, `healthy ${p.name} gone after`);
        // A wait that ended stuck, the force delete, the same wait again that saw them gone.
        for (const [waitName, force] of [
          ['waitForPodGone', forced[0]!],
          ['waitForPodsGone', forced[1]!],
        ] as const) {
          const waits = fake.completed(waitName);
          assert.equal(waits.length, 2, `${waitName} twice`);
          assert.ok('stuck' in (waits[0]!.result as object), `${waitName} ended stuck first`);
          assert.ok('goneAt' in (waits[1]!.result as object), `${waitName} then saw them gone`);
          assert.ok(waits[0]!.endSeq! < force.seq && force.endSeq! < waits[1]!.seq, `${waitName}, delete, again`);
        }
        // Recorded as Warnings, naming pod, node and signal, besides the result; the other steps as ever.
        const expected = stranded.map((p) => ({ pod: p.name, node: 'node-x', signal: c.signal }));
        assert.deepEqual(result.forceDeleted, expected);
        // (Each call's Events are recorded at once: their order within it is any.)
        const warnings = fake.events.filter((e) => e.type === 'Warning');
        assert.deepEqual(
          warnings.map((e) => [e.reason, e.message]).sort(),
          expected.map((f) => [
            'PodForceDeleted',
            `group 0 (rebuild, ${c.policy}): pod force-deleted: ${f.pod} on node node-x: ${c.signal}`,
          ]),
        );
        assert.equal(fake.events.filter((e) => e.reason === 'GroupLeaderGone').length, 1);
        assert.deepEqual(
          result.timeline.filter((e) => e.event === 'pod force-deleted').map((e) => e.detail),
          expected.map((f) => `${f.pod} on node node-x: ${c.signal}`),
        );
        near(result.teardownMs, c.teardown, 'teardownMs');
        near(result.recoveryMs, c.teardown + READY, 'recoveryMs');
      });
    }

    it("the LWS's opt-in to force deletes on NotReady alone reaches both pod waits; without it, neither gets one", async () => {
      for (const notReadySeconds of [30, undefined]) {
        const fake = t.fake({ graceMs: GRACE });
        const { input } = await terminatingGroup(fake, { spec: 'Parallel', hint: 'Parallel' });
        if (notReadySeconds !== undefined) fake.lws!.spec.forceDeleteOnNodeNotReadySeconds = notReadySeconds;
        const result = await teardown(fake, input);
        for (const name of ['waitForPodGone', 'waitForPodsGone'] as const) {
          const [call] = fake.callsOf(name);
          const arg = call!.args[0] as { forceDeleteOnNodeNotReadySeconds?: number };
          assert.equal(arg.forceDeleteOnNodeNotReadySeconds, notReadySeconds, name);
        }
        assert.equal(result.forceDeleted, undefined, 'nothing stuck, nothing force-deleted');
        assert.deepEqual(fake.callsOf('forceDeletePods'), []);
      }
    });
  });

  it('answers the timeline query while it runs', async () => {
    const fake = t.fake({ graceMs: GRACE });
    const { input } = await terminatingGroup(fake, { spec: 'Parallel', hint: 'Parallel' });
    await t.withWorker(fake, async (run) => {
      const handle = await run.start<typeof teardownGroup>('teardownGroup', input);
      await eventually('the waits', () => fake.callsOf('waitForStatefulSetGone').length > 0);
      const during = await handle.query<TimelineEntry[]>('timeline');
      assert.deepEqual(
        during.map((e) => e.event),
        ['leader terminating', 'workers terminating'],
      );
      const result = await handle.result();
      const after = await handle.query<TimelineEntry[]>('timeline');
      assert.deepEqual(after, result.timeline);
      assert.ok(after.some((e) => e.event === 'leader gone'));
    });
  });

  it('retries transient activity failures and still tears down in about 1 x grace', async () => {
    const fake = t.fake({ graceMs: GRACE });
    const { input, sts, pods } = await terminatingGroup(fake, { spec: 'Parallel', hint: 'Parallel' });
    fake.fail('deleteSeenWorkers', 2, 'transient');
    fake.fail('getLeaderWorkerSet', 1, 'transient');
    fake.fail('waitForPodGone', 3, 'transient');
    const result = await teardown(fake, {
      ...input,
      workers: { statefulSet: identityOf(sts), pods: pods.map(identityOf) },
    });

    assert.equal(result.policy, 'Parallel');
    assert.deepEqual(
      fake.callsOf('deleteSeenWorkers').map((c) => c.error ?? c.result),
      ['injected transient failure of deleteSeenWorkers', 'injected transient failure of deleteSeenWorkers', 'deleted'],
    );
    // The first round is one local activity: each of its three attempts made every call of the round again.
    assert.equal(fake.callsOf('beginTeardown').length, 3);
    assert.equal(fake.callsOf('getLeaderWorkerSet').length, 3);
    assert.equal(fake.callsOf('waitForPodGone').length, 4);
    assert.equal(fake.completed('waitForPodGone').length, 1);
    near(result.teardownMs, GRACE, 'teardownMs');
  });

  it('a permanent activity failure fails the workflow with the KubernetesApiError, without retries', async () => {
    const fake = t.fake({ graceMs: GRACE });
    const { input, sts, pods } = await terminatingGroup(fake, { spec: 'Parallel', hint: 'Parallel' });
    const workers = { statefulSet: { ...identityOf(sts), uid: 'an-older-uid' }, pods: pods.map(identityOf) };
    fake.fail('deleteSeenWorkers', 1, 'permanent');
    const err = await t.withWorker(fake, async (run) => {
      const handle = await run.start<typeof teardownGroup>('teardownGroup', { ...input, workers });
      return handle.result().then(
        () =>
          assert.fail(
            `the workflow should have failed; calls: ${fake.calls.map((c) => `${c.name}=${c.error ?? JSON.stringify(c.result)}`).join(', ')}`,
          ),
        (e: unknown) => e,
      );
    });
    assert.ok(err instanceof WorkflowFailedError, String(err));
    // Short calls are local activities, whose failure reaches the workflow unwrapped (no ActivityFailure around it).
    const failure = err.cause instanceof ActivityFailure ? err.cause.cause : err.cause;
    assert.ok(failure instanceof ApplicationFailure, String(failure));
    assert.equal(failure.type, 'KubernetesApiError');
    assert.equal(failure.nonRetryable, true);
    // One attempt, and nothing after the first round (the delete and the reads that went with it, the leader
    // StatefulSet's too for this scale-down): no other delete, no wait, no Event; the group is left to the garbage
    // collector.
    assert.deepEqual(fake.calls.map((c) => c.name).sort(), [
      'beginTeardown',
      'deleteSeenWorkers',
      'getLeaderWorkerSet',
      'getPod',
      'getStatefulSet',
      'getStatefulSet',
      'listGroupPods',
    ]);
    assert.equal(fake.statefulSet('demo-0')?.deletedAt, undefined);
    assert.equal(fake.statefulSet('demo-0')?.uid, sts.uid);
  });

  const notWanted = [
    {
      name: 'the LWS is deleted (with its namespace, say)',
      change: (fake: FakeCluster) => (fake.lws = null),
      detail: 'no replacement group: the LWS is gone',
    },
    {
      name: 'the LWS is scaled below the group',
      change: (fake: FakeCluster) => (fake.lws!.spec.replicas = 0),
      detail: `no replacement group: ${notWantedAbove(0)}`,
    },
    {
      name: 'the rolling update releases the surge group',
      group: 2,
      before: (fake: FakeCluster) => (fake.leaderReplicas = 3),
      change: (fake: FakeCluster) => (fake.leaderReplicas = 2),
      detail: `no replacement group: ${notWantedAbove(2)}`,
    },
  ];
  for (const c of notWanted) {
    it(`rebuild: ends as soon as no replacement is wanted, not after 30 minutes, when ${c.name}`, async () => {
      const fake = t.fake({ graceMs: GRACE });
      const { input } = await terminatingGroup(fake, {
        spec: 'Parallel',
        hint: 'Parallel',
        lifecycle: 'rebuild',
        group: c.group,
      });
      c.before?.(fake);
      // Once the old group is gone, the LWS stops wanting it.
      fake.onCall('waitForReplacementGroupReady', () => c.change(fake));
      const result = await t.withWorker(fake, async (run) =>
        (await run.start<typeof teardownGroup>('teardownGroup', input)).result(),
      );
      near(result.teardownMs, GRACE, 'teardownMs');
      assert.equal(result.recoveryMs, undefined);
      const last = result.timeline.at(-1)!;
      assert.equal(last.event, 'skipped');
      assert.equal(last.detail, c.detail);
      assert.ok(
        Date.parse(last.at) - Date.parse(result.timeline[0]!.at) < GRACE + 60_000,
        `ended within a minute of the teardown, not after 30: ${last.at}`,
      );
      const [call] = fake.callsOf('waitForReplacementGroupReady');
      assert.deepEqual((call!.args[0] as { group?: unknown }).group, { lwsName: 'demo', groupIndex: c.group ?? 0 });
    });
  }

  it('rebuild of a surge group the rollout keeps: waits for its replacement, never ends it as scaled down', async () => {
    const fake = t.fake({ graceMs: GRACE, pollMs: 10_000 });
    const { input } = await terminatingGroup(fake, { hint: 'Parallel', lifecycle: 'rebuild', group: 2 });
    fake.leaderReplicas = 3;
    const result = await t.withWorker(fake, async (run) =>
      (await run.start<typeof teardownGroup>('teardownGroup', input)).result(),
    );
    assert.equal(result.lifecycle, 'rebuild');
    // No replacement came (no leader controller here), and the LWS's replicas (2) never ended the wait early.
    assert.match(result.timeline.at(-1)?.detail ?? '', /no replacement group within 30 minutes/);
  });

  it('rebuild without a replacement group: gives up after 30 minutes, teardown still reported', async () => {
    const fake = t.fake({ graceMs: GRACE, pollMs: 10_000 });
    const { input } = await terminatingGroup(fake, { spec: 'Parallel', hint: 'Parallel', lifecycle: 'rebuild' });
    const { result, events } = await t.withWorker(fake, async (run) => {
      const handle = await run.start<typeof teardownGroup>('teardownGroup', input);
      const result = await handle.result();
      return { result, events: (await handle.fetchHistory()).events ?? [] };
    });
    // The server timed the wait out (no workflow timer, which would be one more Action), and the wait learnt of it at
    // its next heartbeat and ended.
    const timedOut = events.find((e) => e.activityTaskTimedOutEventAttributes)?.activityTaskTimedOutEventAttributes;
    assert.ok(timedOut, 'the wait timed out');
    assert.equal(events.filter((e) => e.timerStartedEventAttributes).length, 0, 'no workflow timer');
    await eventually(
      'the replacement wait ended',
      () => fake.callsOf('waitForReplacementGroupReady')[0]?.endSeq !== undefined,
    );
    near(result.teardownMs, GRACE, 'teardownMs');
    assert.equal(result.recoveryMs, undefined);
    const last = result.timeline.at(-1)!;
    assert.equal(last.event, 'skipped');
    assert.match(last.detail ?? '', /no replacement group within 30 minutes/);
    near(Date.parse(last.at) - Date.parse(result.timeline[0]!.at), GRACE + 30 * 60_000, 'gave up after');
  });

  // The test before left no wait behind. A wait that outlived its workflow kept the test server's time lock, and the
  // server stopped skipping time for the rest of the file.
  it('time still skips after a teardown gave up its replacement wait', async () => {
    const fake = t.fake({ graceMs: GRACE });
    const { input } = await terminatingGroup(fake, { spec: 'Parallel', hint: 'Parallel' });
    const wallStart = Date.now();
    const result = await teardown(fake, input);
    near(result.teardownMs, GRACE, 'teardownMs');
    const wallMs = Date.now() - wallStart;
    assert.ok(wallMs < GRACE / 2, `a ${GRACE / 1000} s grace period took ${wallMs} ms of wall time: time did not skip`);
  });
});
