import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../src/log.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { buildImageCommand } from '../../tools/images/stack-images.js';

/** The children of `pid` with their state (S sleeping, Z zombie, ...), from /proc. */
async function childrenOf(pid: number): Promise<Array<{ pid: number; state: string }>> {
  const children: Array<{ pid: number; state: string }> = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(ppid) === pid) children.push({ pid: Number(name), state: state! });
  }
  return children;
}

const exitOf = (child: ReturnType<typeof spawn>) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );

/** The pod sandbox's process of the real nodes (tools/images/pause), run on the host. */
describe('pause (the pod sandbox of the real nodes), on the host', function () {
  this.timeout(60_000);
  let dir: string;
  let binary: string;

  before(async function () {
    this.timeout(600_000);
    dir = await mkdtemp(join(tmpdir(), 'pause-test-'));
    binary = join(dir, 'pause');
    await buildImageCommand('pause', binary, { log: silentLogger });
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`blocks until ${signal}, then exits 0`, async () => {
      const child = spawn(binary, [], { stdio: 'ignore' });
      const exited = exitOf(child);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(child.exitCode, null, 'still running');
      child.kill(signal);
      assert.deepEqual(await exited, { code: 0, signal: null });
    });
  }

  it('as PID 1 of a PID namespace, reaps the children that exit', async function () {
    // A PID namespace of its own takes root here (the real nodes do too).
    const canUnshare = process.getuid?.() === 0 && spawnSync('unshare', ['--version']).status === 0;
    if (!canUnshare) this.skip();
    // sh is PID 1 and starts two children, then becomes pause: the children's exits are pause's to collect.
    const unshare = spawn(
      'unshare',
      ['--pid', '--fork', '--kill-child', 'sh', '-c', 'sleep 2 & sleep 2 & exec "$0"', binary],
      {
        stdio: 'ignore',
      },
    );
    const exited = exitOf(unshare);
    try {
      const pause = await waitFor(
        'pause under unshare',
        async () => {
          const [child] = await childrenOf(unshare.pid!);
          const comm = child && (await readFile(`/proc/${child.pid}/comm`, 'utf8').catch(() => ''));
          return comm?.trim() === 'pause' ? child!.pid : undefined;
        },
        { timeoutMs: 10_000, intervalMs: 20 },
      );
      const before = await childrenOf(pause);
      assert.ok(before.length > 0, 'the sleeps are children of pause');
      await waitFor(
        'the exited children reaped (no zombies left)',
        async () => ((await childrenOf(pause)).length === 0 ? true : undefined),
        { timeoutMs: 10_000, intervalMs: 100 },
      );
      process.kill(pause, 'SIGTERM');
      assert.deepEqual(await exited, { code: 0, signal: null });
    } finally {
      if (unshare.exitCode === null) unshare.kill('SIGKILL');
    }
  });
});
