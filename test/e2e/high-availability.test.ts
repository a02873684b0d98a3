import assert from 'node:assert/strict';
import type { LeaderWorkerSet } from '../../src/model/index.js';
import { waitFor } from '../../src/dev-server/processes.js';
import type { TeardownGroupResult } from '../../src/workflows/teardown-group.js';
import { useControllerSuite } from '../fixtures/controller-suite.js';

/**
 * The controller's own availability, as deploy/ runs it: two workers on one task queue and two triggers watching at
 * once, on the production-shaped Temporal. One of each dies (kill -9) in the middle of a 10-group Parallel rebuild;
 * the survivors finish it. Two triggers see every event, and the workflow ID of each lifecycle makes the second
 * start a no-op.
 */
const G = 20; // terminationGracePeriodSeconds: longer than a dead worker's workflow task takes to move (10 s)
const GROUPS = 10;
const SIZE = 4;

function lwsOf(name: string): LeaderWorkerSet {
  const template = (role: string) => ({
    spec: { terminationGracePeriodSeconds: G, containers: [{ name: role, image: 'registry.invalid/ai:1' }] },
  });
  return {
    apiVersion: 'leaderworkerset.x-k8s.io/v1',
    kind: 'LeaderWorkerSet',
    metadata: { name },
    spec: {
      podTerminationPolicy: 'Parallel',
      replicas: GROUPS,
      leaderWorkerTemplate: { size: SIZE, leaderTemplate: template('leader'), workerTemplate: template('worker') },
    },
  };
}

describe('high availability: two workers and two triggers, one of each killed mid-rebuild (cluster)', function () {
  this.timeout(600_000);
  const suite = useControllerSuite('e2e-ha', { temporal: 'cluster', recordPods: true });

  before(async function () {
    this.timeout(300_000);
    await Promise.all([suite.controller.startWorker(), suite.controller.startTrigger()]);
  });

  it('rebuilds every group exactly once, each teardown Parallel, nothing orphaned', async () => {
    const roles = (role: string) => suite.controller.processes.filter((p) => p.role === role);
    assert.equal(roles('worker').length, 2);
    assert.equal(roles('trigger').length, 2);
    await suite.lws.create(lwsOf('ha'));
    const before = await suite.lws.waitForGroups('ha', GROUPS, SIZE, 240_000);
    const oldLeaders = before.filter((p) => p.metadata!.name!.split('-').length === 2);
    assert.equal(oldLeaders.length, GROUPS);

    await Promise.all(
      oldLeaders.map((l) =>
        suite.lws.core.deleteNamespacedPod({ name: l.metadata!.name!, namespace: suite.namespace }),
      ),
    );
    // Mid-rebuild: the first workers are terminating, while teardown runs are still starting and deleting.
    const oldWorkerUids = new Set(
      before.filter((p) => p.metadata!.name!.split('-').length === 3).map((p) => p.metadata!.uid!),
    );
    await waitFor(
      'a worker terminating',
      async () => ([...oldWorkerUids].some((u) => suite.recorder.byUid(u)?.terminatingAt) ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 20 },
    );
    await Promise.all([roles('worker')[0]!.kill9(), roles('trigger')[0]!.kill9()]);

    const results = await Promise.all(
      oldLeaders.map(async (l) => {
        const id = `lws/${suite.controller.cluster}/${suite.namespace}/ha/group-${l.metadata!.name!.split('-')[1]}/teardown/${l.metadata!.uid}`;
        const handle = suite.controller.client.workflow.getHandle(id);
        await waitFor('the teardown run of ' + l.metadata!.name, () => handle.describe().then(() => true), {
          timeoutMs: 60_000,
        });
        return { leader: l, result: (await handle.result()) as TeardownGroupResult };
      }),
    );
    const after = await suite.lws.waitForGroups('ha', GROUPS, SIZE, 240_000);

    const lags: number[] = [];
    for (const { leader, result } of results) {
      const name = leader.metadata!.name!;
      assert.equal(result.policy, 'Parallel', name);
      assert.ok(
        result.timeline.some((e) => e.event === 'new group ready'),
        `${name}: ${JSON.stringify(result.timeline)}`,
      );
      // Parallel held: this controller deleted the workers, not the garbage collector after the leader was gone.
      assert.ok(
        !result.timeline.some((e) => e.detail === 'garbage collector'),
        `${name}: ${JSON.stringify(result.timeline)}`,
      );
      const leaderRecord = suite.recorder.byUid(leader.metadata!.uid!)!;
      const workers = [...suite.recorder.records.values()].filter(
        (r) => oldWorkerUids.has(r.uid) && r.name.startsWith(`${name}-`),
      );
      assert.equal(workers.length, SIZE - 1, name);
      for (const w of workers) {
        assert.ok(w.terminatingAt! < leaderRecord.goneAt!, `${w.name} terminated before ${name} was gone`);
        lags.push(w.terminatingAt! - leaderRecord.terminatingAt!);
      }
      // Rebuilt exactly once: one teardown run and one new leader for the group.
      const teardowns: string[] = [];
      for await (const wf of suite.controller.client.workflow.list({
        query: `WorkflowId STARTS_WITH "lws/${suite.controller.cluster}/${suite.namespace}/ha/group-${name.split('-')[1]}/teardown/"`,
      })) {
        teardowns.push(wf.workflowId);
      }
      assert.equal(teardowns.length, 1, `${name}: ${teardowns.join(', ')}`);
      assert.equal(
        [...suite.recorder.records.values()].filter((r) => r.name === name).length,
        2,
        `${name}: the old leader and one new one`,
      );
    }
    console.log(`      Parallel lag (leader terminating -> worker terminating): max ${Math.max(...lags)} ms`);

    const sets = (
      await suite.lws.apps.listNamespacedStatefulSet({
        namespace: suite.namespace,
        labelSelector: 'leaderworkerset.sigs.k8s.io/name=ha',
      })
    ).items;
    assert.equal(sets.length, GROUPS + 1, 'the leader StatefulSet and one worker StatefulSet per group');
    const leadersNow = new Map(
      after.filter((p) => p.metadata!.name!.split('-').length === 2).map((p) => [p.metadata!.name!, p.metadata!.uid!]),
    );
    for (const s of sets.filter((s) => s.metadata!.name !== 'ha')) {
      assert.equal(
        s.metadata!.ownerReferences?.[0]?.uid,
        leadersNow.get(s.metadata!.name!),
        `${s.metadata!.name} owner`,
      );
    }
    assert.equal(after.length, GROUPS * SIZE, 'no orphaned pod');
  });
});
