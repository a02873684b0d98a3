// Dead nodes on the local cluster with the real controller (docs/operations.md, "Dead nodes"): a group whose pods are
// stuck Terminating on a node whose kubelet is gone, and which is then deleted or tainted out-of-service, is torn
// down without waiting for that kubelet: the teardown force-deletes exactly those pods once their grace period is
// over, says so in a Warning Event, and the replacement group comes up on the remaining nodes. A pod of the same
// group on a healthy node goes with its grace period, and NotReady alone is no signal unless the LWS opted in.
//
// Each group has its leader and one worker on the doomed node and its other worker on a steady one (the worker
// template spreads them by hostname); a spare node, cordoned until the doomed one dies, takes the replacement. The
// grace period is short so that the teardown's force delete comes well before podgc's (40 s after a node is deleted,
// or once a node tainted out-of-service turns NotReady), and the Event names who did it.
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import {
  FORCE_DELETE_MARGIN_MS,
  TAINT_OUT_OF_SERVICE,
  type LeaderWorkerSet,
  type PodTerminationPolicy,
} from '../../src/model/index.js';
import { NODE_LOOK_INTERVAL_MS } from '../../src/activities/dead-nodes.js';
import { ExtraFakeNodes, FAKE_NODE_CAPACITY } from '../../tools/stack/fake-nodes.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { sampleLeaderWorkerSet } from '../../tools/stack/sample-lws.js';
import type { TeardownGroupResult } from '../../src/workflows/teardown-group.js';
import { useControllerSuite } from '../fixtures/controller-suite.js';
import { isReady } from '../fixtures/lws.js';

const G = 3; // terminationGracePeriodSeconds
const IMAGE = 'registry.invalid/ai:1';
const LEADER_POOL = 'lws-temporal.test/dead-node-leaders';
const WORKER_POOL = 'lws-temporal.test/dead-node-workers';
const ROLE = 'lws-temporal.test/dead-node-role';

/**
 * Leaders only on the pool's leader nodes, workers on its worker nodes, never two of the group's workers on one. The
 * pool is the LWS's name unless given.
 */
function lwsOf(
  name: string,
  policy: PodTerminationPolicy,
  size: number,
  opts: { pool?: string; notReadySeconds?: number } = {},
): LeaderWorkerSet {
  const pool = opts.pool ?? name;
  const lws = sampleLeaderWorkerSet({ name, policy, replicas: 1, size, graceSeconds: G, image: IMAGE });
  const lwt = lws.spec.leaderWorkerTemplate;
  lwt.leaderTemplate!.spec!.nodeSelector = { [LEADER_POOL]: pool };
  lwt.workerTemplate.metadata = { labels: { [ROLE]: `${name}-worker` } };
  lwt.workerTemplate.spec!.nodeSelector = { [WORKER_POOL]: pool };
  lwt.workerTemplate.spec!.affinity = {
    podAntiAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: [
        { labelSelector: { matchLabels: { [ROLE]: `${name}-worker` } }, topologyKey: 'kubernetes.io/hostname' },
      ],
    },
  };
  if (opts.notReadySeconds !== undefined) lws.spec.forceDeleteOnNodeNotReadySeconds = opts.notReadySeconds;
  return lws;
}

