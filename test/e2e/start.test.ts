import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { memorySettings } from '../../tools/stack/controller-processes.js';
import { kubeconfigPath, repoRoot } from '../../tools/stack/paths.js';
import { freePort, SERVER_PORTS, isAlive, waitFor } from '../../src/dev-server/processes.js';
import { installCrd } from '../../tools/stack/crd.js';
import { localKubeConfig } from '../../tools/stack/cluster.js';
import { readTemporalClusterState } from '../../tools/stack/temporal-cluster.js';
import { ensureCluster, localClusterName } from '../fixtures/cluster.js';
import { createTestNamespace, deleteTestNamespace } from '../fixtures/namespace.js';
import { exampleLws, LwsClient } from '../fixtures/lws.js';

/** What `npm start` runs (`npm run worker` / `npm run trigger` with another role). */
function start(
  env: NodeJS.ProcessEnv,
  role = 'main',
): { child: ChildProcess; output: () => string; exit: Promise<number | null> } {
  const child = spawn('bash', [join(repoRoot, 'bin', 'controller.sh'), role], {
    cwd: repoRoot,
    env: { ...process.env, TEMPORAL_ADDRESS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  return { child, output: () => text, exit: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
}

/** `npm <args>` in the checkout; its exit code and output. */
function runNpm(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('npm', args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe('npm start (worker and trigger in one process)', function () {
  this.timeout(180_000);

  it('a missing kubeconfig is a clear error that says how to start a cluster', async () => {
    // The first start of a checkout may build dist/ first; it says so.
    const run = start({ KUBECONFIG: '/nonexistent/kubeconfig' });
    assert.equal(await run.exit, 1, run.output());
    assert.match(run.output(), /KUBECONFIG=\/nonexistent\/kubeconfig.*npm run cluster:up/);
  });

  it('an unknown role names the roles allowed', async () => {
    const run = start({}, 'controller');
    assert.equal(await run.exit, 2);
    assert.match(run.output(), /unknown role 'controller'; allowed: main \(worker and trigger\), worker, trigger/);
  });

  it('an unreachable cluster is a clear error that says how to start one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lws-start-'));
    const port = await freePort(SERVER_PORTS);
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}"}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n`,
    );
    const run = start({ KUBECONFIG: kubeconfig });
    assert.equal(await run.exit, 1);
    assert.doesNotMatch(run.output(), /building dist/, 'dist/ was built by the start before and is up to date');
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
    // A setting of the caller's own stays; the others come from the Deployments'.
    const run = start({ KUBECONFIG: kubeconfigPath, NODE_OPTIONS: undefined, MALLOC_ARENA_MAX: '4' });
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
      // The launcher replaced itself with the compiled entry, which runs with the Deployments' memory settings.
      const pid = run.child.pid!;
      assert.equal(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[1], join(repoRoot, 'dist', 'main.js'));
      const environ = new Map(
        readFileSync(`/proc/${pid}/environ`, 'utf8')
          .split('\0')
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as const),
      );
      // glibc parses GLIBC_TUNABLES in place, ending the string after its first tunable: /proc shows only that.
      const firstTunable = (value: string | undefined) => value?.split(':')[0];
      assert.deepEqual(
        { ...Object.fromEntries(environ), GLIBC_TUNABLES: firstTunable(environ.get('GLIBC_TUNABLES')) },
        {
          ...Object.fromEntries(environ),
          ...memorySettings.main,
          MALLOC_ARENA_MAX: '4',
          GLIBC_TUNABLES: firstTunable(memorySettings.main.GLIBC_TUNABLES),
        },
      );
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

  it('the production recipe: `npm run temporal:up`, then npm start with its TEMPORAL_ADDRESS, runs on the cluster', async function () {
    // A fresh clone's first temporal:up creates the schemas and the history shards: about 40 s, more on a busy machine.
    this.timeout(600_000);
    await ensureCluster();
    const kc = localKubeConfig();
    await installCrd(kc);
    const wasUp = await readTemporalClusterState();
    const up = await runNpm(['run', '-s', 'temporal:up']);
    assert.equal(up.code, 0, up.output);
    const exported = /export TEMPORAL_ADDRESS=(\S+) TEMPORAL_NAMESPACE=(\S+)/.exec(up.output);
    assert.ok(exported, up.output);
    const [, address, temporalNamespace] = exported;
    const namespace = await createTestNamespace(kc, 'e2e-start-cluster');
    const run = start({ KUBECONFIG: kubeconfigPath, TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: temporalNamespace });
    const connection = await Connection.connect({ address: address! });
    try {
      await waitFor(
        'worker and trigger running',
        async () =>
          /\[worker\] running/.test(run.output()) && /\[trigger\] watching/.test(run.output()) ? true : undefined,
        { timeoutMs: 90_000 },
      );
      assert.doesNotMatch(run.output(), /embedded Temporal dev server/);
      const lws = new LwsClient(kc, namespace);
      const base = exampleLws('parallel');
      await lws.create({
        ...base,
        spec: { ...base.spec, replicas: 1, leaderWorkerTemplate: { ...base.spec.leaderWorkerTemplate, size: 2 } },
      });
      await lws.waitForGroups(base.metadata.name!, 1, 2);
      const client = new Client({ connection, namespace: temporalNamespace });
      const types = new Set<string>();
      for await (const wf of client.workflow.list({
        query: `WorkflowId STARTS_WITH "lws/${await localClusterName()}/${namespace}/"`,
      })) {
        types.add(wf.type);
      }
      assert.deepEqual([...types].sort(), ['provisionGroup', 'reconcileLeaderWorkerSet']);
      run.child.kill('SIGTERM');
      assert.equal(await run.exit, 0, run.output());
    } finally {
      run.child.kill('SIGKILL');
      await connection.close();
      await deleteTestNamespace(kc, namespace);
      if (!wasUp) assert.equal((await runNpm(['run', '-s', 'temporal:down'])).code, 0);
    }
  });
});
