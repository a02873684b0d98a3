// The production-shaped Temporal of `npm run temporal:up` (PostgreSQL, four services, the Web UI), with the real worker
// and trigger on it against the local Kubernetes cluster: an LWS is provisioned and reconciled, a Parallel group is
// rebuilt (teardown and provisioning workflows), and a container restart recreates a group. Then `temporal:down`
// leaves no process behind.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { LeaderWorkerSet } from '../../src/model/index.js';
import { createLogger } from '../../src/log.js';
import { startControllerProcess, type ControllerProcess } from '../../tools/stack/controller-processes.js';
import { binPath, kubeconfigPath } from '../../tools/stack/paths.js';
import { isAlive, waitFor } from '../../src/dev-server/processes.js';
import {
  postgresBinDir,
  readTemporalClusterState,
  temporalClusterDown,
  temporalClusterUp,
  type TemporalClusterState,
} from '../../tools/stack/temporal-cluster.js';
import { ensureCluster, localClusterName } from '../fixtures/cluster.js';
import { LwsClient } from '../fixtures/lws.js';
import { createTestNamespace, deleteTestNamespace } from '../fixtures/namespace.js';
import { installCrd } from '../../tools/stack/crd.js';
import { localKubeConfig } from '../../tools/stack/cluster.js';
import { testLogDir } from '../fixtures/controller.js';

const log = createLogger('temporal-cluster-test');

function lwsOf(name: string): LeaderWorkerSet {
  return {
    apiVersion: 'leaderworkerset.x-k8s.io/v1',
    kind: 'LeaderWorkerSet',
    metadata: { name },
    spec: {
      replicas: 2,
      podTerminationPolicy: 'Parallel',
      leaderWorkerTemplate: {
        size: 2,
        restartPolicy: 'RecreateGroupOnPodRestart',
        workerTemplate: {
          spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'main', image: 'registry.invalid/ai:1' }] },
        },
      },
    },
  };
}

describe('stack: the production-shaped Temporal (temporal:up, PostgreSQL, four services) with the real controller', function () {
  this.timeout(600_000);
  let state: TemporalClusterState;
  let client: Client;
  let connection: Connection;
  let processes: ControllerProcess[] = [];
  let namespace: string | undefined;
  let lws: LwsClient;

  before(async function () {
    this.timeout(600_000);
    await ensureCluster();
    const kc = localKubeConfig();
    await installCrd(kc);
    state = await temporalClusterUp(log);
    connection = await Connection.connect({ address: state.address });
    client = new Client({ connection, namespace: state.namespace });
    const env = {
      ...process.env,
      KUBECONFIG: kubeconfigPath,
      TEMPORAL_ADDRESS: state.address,
      TEMPORAL_NAMESPACE: state.namespace,
      TEMPORAL_TASK_QUEUE: 'lws-temporal',
    };
    const logDir = testLogDir;
    processes = await Promise.all([
      startControllerProcess('worker', env, logDir),
      startControllerProcess('trigger', env, logDir),
    ]);
    namespace = await createTestNamespace(kc, 'temporal-cluster');
    lws = new LwsClient(kc, namespace);
  });

  after(async function () {
    this.timeout(180_000);
    await deleteTestNamespace(localKubeConfig(), namespace);
    await Promise.all(processes.map((p) => p.stop()));
    await connection?.close();
    await temporalClusterDown(log);
  });

  it('is a PostgreSQL-backed cluster of four services with the namespace and the search attributes', async () => {
    const out = (args: string[]) =>
      execFileSync(binPath('temporal'), [...args, '--address', state.address], { encoding: 'utf8' });
    assert.match(out(['operator', 'cluster', 'health']), /SERVING/);
    const attributes = out(['operator', 'search-attribute', 'list', '--namespace', state.namespace]);
    for (const name of ['LwsNamespace', 'LwsName', 'GroupIndex', 'TerminationPolicy', 'Lifecycle']) {
      assert.match(attributes, new RegExp(`\\b${name}\\b`), name);
    }
    const system = await connection.workflowService.getSystemInfo({});
    assert.ok(system.serverVersion?.startsWith('1.32'), `server ${system.serverVersion}`);
    const again = await temporalClusterUp(log);
    assert.deepEqual(again.pids, state.pids, 'a second up confirms the running cluster');
    assert.ok((await fetch(state.uiUrl)).ok, 'the Web UI answers');
  });

  it('runs every workflow type of the controller: provision, reconcile, a Parallel rebuild, a group recreated', async () => {
    await lws.create(lwsOf('pg'));
    await lws.waitForGroups('pg', 2, 2, 120_000);
    const old = (await lws.pod('pg-0'))!;
    await lws.core.deleteNamespacedPod({ namespace: namespace!, name: 'pg-0' });
    await waitFor(
      'group 0 rebuilt',
      async () => {
        const leader = await lws.pod('pg-0');
        return leader && leader.metadata?.uid !== old.metadata?.uid ? leader : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    await lws.waitForGroups('pg', 2, 2, 120_000);
    await lws.reportContainerRestart('pg-1-1');
    const recreated = await waitFor(
      'a workflow of each type',
      async () => {
        const types = new Map<string, number>();
        for await (const wf of client.workflow.list({
          query: `WorkflowId STARTS_WITH "lws/${await localClusterName()}/${namespace}/pg/"`,
        })) {
          types.set(wf.type, (types.get(wf.type) ?? 0) + 1);
        }
        const all = ['reconcileLeaderWorkerSet', 'provisionGroup', 'teardownGroup', 'recreateGroup'];
        return all.every((t) => types.has(t)) ? types : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    assert.ok(recreated.get('teardownGroup')! >= 1);
    for await (const wf of client.workflow.list({
      query: `WorkflowId STARTS_WITH "lws/${await localClusterName()}/${namespace}/pg/group-0/teardown/"`,
    })) {
      const result = (await client.workflow.getHandle(wf.workflowId).result()) as { lifecycle: string; policy: string };
      assert.deepEqual([result.lifecycle, result.policy], ['rebuild', 'Parallel']);
    }
    await lws.waitForGroups('pg', 2, 2, 120_000);
    // The histories are in PostgreSQL, in the server's `temporal` database.
    const rows = execFileSync(
      join(postgresBinDir(), 'psql'),
      [
        '-h',
        '127.0.0.1',
        '-p',
        String(state.postgresPort),
        '-U',
        'postgres',
        '-d',
        'temporal',
        '-Atc',
        'SELECT count(*) FROM executions',
      ],
      { encoding: 'utf8' },
    );
    assert.ok(Number(rows.trim()) >= 6, `executions in PostgreSQL: ${rows.trim()}`);
  });

  it('temporal:down leaves no process behind', async () => {
    const pids = Object.values(state.pids);
    await Promise.all(processes.map((p) => p.stop()));
    processes = [];
    await temporalClusterDown(log);
    assert.deepEqual(
      pids.filter((pid) => isAlive(pid)),
      [],
    );
    assert.equal(await readTemporalClusterState(), undefined);
  });
});
