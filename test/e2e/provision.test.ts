import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { waitFor } from '../../src/dev-server/processes.js';
import { useControllerSuite } from '../fixtures/controller-suite.js';
import { exampleLws, isReady } from '../fixtures/lws.js';

/** The controller end to end: real cluster, real Temporal dev server, the worker and trigger processes. */
describe('controller: LeaderWorkerSet provisioning (real cluster, dev server, worker and trigger processes)', function () {
  this.timeout(240_000);
  const suite = useControllerSuite('e2e-provision');

  const envOf = (pod: k8s.V1Pod) =>
    Object.fromEntries(
      (pod.spec?.containers[0]?.env ?? []).map((e) => [e.name, e.value ?? `<from ${e.valueFrom ? 'field' : '?'}>`]),
    );

  it('builds the object graph of the sample: Service, leader StatefulSet, one worker StatefulSet per group', async () => {
    const created = await suite.lws.create(exampleLws('parallel'));
    const name = created.metadata.name!;
    const pods = await suite.lws.waitForGroups(name, 2, 4);
    assert.deepEqual(pods.map((p) => p.metadata!.name).sort(), [
      `${name}-0`,
      `${name}-0-1`,
      `${name}-0-2`,
      `${name}-0-3`,
      `${name}-1`,
      `${name}-1-1`,
      `${name}-1-2`,
      `${name}-1-3`,
    ]);

    const svc = await suite.lws.core.readNamespacedService({ name, namespace: suite.namespace });
    assert.equal(svc.spec?.clusterIP, 'None');
    assert.equal(svc.spec?.publishNotReadyAddresses, true);
    assert.equal(svc.metadata?.ownerReferences?.[0]?.uid, created.metadata.uid);

    const leaders = await suite.lws.statefulSet(name);
    assert.equal(leaders?.spec?.replicas, 2);
    assert.equal(leaders?.spec?.podManagementPolicy, 'Parallel');
    assert.equal(leaders?.metadata?.ownerReferences?.[0]?.uid, created.metadata.uid);
    assert.equal(leaders?.metadata?.ownerReferences?.[0]?.controller, true);

    for (const i of [0, 1]) {
      const leader = pods.find((p) => p.metadata!.name === `${name}-${i}`)!;
      const workers = (await suite.lws.statefulSet(`${name}-${i}`))!;
      assert.equal(workers.spec?.replicas, 3);
      assert.equal(workers.spec?.ordinals?.start, 1);
      assert.deepEqual(
        workers.metadata?.ownerReferences?.map((o) => [o.kind, o.uid, o.controller]),
        [['Pod', leader.metadata!.uid, true]],
      );
      assert.equal(leader.metadata?.labels?.['leaderworkerset.sigs.k8s.io/group-index'], String(i));
      assert.equal(leader.metadata?.annotations?.['leaderworkerset.sigs.k8s.io/pod-termination-policy'], 'Parallel');
      const worker = pods.find((p) => p.metadata!.name === `${name}-${i}-2`)!;
      assert.equal(worker.metadata?.labels?.['leaderworkerset.sigs.k8s.io/group-index'], String(i));
      assert.equal(
        worker.metadata?.labels?.['leaderworkerset.sigs.k8s.io/group-key'],
        leader.metadata?.labels?.['leaderworkerset.sigs.k8s.io/group-key'],
      );
      const env = envOf(worker);
      assert.equal(env.LWS_LEADER_ADDRESS, `${name}-${i}.${name}.${suite.namespace}`);
      assert.equal(env.LWS_GROUP_SIZE, '4');
    }

    const status = await waitFor(
      'status readyReplicas 2',
      async () => {
        const s = (await suite.lws.get(name))?.status;
        return s?.readyReplicas === 2 ? s : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(status.replicas, 2);
    assert.equal(status.conditions?.find((c) => c.type === 'Available')?.status, 'True');
    assert.equal(
      status.hpaPodSelector,
      `leaderworkerset.sigs.k8s.io/name=${name},leaderworkerset.sigs.k8s.io/worker-index=0`,
    );
  });

  it('labels each worker pod with its worker-index once the group is up', async () => {
    const name = 'leaderworkerset-parallel-termination';
    await waitFor(
      'worker-index labels on every worker pod',
      async () => {
        const workers = (await suite.lws.pods(name)).filter((p) => p.metadata!.name!.split('-').length === 5);
        return workers.length === 6 &&
          workers.every(
            (p) =>
              p.metadata?.labels?.['leaderworkerset.sigs.k8s.io/worker-index'] === p.metadata!.name!.split('-').pop(),
          )
          ? true
          : undefined;
      },
      { timeoutMs: 30_000 },
    );
  });

  it('scaling to 3 adds a group', async () => {
    const name = 'leaderworkerset-parallel-termination';
    await suite.lws.patchSpec(name, { replicas: 3 });
    const pods = await suite.lws.waitForGroups(name, 3, 4);
    assert.equal(pods.length, 12);
    assert.equal((await suite.lws.statefulSet(`${name}-2`))?.spec?.replicas, 3);
    await waitFor(
      'status readyReplicas 3',
      async () => ((await suite.lws.get(name))?.status?.readyReplicas === 3 ? true : undefined),
      {
        timeoutMs: 30_000,
      },
    );
    await suite.lws.patchSpec(name, { replicas: 2 });
    await suite.lws.waitForGroups(name, 2, 4, 120_000);
  });

  it('runs each provisioning as a workflow with a readable ID and summary, once per leader', async () => {
    const name = 'leaderworkerset-parallel-termination';
    const leader0 = (await suite.lws.pod(`${name}-0`))!;
    const id = `lws/${suite.controller.cluster}/${suite.namespace}/${name}/group-0/provision/${leader0.metadata!.uid}`;
    const handle = suite.controller.client.workflow.getHandle(id);
    const result = (await handle.result()) as { outcome: string };
    assert.equal(result.outcome, 'provisioned');
    const description = await handle.describe();
    assert.equal(await description.staticSummary(), `provision group 0 of ${suite.namespace}/${name}`);
  });

  it('a restarted trigger lists again and starts nothing twice', async () => {
    const name = 'leaderworkerset-parallel-termination';
    const before = (await suite.lws.pods(name)).map((p) => p.metadata!.uid).sort();
    await suite.controller.trigger.stop();
    await suite.controller.startTrigger();
    await new Promise((r) => setTimeout(r, 3000));
    const started = suite.controller.trigger.lines.filter(
      (l) => l.includes('workflow started') && l.includes('/provision/'),
    );
    assert.deepEqual(started, [], 'no provisioning workflow is started again');
    assert.deepEqual((await suite.lws.pods(name)).map((p) => p.metadata!.uid).sort(), before, 'no pod was recreated');
  });

  it('RecreateGroupOnPodRestart: a worker container restart recreates the whole group', async () => {
    const name = 'leaderworkerset-parallel-termination';
    const oldLeader = (await suite.lws.pod(`${name}-1`))!;
    await suite.lws.reportContainerRestart(`${name}-1-2`);
    const newLeader = await waitFor(
      'a new leader for group 1',
      async () => {
        const pod = await suite.lws.pod(`${name}-1`);
        return pod && pod.metadata?.uid !== oldLeader.metadata?.uid ? pod : undefined;
      },
      { timeoutMs: 60_000 },
    );
    await suite.lws.waitForGroups(name, 2, 4);
    const workers = await suite.lws.statefulSet(`${name}-1`);
    assert.equal(workers?.metadata?.ownerReferences?.[0]?.uid, newLeader.metadata?.uid);
    assert.ok(isReady(await suite.lws.pod(`${name}-1`)));
  });

  it('restartPolicy None: a container restart leaves the group alone', async () => {
    const created = await suite.lws.create({
      ...exampleLws('sequential'),
      metadata: { name: 'no-recreate' },
      spec: {
        ...exampleLws('sequential').spec,
        replicas: 1,
        leaderWorkerTemplate: { ...exampleLws('sequential').spec.leaderWorkerTemplate, size: 2, restartPolicy: 'None' },
      },
    });
    const name = created.metadata.name!;
    await suite.lws.waitForGroups(name, 1, 2);
    const leader = (await suite.lws.pod(`${name}-0`))!;
    await suite.lws.reportContainerRestart(`${name}-0-1`);
    await new Promise((r) => setTimeout(r, 4000));
    assert.equal((await suite.lws.pod(`${name}-0`))?.metadata?.uid, leader.metadata?.uid);
  });

  it('size 1 makes no worker StatefulSet', async () => {
    const base = exampleLws('sequential');
    const created = await suite.lws.create({
      ...base,
      metadata: { name: 'solo' },
      spec: { ...base.spec, replicas: 2, leaderWorkerTemplate: { ...base.spec.leaderWorkerTemplate, size: 1 } },
    });
    await suite.lws.waitForGroups(created.metadata.name!, 2, 1);
    assert.equal(await suite.lws.statefulSet('solo-0'), undefined);
    assert.equal(await suite.lws.statefulSet('solo-1'), undefined);
  });
});
