import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeconfigPath, repoRoot } from '../../src/stack/paths.js';
import { freePort, isAlive, waitFor } from '../../src/stack/processes.js';
import { installCrd } from '../../src/stack/crd.js';
import { localKubeConfig } from '../../src/stack/cluster.js';
import { ensureCluster } from '../fixtures/cluster.js';
import { createTestNamespace, deleteTestNamespace } from '../fixtures/namespace.js';
import { exampleLws, LwsClient } from '../fixtures/lws.js';

function start(env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'src', 'main.ts')], {
    cwd: repoRoot,
    env: { ...process.env, TEMPORAL_ADDRESS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  return { child, output: () => text, exit: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
}

describe('npm start (worker and trigger in one process)', function () {
  this.timeout(180_000);

  it('a missing kubeconfig is a clear error that says how to start a cluster', async () => {
    const run = start({ KUBECONFIG: '/nonexistent/kubeconfig' });
    assert.equal(await run.exit, 1);
    assert.match(run.output(), /KUBECONFIG=\/nonexistent\/kubeconfig.*npm run cluster:up/);
  });

  it('an unreachable cluster is a clear error that says how to start one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lws-start-'));
    const port = await freePort();
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}"}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n`,
    );
    const run = start({ KUBECONFIG: kubeconfig });
    assert.equal(await run.exit, 1);
    assert.match(
      run.output(),
      new RegExp(`cannot reach the Kubernetes API at https://127.0.0.1:${port}.*npm run cluster:up`),
    );
  });

  it('without TEMPORAL_ADDRESS runs an embedded dev server, provisions groups, and stops cleanly on SIGTERM', async () => {
    await ensureCluster();
    const kc = localKubeConfig();
    await installCrd(kc);
    const namespace = await createTestNamespace(kc, 'e2e-start');
    const run = start({ KUBECONFIG: kubeconfigPath });
    try {
      await waitFor(
        'worker and trigger running',
        async () =>
          /\[worker\] running/.test(run.output()) && /\[trigger\] watching/.test(run.output()) ? true : undefined,
        {
          timeoutMs: 90_000,
        },
      );
      assert.match(run.output(), /embedded Temporal dev server .*webUi=http:\/\/127\.0\.0\.1:\d+/);
      const lws = new LwsClient(kc, namespace);
      const base = exampleLws('parallel');
      await lws.create({
        ...base,
        spec: { ...base.spec, replicas: 1, leaderWorkerTemplate: { ...base.spec.leaderWorkerTemplate, size: 2 } },
      });
      await lws.waitForGroups(base.metadata.name!, 1, 2);
      const serverPid = /embedded Temporal dev server .*pid=(\d+)/.exec(run.output());
      assert.ok(serverPid, 'the dev server pid is logged');
      run.child.kill('SIGTERM');
      assert.equal(await run.exit, 0, run.output());
      assert.equal(isAlive(Number(serverPid[1])), false, 'the embedded dev server stopped with it');
    } finally {
      run.child.kill('SIGKILL');
      await deleteTestNamespace(kc, namespace);
    }
  });
});
