import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../../src/stack/paths.js';
import { ensureCluster } from '../fixtures/cluster.js';

describe('npm run demo -- --exit', function () {
  this.timeout(300_000);

  it('runs end to end: both rebuilds, their timelines and the ratio, then cleans up', async () => {
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
          'lws-demo-test',
        ],
        { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.stderr.on('data', (d: Buffer) => (text += d.toString()));
      child.on('exit', (code) => resolve({ code, text }));
    });
    assert.equal(output.code, 0, output.text);
    assert.match(output.text, /Temporal Web UI: http:\/\/127\.0\.0\.1:\d+/);
    assert.match(output.text, /Sequential group 0: leader terminating/);
    assert.match(output.text, /Parallel {3}group 0: leader\+workers terminating/);
    for (const policy of ['Sequential', 'Parallel']) {
      assert.match(
        output.text,
        new RegExp(
          `${policy}: workflow lws/lws-demo-test/leaderworkerset-${policy.toLowerCase()}-termination/group-0/teardown/`,
        ),
      );
    }
    const ratio = /teardown: Sequential \S+, Parallel \S+, ratio ([\d.]+)/.exec(output.text);
    assert.ok(ratio, output.text);
    assert.ok(Number(ratio[1]) < 0.8, `Parallel/Sequential teardown ratio ${ratio[1]}`);
    assert.match(output.text, /stopping what the demo started/);
  });
});
