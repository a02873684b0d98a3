// The `lws-temporal` command as a process: help, usage errors and configuration errors. None of these reach a
// cluster or a Temporal server.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'mocha';
import { repoRoot } from '../../tools/stack/paths.js';

function lwsTemporal(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, 'bin', 'lws-temporal.js'), ...args], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

describe('cli: the lws-temporal process', function () {
  this.timeout(60_000);

  it('--help prints the usage on stdout and exits 0', async () => {
    const r = await lwsTemporal(['--help']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^Usage: lws-temporal <command> <namespace>\/<name>/);
    assert.match(r.out, /status <namespace>\/<name>/);
    assert.match(r.out, /history <namespace>\/<name>/);
    assert.match(r.out, /--json/);
    assert.equal(r.err, '');
  });

  for (const [args, message] of [
    [[], /missing command: expected status or history/],
    [['status', 'demo'], /"demo" has no namespace: status takes <namespace>\/<name>/],
    [['status', 'default/demo', '--bogus'], /unknown option --bogus: allowed are --json, --ui-url <url>, -h\/--help/],
  ] as const) {
    it(`\`lws-temporal ${args.join(' ')}\` exits 2 with a clear error`, async () => {
      const r = await lwsTemporal([...args]);
      assert.equal(r.code, 2);
      assert.equal(r.out, '');
      assert.match(r.err, message);
      assert.match(r.err, /Run `lws-temporal --help` for usage/);
    });
  }

  it('a missing kubeconfig exits 1 and says how to get a cluster', async () => {
    const r = await lwsTemporal(['status', 'default/demo'], { KUBECONFIG: '/nonexistent/kubeconfig' });
    assert.equal(r.code, 1);
    assert.match(r.err, /KUBECONFIG=\/nonexistent\/kubeconfig.*npm run cluster:up/);
  });

  it('history without a cluster name or a cluster exits 1 and says what to set', async () => {
    const r = await lwsTemporal(['history', 'default/demo'], { KUBECONFIG: '/nonexistent/kubeconfig' });
    assert.equal(r.code, 1);
    assert.match(r.err, /set LWS_CLUSTER_NAME to its controller's cluster name, or KUBECONFIG to reach the cluster/);
  });

  it('a bad TEMPORAL_ADDRESS exits 1 naming the variable, before connecting', async () => {
    const r = await lwsTemporal(['history', 'default/demo'], { TEMPORAL_ADDRESS: 'no-port', LWS_CLUSTER_NAME: 'c1' });
    assert.equal(r.code, 1);
    assert.match(r.err, /TEMPORAL_ADDRESS=no-port: expected host:port/);
  });
});
