import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { resolveClusterName } from '../../src/config/cluster.js';
import { createLogger } from '../../src/log.js';
import { LABEL_NAME, lwsWorkflowIdPrefix, workflowId, type LeaderWorkerSet } from '../../src/model/index.js';
import { localKubeConfig } from '../../tools/stack/cluster.js';
import { startControllerProcess, type ControllerProcess } from '../../tools/stack/controller-processes.js';
import { kubeconfigPath, localClusterPaths, repoRoot } from '../../tools/stack/paths.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { startTemporal, type RunningTemporal } from '../../tools/stack/temporal-target.js';
import { OTHER_CLUSTER_FAILURE } from '../../src/worker/cluster-guard.js';
import type { TeardownGroupInput } from '../../src/workflows/teardown-group.js';
import { ensureCluster } from '../fixtures/cluster.js';
import { LwsClient } from '../fixtures/lws.js';
import { sampleLeaderWorkerSet } from '../../tools/stack/sample-lws.js';
import { testLogDir } from '../fixtures/controller.js';

/**
 * Two clusters, one Temporal namespace: the local cluster and a second one (the floor release's, in folders of its
 * own), each with its own worker and trigger on one dev server, both with the default cluster name and task queue.
 * The same LWS, in the same namespace, in both: neither controller may touch the other's.
 */
const G = 3; // terminationGracePeriodSeconds
const NAMESPACE = 'e2e-two-clusters';
const NAME = 'vllm';
const IMAGE = 'registry.invalid/ai:1';

function lwsOf(): LeaderWorkerSet {
  return sampleLeaderWorkerSet({ name: NAME, policy: 'Parallel', replicas: 2, size: 3, graceSeconds: G, image: IMAGE });
}

/** `npm run cluster:up|down` for the floor release's cluster, as a developer would run it; its output. */
function floorCluster(verb: 'up' | 'down'): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'scripts', `cluster-${verb}.ts`)], {
      cwd: repoRoot,
      env: { ...process.env, LWS_KUBERNETES: 'floor' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.stderr.on('data', (d: Buffer) => (text += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`cluster:${verb} failed:\n${text}`))));
  });
}

interface Side {
  label: string;
  kubeconfig: string;
  kc: k8s.KubeConfig;
  lws: LwsClient;
  cluster: string;
  processes: ControllerProcess[];
}

/** Every pod and StatefulSet of the LWS, by name: its uid. */
async function snapshot(side: Side): Promise<Record<string, string>> {
  const [pods, sets] = await Promise.all([
    side.lws.core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `${LABEL_NAME}=${NAME}` }),
    side.lws.apps.listNamespacedStatefulSet({ namespace: NAMESPACE }),
  ]);
  return Object.fromEntries([
    ...pods.items
      .filter((p) => !p.metadata?.deletionTimestamp)
      .map((p) => [`pod/${p.metadata!.name}`, p.metadata!.uid!]),
    ...sets.items.map((s) => [`sts/${s.metadata!.name}`, s.metadata!.uid!]),
  ]);
}

const groupObjects = (index: number) => [
  `pod/${NAME}-${index}`,
  `pod/${NAME}-${index}-1`,
  `pod/${NAME}-${index}-2`,
  `sts/${NAME}-${index}`,
];

