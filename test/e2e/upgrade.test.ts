// An upgrade of the worker in the middle of a Parallel rebuild, as a rolling update of its Deployment runs it
// (docs/operations.md, "Upgrades"): the new build starts and becomes current (TEMPORAL_WORKER_SET_CURRENT=if-new), then
// the old worker gets SIGTERM. The rebuild's teardown and provisioning are pinned to the old build: it keeps serving
// them until both have ended, and exits only then. New lifecycles run on the new build.
import assert from 'node:assert/strict';
import type { WorkflowHandle } from '@temporalio/client';
import { lwsWorkflowIdPrefix, type LeaderWorkerSet } from '../../src/model/index.js';
import type { ControllerProcess } from '../../tools/stack/controller-processes.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { useControllerSuite } from '../fixtures/controller-suite.js';
import { sampleLeaderWorkerSet } from '../../tools/stack/sample-lws.js';

const G = 5; // terminationGracePeriodSeconds
/** How long a pod takes to come up (a model loading): the rebuild stays open while the new build starts. */
const READY_AFTER = '25s';
const NAME = 'upgrade';
const IMAGE = 'registry.invalid/ai:1';
const SIZE = 3;

function lwsOf(): LeaderWorkerSet {
  return sampleLeaderWorkerSet({
    name: NAME,
    policy: 'Parallel',
    replicas: 1,
    size: SIZE,
    graceSeconds: G,
    image: IMAGE,
    podAnnotations: { 'lws-temporal.test/ready-after': READY_AFTER },
  });
}

/** The JSON log lines of a process with the given message (its prefix). */
function logged(process: ControllerProcess, msg: string): Record<string, unknown>[] {
  return process.lines
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => typeof l.msg === 'string' && l.msg.startsWith(msg));
}

/** The build of each completed workflow task of the run, from its history. */
async function tasksOn(handle: WorkflowHandle): Promise<(string | undefined)[]> {
  const { events } = await handle.fetchHistory();
  return (events ?? [])
    .filter((e) => e.workflowTaskCompletedEventAttributes)
    .map((e) => e.workflowTaskCompletedEventAttributes?.deploymentVersion?.buildId ?? undefined);
}

describe('an upgrade of the worker in the middle of a Parallel rebuild', function () {
  this.timeout(300_000);
  const suite = useControllerSuite('e2e-upgrade', { env: { LOG_FORMAT: 'json' } });

  /** The group lifecycles of this LWS of `type` (open or closed), by workflow ID. */
  async function lifecycles(type: 'teardownGroup' | 'provisionGroup', open: boolean): Promise<string[]> {
    const prefix = lwsWorkflowIdPrefix(suite.controller.cluster, { namespace: suite.namespace, name: NAME });
    const query = `WorkflowType = '${type}'${open ? ` AND ExecutionStatus = 'Running'` : ''}`;
    const ids: string[] = [];
    for await (const run of suite.controller.client.workflow.list({ query })) {
      if (run.workflowId.startsWith(prefix)) ids.push(run.workflowId);
    }
    return ids;
  }

  it('the old build serves the teardown and the provisioning pinned to it, then exits; new work goes to the new build', async () => {
    const old = suite.controller.worker;
    const oldBuild = String(logged(old, 'running')[0]?.buildId);
    assert.match(oldBuild, /^0\.1\.0-[0-9a-f]{12}$/);

    await suite.lws.create(lwsOf());
    const before = await suite.lws.waitForGroups(NAME, 1, SIZE);
    const provisionedAtStart = await lifecycles('provisionGroup', false);
    await suite.lws.core.deleteNamespacedPod({ name: `${NAME}-0`, namespace: suite.namespace });

    const [teardownId, provisionId] = await waitFor(
      'the teardown and the provisioning of the rebuild to be open',
      async () => {
        const [teardowns, provisions] = await Promise.all([
          lifecycles('teardownGroup', true),
          lifecycles('provisionGroup', true),
        ]);
        return teardowns.length === 1 && provisions.length === 1 ? [teardowns[0]!, provisions[0]!] : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const rebuild = [teardownId, provisionId].map((id) => suite.controller.client.workflow.getHandle(id));

    // The rolling update: a pod of the new build first, then SIGTERM to the old one.
    const newBuild = `${oldBuild}-next`;
    const updated = await suite.controller.startWorker({ TEMPORAL_WORKER_BUILD_ID: newBuild });
    assert.deepEqual(
      { buildId: logged(updated, 'running')[0]?.buildId, version: logged(updated, 'running')[0]?.version },
      { buildId: newBuild, version: 'made-current' },
    );
    const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
      old.child.once('exit', (code) => resolve({ code, at: Date.now() })),
    );
    const stillOpen = await Promise.all(rebuild.map(async (h) => (await h.describe()).status.name));
    assert.deepEqual(stillOpen, ['RUNNING', 'RUNNING'], 'the rebuild is open when the old worker is told to stop');
    old.child.kill('SIGTERM');

    const draining = await waitFor('the old worker to say it drains', async () => logged(old, 'draining')[0], {
      timeoutMs: 10_000,
      intervalMs: 100,
    });
    assert.equal(draining.open, 2, 'the teardown and the provisioning are pinned to the old build');
    assert.equal(old.child.exitCode, null, 'the old worker is still running');

    const closed = await Promise.all(
      rebuild.map((h) =>
        waitFor(
          `${h.workflowId} to complete`,
          async () => {
            const { status, closeTime } = await h.describe();
            return status.name === 'COMPLETED' ? closeTime!.getTime() : undefined;
          },
          { timeoutMs: 90_000, intervalMs: 500 },
        ),
      ),
    );
    const exit = await Promise.race([
      exited,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('the old worker did not exit within 30 s of its last pinned run')), 30_000),
      ),
    ]);
    assert.equal(exit.code, 0);
    assert.ok(exit.at >= Math.max(...closed), 'the old worker exits only once the runs pinned to it have ended');
    assert.deepEqual(
      logged(old, 'drain done').map((l) => l.outcome),
      ['drained'],
    );
    for (const h of rebuild) {
      const builds = new Set(await tasksOn(h));
      assert.deepEqual([...builds], [oldBuild], `${h.workflowId}: every workflow task on the old build`);
    }

    const after = await suite.lws.waitForGroups(NAME, 1, SIZE);
    const uids = (pods: typeof before) => new Set(pods.map((p) => p.metadata!.uid));
    assert.equal([...uids(after)].filter((u) => uids(before).has(u)).length, 0, 'every pod of the group replaced');
    assert.equal((await lifecycles('teardownGroup', false)).length, 1, 'one teardown');

    // A scale-up after the upgrade: its provisioning runs on the new build.
    await suite.lws.patchSpec(NAME, { replicas: 2 });
    const known = new Set([...provisionedAtStart, provisionId]);
    const scaleUp = await waitFor(
      'the provisioning of the new group to take its first workflow task',
      async () => {
        const [id, ...more] = (await lifecycles('provisionGroup', false)).filter((i) => !known.has(i));
        assert.deepEqual(more, [], 'one provisioning for the new group');
        const builds = id ? await tasksOn(suite.controller.client.workflow.getHandle(id)) : [];
        return builds.length ? builds : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    assert.deepEqual([...new Set(scaleUp)], [newBuild]);
  });
});
