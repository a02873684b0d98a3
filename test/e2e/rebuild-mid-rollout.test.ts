// A group rebuilt in the middle of a rolling update keeps one template across its leader and its workers (upstream
// #280, fixed upstream by building workers from the leader's ControllerRevision), under both termination policies,
// on the real stack. The user's partition holds group 0 on the old template while group 1 rolls; group 0's leader is
// then deleted: the leader StatefulSet brings it back on the old template, and its new workers must be the old ones
// too. Lowering the partition then finishes the rollout, and the revisions no group uses are pruned.
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import {
  LABEL_NAME,
  LABEL_TEMPLATE_REVISION_HASH,
  type LeaderWorkerSet,
  type PodTerminationPolicy,
} from '../../src/model/index.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { useControllerSuite } from '../fixtures/controller-suite.js';
import { isReady } from '../fixtures/lws.js';

const template = (version: string) => ({
  spec: {
    terminationGracePeriodSeconds: 2,
    containers: [{ name: 'main', image: 'registry.invalid/ai:1', env: [{ name: 'MODEL_VERSION', value: version }] }],
  },
});

function lwsOf(name: string, policy: PodTerminationPolicy): LeaderWorkerSet {
  return {
    apiVersion: 'leaderworkerset.x-k8s.io/v1',
    kind: 'LeaderWorkerSet',
    metadata: { name },
    spec: {
      replicas: 2,
      podTerminationPolicy: policy,
      rolloutStrategy: { rollingUpdateConfiguration: { partition: 1 } },
      leaderWorkerTemplate: { size: 3, workerTemplate: template('v1') },
    },
  };
}

const hashOf = (o: { metadata?: k8s.V1ObjectMeta } | undefined) => o?.metadata?.labels?.[LABEL_TEMPLATE_REVISION_HASH];
const versionOf = (spec: k8s.V1PodSpec | undefined) =>
  spec?.containers[0]?.env?.find((e) => e.name === 'MODEL_VERSION')?.value;