describe('dead nodes: pods stuck Terminating with the real controller', function () {
  this.timeout(300_000);
  const suite = useControllerSuite('e2e-dead-node', { recordPods: true });
  const created: ExtraFakeNodes[] = [];

  after(async () => {
    // A failed case may leave pods on a dead node that nothing finishes: gone at once, then the nodes.
    for (const nodes of created) {
      for (const node of nodes.names) {
        const left = await suite.lws.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` });
        for (const p of left.items) {
          const ref = { name: p.metadata!.name!, namespace: p.metadata!.namespace! };
          await suite.lws.core.deleteNamespacedPod({ ...ref, gracePeriodSeconds: 0 }).catch(() => undefined);
        }
        await suite.lws.core.deleteNode({ name: node }).catch(() => undefined);
      }
    }
  });

  /** A doomed, a steady and a spare (cordoned) node for the LWS `name`. */
  async function nodesFor(name: string) {
    const [doomed, steady, spare] = [`${name}-doomed`, `${name}-steady`, `${name}-spare`];
    const nodes = new ExtraFakeNodes(
      suite.controller.kc,
      [
        { name: doomed, labels: { [LEADER_POOL]: name, [WORKER_POOL]: name } },
        { name: steady, labels: { [WORKER_POOL]: name } },
        { name: spare, labels: { [LEADER_POOL]: name, [WORKER_POOL]: name } },
      ],
      FAKE_NODE_CAPACITY,
    );
    created.push(nodes);
    await nodes.create();
    await nodes.setSchedulable(false, [spare]);
    return { nodes, doomed, steady, spare };
  }

  const nodeOf = (pods: k8s.V1Pod[]) => new Map(pods.map((p) => [p.metadata!.name!, p.spec!.nodeName!]));

  /** The teardown of this leader, once it has ended (its result comes once the replacement group is Ready). */
  async function teardownOf(name: string, leaderUid: string): Promise<TeardownGroupResult> {
    const handle = suite.controller.client.workflow.getHandle(
      `lws/${suite.controller.cluster}/${suite.namespace}/${name}/group-0/teardown/${leaderUid}`,
    );
    await waitFor(`the teardown of ${name}`, () => handle.describe().then(() => true), {
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    return (await handle.result()) as TeardownGroupResult;
  }

  async function forceDeletedEvents(name: string) {
    const events = await suite.lws.core.listNamespacedEvent({ namespace: suite.namespace });
    return events.items.filter((e) => e.reason === 'PodForceDeleted' && e.involvedObject.name === name);
  }

  /** Gone, and its nodes with it, so that the next case starts from the cluster's own nodes. */
  async function removeLws(name: string, nodes: ExtraFakeNodes) {
    await suite.lws.delete(name);
    await waitFor(`${name}'s pods gone`, async () => ((await suite.lws.pods(name)).length === 0 ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    await nodes.remove(60_000);
  }

  const deaths = [
    {
      what: 'deleted',
      signal: 'node gone',
      // Nothing deletes the pods of a deleted node but podgc, 40 s on: the leader goes as a user or a drain deletes it.
      kill: async (nodes: ExtraFakeNodes, node: string, leader: k8s.V1Pod) => {
        await suite.lws.core.deleteNode({ name: node });
        await suite.lws.core.deleteNamespacedPod({ name: leader.metadata!.name!, namespace: suite.namespace });
      },
    },
    {
      what: 'tainted out-of-service',
      signal: 'node tainted out-of-service',
      // The taint-eviction controller deletes every pod of the node: the failure that starts the rebuild.
      kill: (nodes: ExtraFakeNodes, node: string) =>
        nodes.taint(node, { key: TAINT_OUT_OF_SERVICE, value: 'nodeshutdown', effect: 'NoExecute' }),
    },
  ];

  /** What one case saw, for its assertions: the group before, the teardown's result, its Events, the group after. */
  interface Seen {
    name: string;
    doomed: string;
    spare: string;
    before: k8s.V1Pod[];
    onDoomed: string[];
    onSteady: k8s.V1Pod;
    killedAt: number;
    result: TeardownGroupResult;
    warnings: k8s.CoreV1Event[];
    after: k8s.V1Pod[];
  }

  /** A group of 3 on a doomed, a steady and a spare node; the doomed node dies, the group is rebuilt. */
  async function rebuildOffDeadNode(policy: PodTerminationPolicy, death: (typeof deaths)[number]): Promise<Seen> {
    const name = `${policy === 'Sequential' ? 'seq' : 'par'}-${death.what === 'deleted' ? 'gone' : 'oos'}`;
    const { nodes, doomed, steady, spare } = await nodesFor(name);
    await suite.lws.create(lwsOf(name, policy, 3));
    const before = await suite.lws.waitForGroups(name, 1, 3);
    const leader = before.find((p) => p.metadata!.name === `${name}-0`)!;
    const onDoomed = before.filter((p) => p.spec!.nodeName === doomed).map((p) => p.metadata!.name!);
    const onSteady = before.find((p) => p.spec!.nodeName === steady)!;

    // The kubelet dies, the node is cordoned and the spare opened; then the node is deleted or tainted.
    await nodes.setKubelet(doomed, false);
    await nodes.setSchedulable(false, [doomed]);
    await nodes.setSchedulable(true, [spare]);
    const killedAt = Date.now();
    await death.kill(nodes, doomed, leader);

    const result = await teardownOf(name, leader.metadata!.uid!);
    const warnings = await forceDeletedEvents(name);
    const after = await suite.lws.waitForGroups(name, 1, 3);
    await removeLws(name, nodes);
    return { name, doomed, spare, before, onDoomed, onSteady, killedAt, result, warnings, after };
  }

  // The four cases share nothing (each its LWS and nodes), so they run at once; each test reads what its case saw.
  const cases = new Map<string, Promise<Seen>>();
  const caseOf = (policy: PodTerminationPolicy, what: string) => {
    const key = `${policy}/${what}`;
    if (!cases.has(key)) {
      const death = deaths.find((d) => d.what === what)!;
      const seen = rebuildOffDeadNode(policy, death);
      seen.catch(() => undefined); // reported by its test
      cases.set(key, seen);
    }
    return cases.get(key)!;
  };
  const policies = ['Sequential', 'Parallel'] as const;

  for (const policy of policies) {
    for (const death of deaths) {
      it(`${policy}, node ${death.what}: its pods are force-deleted after their grace period, named in a Warning Event; the replacement is Ready on the other nodes`, async () => {
        for (const p of policies) for (const d of deaths) void caseOf(p, d.what);
        const { doomed, spare, before, onDoomed, onSteady, killedAt, result, warnings, after, name } = await caseOf(
          policy,
          death.what,
        );
        const placed = nodeOf(before);
        assert.equal(placed.get(`${name}-0`), doomed);
        assert.deepEqual(
          [...placed.values()].filter((n) => n !== doomed),
          [onSteady.spec!.nodeName],
          JSON.stringify([...placed]),
        );
        assert.equal(result.policy, policy);
        assert.equal(result.lifecycle, 'rebuild');
        // Exactly the doomed node's pods, by this controller, for that signal (the result lists only the pods its
        // own delete removed), before podgc could have.
        const expected = onDoomed.map((pod) => ({ pod, node: doomed, signal: death.signal })).sort(byPod);
        assert.deepEqual([...(result.forceDeleted ?? [])].sort(byPod), expected, JSON.stringify(result.timeline));
        assert.deepEqual(
          warnings.map((e) => [e.type, e.message?.replace(/^.*: pod force-deleted: /, '')]).sort(),
          expected.map((f) => ['Warning', `${f.pod} on node ${doomed}: ${death.signal}`]),
        );
        assert.equal(result.timeline.filter((e) => e.event === 'pod force-deleted').length, onDoomed.length);
        for (const pod of before.filter((p) => p.spec!.nodeName === doomed)) {
          const rec = suite.recorder.byUid(pod.metadata!.uid!)!;
          const terminatedMs = rec.goneAt! - rec.terminatingAt!;
          assert.ok(
            terminatedMs >= G * 1000,
            `${rec.name} force-deleted only after its grace period: ${terminatedMs} ms`,
          );
          assert.ok(rec.goneAt! - killedAt < 35_000, `${rec.name} gone ${rec.goneAt! - killedAt} ms after the kill`);
        }
        // The worker on the healthy node went with its grace period, finished by its kubelet.
        const healthy = suite.recorder.byUid(onSteady.metadata!.uid!)!;
        assert.ok(healthy.goneAt! - healthy.terminatingAt! >= (G - 1) * 1000, JSON.stringify(healthy));
        assert.ok(!warnings.some((e) => e.message?.includes(onSteady.metadata!.name!)), 'no Event names it');

        // The replacement group, Ready on the remaining nodes.
        assert.ok(
          after.every((p) => p.spec!.nodeName !== doomed && isReady(p)),
          JSON.stringify([...nodeOf(after)]),
        );
        assert.equal(nodeOf(after).get(`${name}-0`), spare);
        assert.ok(result.recoveryMs !== undefined, 'the teardown saw the replacement Ready');
      });
    }
  }

  it('NotReady alone: a pod is force-deleted only where the LWS opted in (forceDeleteOnNodeNotReadySeconds)', async () => {
    const pool = 'notready';
    const { nodes, doomed, spare } = await nodesFor(pool);
    // Two leaders alone on the node that goes NotReady: one of an LWS that opted in, one of an LWS that did not.
    const [optedIn, plain] = ['nr-in', 'nr-out'];
    await suite.lws.create(lwsOf(optedIn, 'Sequential', 1, { pool, notReadySeconds: 2 }));
    await suite.lws.create(lwsOf(plain, 'Sequential', 1, { pool }));
    const leaders = [
      (await suite.lws.waitForGroups(optedIn, 1, 1))[0]!,
      (await suite.lws.waitForGroups(plain, 1, 1))[0]!,
    ];
    assert.deepEqual(
      leaders.map((l) => l.spec!.nodeName),
      [doomed, doomed],
    );

    // The kubelet stops, and the node shows it: Ready False (KWOK, while it still manages the node, sets it back).
    await nodes.setKubelet(doomed, false);
    await waitFor(
      `${doomed} NotReady`,
      async () => {
        await nodes.markNotReady(doomed);
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const ready = (await suite.lws.core.readNode({ name: doomed })).status?.conditions?.find(
          (c) => c.type === 'Ready',
        );
        return ready?.status === 'False' ? true : undefined;
      },
      { timeoutMs: 30_000 },
    );
    await nodes.setSchedulable(false, [doomed]);
    await nodes.setSchedulable(true, [spare]);
    for (const l of leaders)
      await suite.lws.core.deleteNamespacedPod({ name: l.metadata!.name!, namespace: suite.namespace });

    // Opted in: force-deleted once past its grace period, the node NotReady for at least 2 s by then.
    const opted = await teardownOf(optedIn, leaders[0]!.metadata!.uid!);
    assert.equal(opted.forceDeleted?.length, 1, JSON.stringify(opted.timeline));
    assert.equal(opted.forceDeleted![0]!.node, doomed);
    assert.match(
      opted.forceDeleted![0]!.signal,
      /^node NotReady for \d+ s \(spec.forceDeleteOnNodeNotReadySeconds 2\)$/,
    );
    assert.equal((await forceDeletedEvents(optedIn)).length, 1);

    // Not opted in: still Terminating well past its grace period, its node looked at several times meanwhile.
    const plainLeader = leaders[1]!;
    const deletedAt = Date.parse(String(suite.recorder.byUid(plainLeader.metadata!.uid!)!.deletionTimestamp));
    const lookedLongEnough = deletedAt + FORCE_DELETE_MARGIN_MS + 3 * NODE_LOOK_INTERVAL_MS - Date.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, lookedLongEnough)));
    const still = await suite.lws.pod(plainLeader.metadata!.name!);
    assert.equal(still?.metadata?.uid, plainLeader.metadata!.uid, 'the old leader is still there');
    assert.ok(still?.metadata?.deletionTimestamp, 'terminating');
    assert.deepEqual(await forceDeletedEvents(plain), []);

    // Its kubelet comes back and finishes it: the teardown ends with nothing force-deleted.
    const backAt = Date.now();
    await nodes.setKubelet(doomed, true);
    const result = await teardownOf(plain, plainLeader.metadata!.uid!);
    assert.equal(result.forceDeleted, undefined);
    assert.ok(suite.recorder.byUid(plainLeader.metadata!.uid!)!.goneAt! >= backAt, 'gone once its kubelet was back');
    for (const l of [optedIn, plain]) {
      const [replacement] = await suite.lws.waitForGroups(l, 1, 1);
      assert.equal(replacement!.spec!.nodeName, spare);
    }
    await suite.lws.delete(optedIn);
    await removeLws(plain, nodes);
  });
});

const byPod = (a: { pod: string }, b: { pod: string }) => a.pod.localeCompare(b.pod);
