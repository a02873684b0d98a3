import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { StatusReport } from '../../src/cli/format.js';
import type { RecoveryReport } from '../../src/cli/recovery-report.js';
import type { LeaderWorkerSet } from '../../src/model/index.js';
import { kubeconfigPath, repoRoot } from '../../tools/stack/paths.js';
import { waitFor } from '../../src/dev-server/processes.js';
import type { RecreateGroupResult } from '../../src/workflows/recreate-group.js';
import type { TeardownGroupResult } from '../../src/workflows/teardown-group.js';
import { testTemporalTargets } from '../fixtures/controller.js';
import { useControllerSuite } from '../fixtures/controller-suite.js';

/**
 * `lws-temporal status` and `history` as a user runs them (a process, KUBECONFIG and TEMPORAL_ADDRESS), against the
 * real controller: a ready group, then the recovery report of its Parallel rebuilds (a leader deleted by the user, then
 * a container restart) with their causes, durations and Web UI links.
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
    const suite = useControllerSuite('e2e-cli', { temporal: temporalTarget });

    /** `node --import tsx src/cli/main.ts ...args`; resolves with the exit code and output. */
    function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
      return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'src', 'cli', 'main.ts'), ...args], {
          cwd: repoRoot,
          env: {
            ...process.env,
            KUBECONFIG: kubeconfigPath,
            TEMPORAL_ADDRESS: suite.controller.temporalAddress,
            TEMPORAL_NAMESPACE: suite.controller.temporalNamespace,
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

    const target = () => `${suite.namespace}/${NAME}`;
    let leaderUid = '';

    it('status: the group is Ready, with the policy and the LWS header', async () => {
      await suite.lws.create(lws());
      const pods = await suite.lws.waitForGroups(NAME, 1, 2);
      leaderUid = pods.find((p) => p.metadata?.name === `${NAME}-0`)?.metadata?.uid ?? '';
      assert.ok(leaderUid, 'leader pod cli-0');

      const report = await cliJson<StatusReport>('status', target());
      assert.equal(report.lws.namespace, suite.namespace);
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
      // RESTARTS, where status shows it, is "-": the group was never recreated.
      assert.match(human.stdout, /\n0 +cli-0 +Ready +2\/2 +cli-0 +yes +-\n/);
    });

    /** The report once `done` accepts it: visibility can trail a run's completion by a moment. */
    function historyWhen(what: string, done: (r: RecoveryReport) => boolean): Promise<RecoveryReport> {
      return waitFor(
        what,
        async () => {
          const r = await cliJson<RecoveryReport>('history', target());
          return done(r) ? r : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
    }

    it('history: the Parallel rebuild after the leader is deleted, with durations and a Web UI link', async () => {
      assert.ok(leaderUid, 'the status test created the LWS');
      await suite.lws.core.deleteNamespacedPod({ name: `${NAME}-0`, namespace: suite.namespace });
      const workflowId = `lws/${suite.controller.cluster}/${suite.namespace}/${NAME}/group-0/teardown/${leaderUid}`;
      const handle = suite.controller.client.workflow.getHandle(workflowId);
      await waitFor('the rebuild workflow to start', () => handle.describe(), { timeoutMs: 30_000 });
      const result = (await handle.result()) as TeardownGroupResult;

      const report = await historyWhen('the completed rebuild in visibility', (r) =>
        r.groups.some((g) => g.entries.some((e) => e.outcome === 'rebuilt')),
      );
      assert.deepEqual(report.lws, { namespace: suite.namespace, name: NAME });
      assert.deepEqual(
        report.groups.map((g) => g.group),
        [0],
      );
      const group = report.groups[0]!;
      assert.equal(group.entries.length, 1, JSON.stringify(group.entries.map((e) => e.teardown?.workflowId)));
      const entry = group.entries[0]!;
      // No recreate deleted this leader: someone else did.
      assert.equal(entry.cause, 'leader-deletion');
      assert.equal(entry.pod, `${NAME}-0`);
      assert.equal(entry.recreate, undefined);
      assert.equal(entry.policy, 'Parallel');
      assert.ok(entry.teardownMs !== undefined && entry.teardownMs > 0, `teardownMs ${entry.teardownMs}`);
      assert.equal(entry.teardownMs, result.teardownMs);
      assert.equal(entry.recoveryMs, result.recoveryMs);
      const run = entry.teardown!;
      assert.equal(run.workflowId, workflowId);
      assert.equal(run.leaderUid, leaderUid);
      assert.equal(run.lifecycle, 'rebuild');
      assert.equal(run.status, 'COMPLETED');
      assert.ok(run.closeTime && run.closeTime >= run.startTime);
      assert.equal(
        run.link,
        `${UI}/namespaces/${encodeURIComponent(report.temporalNamespace)}/workflows/${encodeURIComponent(workflowId)}/${run.runId}/history`,
      );
      assert.ok(
        run.timeline?.some((e) => e.event === 'new group ready'),
        JSON.stringify(run.timeline),
      );
      assert.deepEqual(
        [group.summary.rebuilds, group.summary.fromRestarts, group.summary.byCause],
        [1, 0, { 'leader-deletion': 1 }],
      );

      const human = await cli('history', target());
      assert.equal(human.code, 0, human.stderr);
      assert.match(human.stdout, /^group 0: 1 rebuild at \S+ \(1 leader deletion\); 0 from restarts\n/);
      assert.match(human.stdout, /\n {2}WHEN \(UTC\) +WHY +POLICY +BACKOFF +TEARDOWN +RECOVERY +LEFT +STATUS\n/);
      assert.match(human.stdout, /\n {2}\S+Z +leader deleted \(cli-0\) +Parallel +- +\S+ s +\S+ s +- +rebuilt\n/);
      assert.ok(human.stdout.includes(`      teardown  ${run.link}\n`), human.stdout);
    });

    it('history: a container restart recreates the group, with its reason, backoff and the teardown’s times', async () => {
      const pods = await suite.lws.waitForGroups(NAME, 1, 2);
      const uid = pods.find((p) => p.metadata?.name === `${NAME}-0`)?.metadata?.uid ?? '';
      assert.ok(uid && uid !== leaderUid, 'the rebuilt group has a new leader');
      await suite.lws.reportContainerRestart(`${NAME}-0-1`);

      const report = await historyWhen('the recreate and its teardown in visibility', (r) =>
        r.groups.some((g) => g.entries.some((e) => e.cause === 'container-restart' && e.outcome === 'rebuilt')),
      );
      const group = report.groups[0]!;
      assert.deepEqual(
        group.entries.map((e) => e.cause),
        ['container-restart', 'leader-deletion'],
        'newest first',
      );
      const entry = group.entries[0]!;
      const recreate = entry.recreate!;
      const teardown = entry.teardown!;
      // Joined on the leader the recreate deleted.
      assert.equal(recreate.leaderUid, uid);
      assert.equal(teardown.leaderUid, uid);
      assert.equal(
        teardown.workflowId,
        `lws/${suite.controller.cluster}/${suite.namespace}/${NAME}/group-0/teardown/${uid}`,
      );
      assert.match(recreate.workflowId, new RegExp(`/group-0/recreate/${uid}$`));
      assert.equal(recreate.outcome, 'recreated');
      assert.equal(entry.pod, `${NAME}-0-1`);
      assert.equal(entry.reason, `a container of ${NAME}-0-1 restarted`);
      assert.equal(entry.at, recreate.startTime);
      // The group's first recreation: no wait.
      assert.equal(entry.backoffMs, 0);
      assert.equal(entry.policy, 'Parallel');

      const recreateResult = (await suite.controller.client.workflow
        .getHandle(recreate.workflowId, recreate.runId)
        .result()) as RecreateGroupResult;
      assert.equal(recreateResult.outcome, 'recreated');
      const teardownResult = (await suite.controller.client.workflow
        .getHandle(teardown.workflowId, teardown.runId)
        .result()) as TeardownGroupResult;
      assert.ok(entry.teardownMs !== undefined && entry.teardownMs > 0, `teardownMs ${entry.teardownMs}`);
      assert.equal(entry.teardownMs, teardownResult.teardownMs);
      assert.equal(entry.recoveryMs, teardownResult.recoveryMs);
      assert.equal(
        recreate.link,
        `${UI}/namespaces/${encodeURIComponent(report.temporalNamespace)}/workflows/${encodeURIComponent(recreate.workflowId)}/${recreate.runId}/history`,
      );
      assert.deepEqual(
        [group.summary.rebuilds, group.summary.fromRestarts, group.summary.byCause],
        [2, 1, { 'container-restart': 1, 'leader-deletion': 1 }],
      );

      const human = await cli('history', target());
      assert.equal(human.code, 0, human.stderr);
      assert.match(
        human.stdout,
        /^group 0: 2 rebuilds from \S+ to \S+ \((1 container restart, 1 leader deletion|1 leader deletion, 1 container restart)\); 1 from restarts\n/,
      );
      const row = human.stdout.split('\n').findIndex((l) => l.includes('container restart (cli-0-1)'));
      assert.ok(row > 0, human.stdout);
      const lines = human.stdout.split('\n');
      assert.match(lines[row]!, /^ {2}\S+Z +container restart \(cli-0-1\) +Parallel +0 ms +\S+ s +\S+ s +- +rebuilt$/);
      assert.deepEqual(lines.slice(row + 1, row + 3), [
        `      recreate  ${recreate.link}`,
        `      teardown  ${teardown.link}`,
      ]);
    });

    it('status: the rebuilt group is Ready again', async () => {
      await suite.lws.waitForGroups(NAME, 1, 2);
      const report = await cliJson<StatusReport>('status', target());
      assert.equal(report.groups[0]?.phase, 'Ready');
    });

    it('a missing LWS is an error that names it, exit code 1', async () => {
      const r = await cli('status', `${suite.namespace}/absent`);
      assert.equal(r.code, 1);
      assert.match(r.stderr, new RegExp(`leaderworkerset ${suite.namespace}/absent not found`));
    });
  });
}
