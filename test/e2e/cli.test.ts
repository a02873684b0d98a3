import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { HistoryReport, StatusReport } from '../../src/cli/format.js';
import type { LeaderWorkerSet } from '../../src/model/index.js';
import { kubeconfigPath, repoRoot } from '../../src/stack/paths.js';
import { waitFor } from '../../src/stack/processes.js';
import type { TeardownGroupResult } from '../../src/workflows/teardown-group.js';
import { startController, testTemporalTargets, type Controller } from '../fixtures/controller.js';
import { LwsClient } from '../fixtures/lws.js';
import { createTestNamespace, deleteTestNamespace } from '../fixtures/namespace.js';

/**
 * `lws-temporal status` and `history` as a user runs them (a process, KUBECONFIG and TEMPORAL_ADDRESS), against the
 * real controller: a ready group, then the history of its Parallel rebuild with durations and a Web UI link.
 */
const NAME = 'cli';
const UI = 'http://temporal-ui.test:8233';

function lws(): LeaderWorkerSet {
  const template = (role: string) => ({
    spec: { terminationGracePeriodSeconds: 2, containers: [{ name: role, image: 'registry.invalid/ai:1' }] },
  });
  return {
    apiVersion: 'leaderworkerset.x-k8s.io/v1',
    kind: 'LeaderWorkerSet',
    metadata: { name: NAME },
    spec: {
      podTerminationPolicy: 'Parallel',
      replicas: 1,
      leaderWorkerTemplate: { size: 2, leaderTemplate: template('leader'), workerTemplate: template('worker') },
    },
  };
}

for (const temporalTarget of testTemporalTargets()) {
  describe(`lws-temporal CLI (real cluster, Temporal ${temporalTarget}, worker and trigger processes)`, function () {
    this.timeout(300_000);
    let controller: Controller;
    let namespace: string;
    let client: LwsClient;

    before(async function () {
      this.timeout(300_000);
      controller = await startController({ temporal: temporalTarget });
      namespace = await createTestNamespace(controller.kc, 'e2e-cli');
      client = new LwsClient(controller.kc, namespace);
    });

    after(async () => {
      await deleteTestNamespace(controller?.kc, namespace);
      await controller?.stop();
    });

    /** `node --import tsx src/cli/main.ts ...args`; resolves with the exit code and output. */
    function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
      return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'src', 'cli', 'main.ts'), ...args], {
          cwd: repoRoot,
          env: {
            ...process.env,
            KUBECONFIG: kubeconfigPath,
            TEMPORAL_ADDRESS: controller.temporalAddress,
            TEMPORAL_NAMESPACE: controller.temporalNamespace,
            TEMPORAL_UI_URL: UI,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
    }

    async function cliJson<T>(...args: string[]): Promise<T> {
      const r = await cli(...args, '--json');
      assert.equal(r.code, 0, `lws-temporal ${args.join(' ')} --json exited ${r.code}: ${r.stderr}`);
      return JSON.parse(r.stdout) as T;
    }

    const target = () => `${namespace}/${NAME}`;
    let leaderUid = '';

    it('status: the group is Ready, with the policy and the LWS header', async () => {
      await client.create(lws());
      const pods = await client.waitForGroups(NAME, 1, 2);
      leaderUid = pods.find((p) => p.metadata?.name === `${NAME}-0`)?.metadata?.uid ?? '';
      assert.ok(leaderUid, 'leader pod cli-0');

      const report = await cliJson<StatusReport>('status', target());
      assert.equal(report.lws.namespace, namespace);
      assert.equal(report.lws.name, NAME);
      assert.equal(report.lws.policy, 'Parallel');
      assert.equal(report.lws.replicas, 1);
      assert.equal(report.lws.size, 2);
      assert.deepEqual(report.groups, [
        {
          group: 0,
          leaderPod: `${NAME}-0`,
          phase: 'Ready',
          readyPods: 2,
          size: 2,
          workerStatefulSet: `${NAME}-0`,
          revisionUpToDate: true,
        },
      ]);

      const human = await cli('status', target());
      assert.equal(human.code, 0, human.stderr);
      assert.match(human.stdout, /Policy +Parallel/);
      assert.match(human.stdout, /\n0 +cli-0 +Ready +2\/2 +cli-0 +yes\n/);
    });

    it('history: the Parallel rebuild after the leader is deleted, with durations and a Web UI link', async () => {
      assert.ok(leaderUid, 'the status test created the LWS');
      await client.core.deleteNamespacedPod({ name: `${NAME}-0`, namespace });
      const workflowId = `lws/${controller.cluster}/${namespace}/${NAME}/group-0/teardown/${leaderUid}`;
      const handle = controller.client.workflow.getHandle(workflowId);
      await waitFor('the rebuild workflow to start', () => handle.describe(), { timeoutMs: 30_000 });
      const result = (await handle.result()) as TeardownGroupResult;

      // Visibility can trail the run's completion by a moment.
      const report = await waitFor(
        'the completed rebuild in visibility',
        async () => {
          const r = await cliJson<HistoryReport>('history', target());
          return r.runs.some((run) => run.status === 'COMPLETED') ? r : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 500 },
      );
      assert.deepEqual(report.lws, { namespace, name: NAME });
      assert.equal(report.runs.length, 1, JSON.stringify(report.runs.map((r) => r.workflowId)));
      const run = report.runs[0]!;
      assert.equal(run.workflowId, workflowId);
      assert.equal(run.group, 0);
      assert.equal(run.lifecycle, 'rebuild');
      assert.equal(run.policy, 'Parallel');
      assert.equal(run.status, 'COMPLETED');
      assert.ok(run.teardownMs !== undefined && run.teardownMs > 0, `teardownMs ${run.teardownMs}`);
      assert.equal(run.teardownMs, result.teardownMs);
      assert.equal(run.recoveryMs, result.recoveryMs);
      assert.ok(run.closeTime && run.closeTime >= run.startTime);
      assert.ok(run.link.includes(encodeURIComponent(workflowId)), run.link);
      assert.equal(
        run.link,
        `${UI}/namespaces/${encodeURIComponent(report.temporalNamespace)}/workflows/${encodeURIComponent(workflowId)}/${run.runId}/history`,
      );
      assert.ok(
        run.timeline?.some((e) => e.event === 'new group ready'),
        JSON.stringify(run.timeline),
      );

      const human = await cli('history', target());
      assert.equal(human.code, 0, human.stderr);
      assert.match(human.stdout, /^GROUP +LIFECYCLE +POLICY +STATUS/);
      assert.match(human.stdout, /\n0 +rebuild +Parallel +completed /);
      assert.ok(human.stdout.includes(run.link), human.stdout);
    });

    it('status: the rebuilt group is Ready again', async () => {
      await client.waitForGroups(NAME, 1, 2);
      const report = await cliJson<StatusReport>('status', target());
      assert.equal(report.groups[0]?.phase, 'Ready');
    });

    it('a missing LWS is an error that names it, exit code 1', async () => {
      const r = await cli('status', `${namespace}/absent`);
      assert.equal(r.code, 1);
      assert.match(r.stderr, new RegExp(`leaderworkerset ${namespace}/absent not found`));
    });
  });
}