describe('two clusters on one Temporal namespace, the same LWS in each', function () {
  this.timeout(300_000);
  let temporal: RunningTemporal;
  let connection: Connection;
  let client: Client;
  let floorStartedHere = false;
  /** The workflow whose activity the local cluster's worker refused. */
  let refusedId = '';
  const sides: Side[] = [];

  before(async function () {
    this.timeout(300_000);
    await ensureCluster();
    const started = await floorCluster('up');
    floorStartedHere = !/cluster already running/.test(started);
    temporal = await startTemporal('dev-server', createLogger('temporal'));
    connection = await Connection.connect({ address: temporal.address });
    client = new Client({ connection, namespace: temporal.namespace });
    const logDir = testLogDir;
    for (const [label, kubeconfig] of [
      ['local', kubeconfigPath],
      ['floor', localClusterPaths({ ...process.env, LWS_KUBERNETES: 'floor' }).kubeconfigPath],
    ] as const) {
      const kc = label === 'local' ? localKubeConfig() : new k8s.KubeConfig();
      if (label === 'floor') kc.loadFromFile(kubeconfig);
      const core = kc.makeApiClient(k8s.CoreV1Api);
      await core.deleteNamespace({ name: NAMESPACE }).catch(() => undefined);
      await waitFor(
        'the namespace of an earlier run gone',
        () =>
          core.readNamespace({ name: NAMESPACE }).then(
            () => undefined,
            () => true,
          ),
        { timeoutMs: 60_000 },
      );
      await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
      await waitFor(
        'default ServiceAccount',
        () => core.readNamespacedServiceAccount({ name: 'default', namespace: NAMESPACE }),
        {
          timeoutMs: 30_000,
        },
      );
      // No cluster name and no task queue: each controller derives both from its cluster.
      const { LWS_CLUSTER_NAME: _name, TEMPORAL_TASK_QUEUE: _queue, ...inherited } = process.env;
      const env = {
        ...inherited,
        KUBECONFIG: kubeconfig,
        TEMPORAL_ADDRESS: temporal.address,
        TEMPORAL_NAMESPACE: temporal.namespace,
        LOG_LEVEL: 'debug',
        LOG_FORMAT: 'json',
      };
      const processes = await Promise.all([
        startControllerProcess('worker', env, join(logDir, `two-clusters-${label}`)),
        startControllerProcess('trigger', env, join(logDir, `two-clusters-${label}`)),
      ]);
      sides.push({
        label,
        kubeconfig,
        kc,
        lws: new LwsClient(kc, NAMESPACE),
        cluster: await resolveClusterName(kc, {}),
        processes,
      });
    }
  });

  after(async function () {
    this.timeout(120_000);
    await Promise.all(sides.flatMap((s) => s.processes.map((p) => p.stop())));
    for (const side of sides) {
      await side.kc
        .makeApiClient(k8s.CoreV1Api)
        .deleteNamespace({ name: NAMESPACE })
        .catch(() => undefined);
    }
    await connection?.close();
    await temporal?.stop();
    if (floorStartedHere) await floorCluster('down');
  });

  it('each cluster has a name of its own, from its kube-system namespace', () => {
    const [a, b] = sides;
    assert.match(a!.cluster, /^[0-9a-f-]{36}$/);
    assert.notEqual(a!.cluster, b!.cluster);
  });

  it("each controller provisions its own cluster's LWS, under IDs and on a task queue that name its cluster", async () => {
    await Promise.all(sides.map((s) => s.lws.create(lwsOf())));
    await Promise.all(sides.map((s) => s.lws.waitForGroups(NAME, 2, 3, 120_000)));
    for (const side of sides) {
      const runs = [];
      const prefix = lwsWorkflowIdPrefix(side.cluster, { namespace: NAMESPACE, name: NAME });
      for await (const wf of client.workflow.list({ query: `WorkflowId STARTS_WITH "${prefix}"` })) runs.push(wf);
      assert.deepEqual(
        runs.map((r) => r.type).sort(),
        ['provisionGroup', 'provisionGroup', 'reconcileLeaderWorkerSet'],
        `${side.label}: one reconcile and a provisioning per group`,
      );
      assert.ok(
        runs.every((r) => r.taskQueue === `lws-temporal-${side.cluster}`),
        `${side.label}: ${runs.map((r) => r.taskQueue).join(', ')}`,
      );
    }
  });

  it('a Parallel rebuild in each cluster rebuilds that group once, in its own cluster, and nothing else', async () => {
    const [a, b] = sides as [Side, Side];
    const before = await Promise.all([snapshot(a), snapshot(b)]);
    // Group 0 here, group 1 there, at once.
    const rebuilt = [0, 1];
    await Promise.all([
      a.lws.core.deleteNamespacedPod({ namespace: NAMESPACE, name: `${NAME}-0` }),
      b.lws.core.deleteNamespacedPod({ namespace: NAMESPACE, name: `${NAME}-1` }),
    ]);
    for (const [i, side] of [a, b].entries()) {
      const group = rebuilt[i]!;
      const oldLeader = before[i]![`pod/${NAME}-${group}`]!;
      const id = workflowId(
        side.cluster,
        { namespace: NAMESPACE, name: NAME },
        {
          kind: 'teardown',
          groupIndex: group,
          oldLeaderUid: oldLeader,
        },
      );
      // The group back first, then its teardown's end (a rebuild's ends once the replacement is Ready), each wait
      // bounded and polled with plain calls.
      await side.lws.waitForGroups(NAME, 2, 3, 120_000);
      const handle = client.workflow.getHandle(id);
      await waitFor(
        `${side.label}: teardown ${id} completed after its group was Ready`,
        async () => ((await handle.describe()).status.name === 'COMPLETED' ? true : undefined),
        { timeoutMs: 60_000, intervalMs: 500 },
      );
      const result = await handle.result();
      assert.equal(result.policy, 'Parallel', side.label);
      assert.equal(result.lifecycle, 'rebuild', side.label);
      const after = await snapshot(side);
      for (const [object, uid] of Object.entries(before[i]!)) {
        if (groupObjects(group).includes(object))
          assert.notEqual(after[object], uid, `${side.label}: ${object} rebuilt`);
        else assert.equal(after[object], uid, `${side.label}: ${object} untouched`);
      }
      // Once: one teardown of the group, and one provisioning of each of its leaders.
      const prefix = `${lwsWorkflowIdPrefix(side.cluster, { namespace: NAMESPACE, name: NAME })}group-${group}/`;
      const runs = [];
      for await (const wf of client.workflow.list({ query: `WorkflowId STARTS_WITH "${prefix}"` })) runs.push(wf.type);
      assert.deepEqual(runs.sort(), ['provisionGroup', 'provisionGroup', 'teardownGroup'], side.label);
    }
  });

  it("a worker refuses an activity of the other cluster's workflow, and touches nothing", async () => {
    const [a, b] = sides as [Side, Side];
    const before = await snapshot(a);
    // A teardown of the floor cluster's group 0, sent to the local cluster's task queue, naming the local
    // cluster's live leader: only the cluster in its ID tells the two apart.
    const leader = (await a.lws.pod(`${NAME}-0`))!;
    const input: TeardownGroupInput = {
      ref: { namespace: NAMESPACE, name: NAME },
      groupIndex: 0,
      leader: { namespace: NAMESPACE, name: `${NAME}-0`, uid: leader.metadata!.uid! },
      lifecycle: 'rebuild',
      policy: 'Parallel',
    };
    const id = workflowId(b.cluster, input.ref, { kind: 'teardown', groupIndex: 0, oldLeaderUid: 'not-a-leader' });
    refusedId = id;
    const handle = await client.workflow.start('teardownGroup', {
      taskQueue: `lws-temporal-${a.cluster}`,
      workflowId: id,
      args: [input],
    });
    await assert.rejects(handle.result(), (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError, String(err));
      let refusal: unknown = err.cause;
      while (refusal instanceof ActivityFailure) refusal = refusal.cause;
      assert.ok(refusal instanceof ApplicationFailure, String(refusal));
      assert.equal(refusal.type, OTHER_CLUSTER_FAILURE);
      assert.equal(refusal.nonRetryable, true);
      assert.match(
        refusal.message,
        new RegExp(`acts on cluster ${b.cluster}, and this worker serves cluster ${a.cluster}`),
      );
      return true;
    });
    assert.deepEqual(await snapshot(a), before, 'nothing changed in the local cluster');
  });

  it("prints one log format, the SDK's lines and the refused activity's among them", async () => {
    for (const side of sides) {
      for (const p of side.processes) {
        const lines = p.lines.filter((l) => l.trim() !== '');
        assert.ok(lines.length > 0, `${side.label} ${p.role}: no output`);
        for (const line of lines) {
          const parsed = (() => {
            try {
              return JSON.parse(line) as Record<string, unknown>;
            } catch {
              return undefined;
            }
          })();
          assert.ok(parsed && typeof parsed.msg === 'string' && parsed.component, `${side.label} ${p.role}: ${line}`);
        }
      }
    }
    // The SDK's own line about the refused activity, in that format (it forwards its lines every 100 ms or so).
    const local = sides[0]!.processes.find((p) => p.role === 'worker')!;
    await waitFor(
      "the SDK's line about the refused activity",
      async () =>
        local.lines.some((l) => {
          const entry = JSON.parse(l) as { msg?: string; workflowId?: string };
          return entry.msg === 'Activity failed' && entry.workflowId === refusedId ? true : undefined;
        }) || undefined,
      { timeoutMs: 10_000 },
    );
  });
});