describe('controller: a group rebuilt mid-rollout keeps one template (ControllerRevisions)', function () {
  this.timeout(300_000);
  const suite = useControllerSuite('e2e-mid-rollout');
  let apps: k8s.AppsV1Api;

  before(() => {
    apps = suite.controller.kc.makeApiClient(k8s.AppsV1Api);
  });

  /** The LWS's own: the StatefulSet controller keeps revisions of its own, with the pod template's labels. */
  const revisions = async (name: string) =>
    (
      await apps.listNamespacedControllerRevision({
        namespace: suite.namespace,
        labelSelector: `${LABEL_NAME}=${name}`,
      })
    ).items.filter((r) => r.metadata?.ownerReferences?.some((o) => o.controller && o.kind === 'LeaderWorkerSet'));

  for (const policy of ['Sequential', 'Parallel'] as const) {
    it(`${policy}: the rebuilt group's workers come from its leader's revision, not the new template`, async () => {
      const name = `mid-${policy.toLowerCase()}`;
      await suite.lws.create(lwsOf(name, policy));
      await suite.lws.waitForGroups(name, 2, 3);
      const v1 = hashOf(await suite.lws.statefulSet(name));
      assert.ok(v1);
      assert.deepEqual(
        (await revisions(name)).map((r) => r.metadata?.name),
        [`${name}-${v1}`],
        'one ControllerRevision, named after the hash',
      );

      // A new template: group 1 (above the partition) rolls, group 0 stays on v1.
      await suite.lws.patchSpec(name, { leaderWorkerTemplate: { size: 3, workerTemplate: template('v2') } });
      const v2 = await waitFor(
        `group 1 of ${name} on the new template`,
        async () => {
          const hash = hashOf(await suite.lws.statefulSet(name));
          const workers = await suite.lws.statefulSet(`${name}-1`);
          return hash !== v1 && hashOf(await suite.lws.pod(`${name}-1`)) === hash && hashOf(workers) === hash
            ? hash
            : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 500 },
      );
      assert.ok(v2);
      await suite.lws.waitForGroups(name, 2, 3);
      assert.equal(versionOf((await suite.lws.statefulSet(`${name}-1`))?.spec?.template.spec), 'v2');
      const before = (await suite.lws.pod(`${name}-0`))!;
      assert.equal(hashOf(before), v1, 'group 0 is below the partition');
      assert.deepEqual(
        (await revisions(name)).map((r) => r.metadata?.name).sort(),
        [`${name}-${v1}`, `${name}-${v2}`].sort(),
      );

      // Group 0 rebuilt mid-rollout.
      await suite.lws.core.deleteNamespacedPod({ namespace: suite.namespace, name: `${name}-0` });
      const rebuilt = await waitFor(
        `group 0 of ${name} rebuilt`,
        async () => {
          const leader = await suite.lws.pod(`${name}-0`);
          const workers = await suite.lws.statefulSet(`${name}-0`);
          const ownedByNew = workers?.metadata?.ownerReferences?.[0]?.uid === leader?.metadata?.uid;
          return leader && leader.metadata?.uid !== before.metadata?.uid && isReady(leader) && ownedByNew
            ? { leader, workers: workers! }
            : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 500 },
      );
      assert.equal(hashOf(rebuilt.leader), v1, 'the leader StatefulSet recreates it on the old template');
      assert.equal(versionOf(rebuilt.leader.spec), 'v1');
      assert.equal(hashOf(rebuilt.workers), v1, "the workers carry the leader's revision");
      assert.equal(versionOf(rebuilt.workers.spec?.template.spec), 'v1', "and run the leader's template");
      assert.equal(hashOf(rebuilt.workers.spec?.template), v1);
      const pods = await suite.lws.waitForGroups(name, 2, 3);
      for (const pod of pods.filter((p) => p.metadata?.name?.startsWith(`${name}-0`))) {
        assert.equal(hashOf(pod), v1, pod.metadata?.name);
        assert.equal(versionOf(pod.spec), 'v1', pod.metadata?.name);
      }

      // The partition down to 0: group 0 rolls too, and only the current revision is left.
      await suite.lws.patchSpec(name, { rolloutStrategy: { rollingUpdateConfiguration: { partition: 0 } } });
      await waitFor(
        `${name} rolled out, the old revision pruned`,
        async () => {
          const l = await suite.lws.get(name);
          const available = l?.status?.conditions?.find((c) => c.type === 'Available');
          const left = (await revisions(name)).map((r) => r.metadata?.name);
          return available?.status === 'True' &&
            l?.status?.updatedReplicas === 2 &&
            left.length === 1 &&
            left[0] === `${name}-${v2}`
            ? true
            : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 500 },
      );
      const final = await suite.lws.waitForGroups(name, 2, 3);
      for (const pod of final) {
        assert.equal(hashOf(pod), v2, pod.metadata?.name);
        assert.equal(versionOf(pod.spec), 'v2', pod.metadata?.name);
      }
      const owner = (await revisions(name))[0]?.metadata?.ownerReferences?.[0];
      assert.equal(owner?.kind, 'LeaderWorkerSet');
      assert.equal(owner?.uid, (await suite.lws.get(name))?.metadata?.uid);
    });
  }

  it('a rollback mid-rollout reuses the old revision (the same object, numbered above the newer one)', async () => {
    const name = 'mid-rollback';
    await suite.lws.create(lwsOf(name, 'Parallel'));
    await suite.lws.waitForGroups(name, 2, 3);
    const v1 = hashOf(await suite.lws.statefulSet(name))!;
    const first = (await revisions(name))[0]!;
    await suite.lws.patchSpec(name, { leaderWorkerTemplate: { size: 3, workerTemplate: template('v2') } });
    const v2 = await waitFor(
      `group 1 of ${name} on v2`,
      async () => {
        const hash = hashOf(await suite.lws.pod(`${name}-1`));
        return hash !== undefined && hash !== v1 ? hash : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    await suite.lws.waitForGroups(name, 2, 3);

    await suite.lws.patchSpec(name, { leaderWorkerTemplate: { size: 3, workerTemplate: template('v1') } });
    await waitFor(
      `group 1 of ${name} back on v1`,
      async () =>
        hashOf(await suite.lws.pod(`${name}-1`)) === v1 && hashOf(await suite.lws.statefulSet(`${name}-1`)) === v1
          ? true
          : undefined,
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const byHash = new Map((await revisions(name)).map((r) => [hashOf(r), r]));
    const reused = byHash.get(v1);
    assert.equal(reused?.metadata?.uid, first.metadata?.uid, 'the same ControllerRevision object');
    // The partition (1) keeps the rollout from being done, so v2's revision is not pruned yet.
    assert.deepEqual([first.revision, byHash.get(v2)?.revision, reused?.revision], [1, 2, 3]);
    assert.equal(versionOf((await suite.lws.statefulSet(`${name}-1`))?.spec?.template.spec), 'v1');
  });
});
