import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createLogger } from '../../src/log.js';
import { repoRoot } from '../../tools/stack/paths.js';
import { isAlive, waitFor } from '../../src/dev-server/processes.js';
import { startTemporal } from '../../tools/stack/temporal-target.js';
import { ensureCluster, localClusterName } from '../fixtures/cluster.js';

describe('npm run demo -- --exit', function () {
  this.timeout(300_000);

  /** `npm run demo -- --exit --grace 3 --namespace <namespace> <args>`: its exit code and output. */
  async function demo(namespace: string, ...args: string[]): Promise<string> {
    await ensureCluster(); // the demo reuses a running cluster and leaves it running
    const output = await new Promise<{ code: number | null; text: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          join(repoRoot, 'scripts', 'demo.ts'),
          '--exit',
          '--grace',
          '3',
          '--namespace',
          namespace,
          ...args,
        ],
        { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.stderr.on('data', (d: Buffer) => (text += d.toString()));
      child.on('exit', (code) => resolve({ code, text }));
    });
    assert.equal(output.code, 0, output.text);
    return output.text;
  }

  /** What every run shows: the Web UI, both groups' phases, both workflows, the ratio, the cleanup. */
  async function assertRun(text: string, namespace: string): Promise<void> {
    assert.match(text, /Temporal Web UI: http:\/\/127\.0\.0\.1:\d+/);
    assert.match(text, /Sequential group 0: leader terminating/);
    assert.match(text, /Parallel {3}group 0: leader\+workers terminating/);
    for (const policy of ['Sequential', 'Parallel']) {
      assert.match(
        text,
        new RegExp(
          `${policy}: workflow lws/${await localClusterName()}/${namespace}/leaderworkerset-${policy.toLowerCase()}-termination/group-0/teardown/`,
        ),
      );
    }
    const ratio = /teardown: Sequential \S+, Parallel \S+, ratio ([\d.]+)/.exec(text);
    assert.ok(ratio, text);
    assert.ok(Number(ratio[1]) < 0.8, `Parallel/Sequential teardown ratio ${ratio[1]}`);
    assert.match(text, /recovery: Sequential \S+, Parallel \S+, ratio [\d.]+/);
    assert.match(text, /stopping what the demo started/);
  }

  it('runs end to end: both rebuilds, their timelines and the ratio, then cleans up', async () => {
    await assertRun(await demo('lws-demo-test'), 'lws-demo-test');
  });

  it('--temporal cluster: the same run on the production-shaped Temporal, which it reuses and leaves up', async () => {
    // Up before the demo, so that its runs can be read after: the demo stops only a cluster it started itself.
    const temporal = await startTemporal('cluster', createLogger('temporal'));
    try {
      const text = await demo('lws-demo-cluster-test', '--temporal', 'cluster');
      await assertRun(text, 'lws-demo-cluster-test');
      assert.ok(text.includes(`Temporal Web UI: ${temporal.uiUrl}\n`), text);
      const connection = await Connection.connect({ address: temporal.address });
      try {
        const client = new Client({ connection, namespace: temporal.namespace });
        const ids = [...text.matchAll(/^(?:Sequential|Parallel): workflow (\S+)$/gm)].map((m) => m[1]!);
        assert.equal(ids.length, 2, text);
        for (const id of ids) {
          const run = await client.workflow.getHandle(id).describe();
          assert.equal(run.status.name, 'COMPLETED', `${id} in the cluster's history`);
        }
      } finally {
        await connection.close();
      }
    } finally {
      await temporal.stop();
    }
  });

  /** Every live process descending from `pid` (from /proc). */
  function descendants(pid: number): number[] {
    const parents = new Map<number, number>();
    for (const entry of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      } catch {
        /* gone meanwhile */
      }
    }
    const out: number[] = [];
    const walk = (p: number) => {
      for (const [child, parent] of parents) {
        if (parent === p) {
          out.push(child);
          walk(child);
        }
      }
    };
    walk(pid);
    return out;
  }

  const stops = [
    { how: 'its stdout closed mid-run (the reader of `| tee` gone)', exit: true, code: 130 },
    { how: 'SIGTERM mid-run', exit: true, code: 130, signal: 'SIGTERM' as const },
    { how: 'SIGHUP while it keeps the stack up for the Web UI', exit: false, code: 0, signal: 'SIGHUP' as const },
  ];
  for (const stop of stops) {
    it(`stops everything it started on ${stop.how}`, async () => {
      await ensureCluster();
      const namespace = `demo-stop-${(stop.signal ?? 'pipe').toLowerCase()}-${randomBytes(3).toString('hex')}`;
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          join(repoRoot, 'scripts', 'demo.ts'),
          ...(stop.exit ? ['--exit'] : []),
          '--grace',
          '3',
          '--namespace',
          namespace,
        ],
        { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let text = '';
      child.stderr.on('data', (d: Buffer) => (text += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const mark = stop.exit ? /Temporal Web UI/ : /keeps running for the Web UI/;
      await new Promise<void>((resolve) =>
        child.stdout.on('data', (d: Buffer) => {
          text += d.toString();
          if (mark.test(text)) resolve();
        }),
      );
      // The worker and the trigger are up once the demo shows its groups; its dev server before them.
      await waitFor(
        'the worker and the trigger',
        async () => (descendants(child.pid!).length >= 3 ? true : undefined),
        {
          timeoutMs: 60_000,
          intervalMs: 200,
        },
      );
      const started = descendants(child.pid!);
      if (stop.signal) child.kill(stop.signal);
      else child.stdout.destroy();
      assert.equal(await exited, stop.code, text);
      // Those still starting when it stopped are killed as it exits: gone a moment later.
      await waitFor(
        'every process the demo started gone',
        async () => (started.some((pid) => isAlive(pid)) ? undefined : true),
        { timeoutMs: 10_000, intervalMs: 100, hint: text },
      ).catch(() => assert.fail(`still running: ${started.filter((pid) => isAlive(pid)).join(', ')}\n${text}`));
      assert.match(text, /stopping what the demo started|stopping/);
    });
  }
});
