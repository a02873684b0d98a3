import assert from 'node:assert/strict';
import type { LeaderWorkerSet } from '../../src/model/index.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { useControllerSuite } from '../fixtures/controller-suite.js';

/**
 * Upstream #236 on the real stack: group 1 of LWS `clash` has its worker StatefulSet named `clash-1`, the leader
 * StatefulSet LWS `clash-1` needs. The second LWS must leave the first's objects alone and say why it cannot start.
 */
function lwsOf(name: string, replicas: number): LeaderWorkerSet {
  const template = {
    spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'registry.invalid/ai:1' }] },
  };
  return {
    apiVersion: 'leaderworkerset.x-k8s.io/v1',
    kind: 'LeaderWorkerSet',
    metadata: { name },
    spec: { replicas, leaderWorkerTemplate: { size: 2, workerTemplate: template } },
  };
}

describe('controller: names one LWS derives that another holds (upstream #236)', function () {
  this.timeout(240_000);
  const suite = useControllerSuite('e2e-clash');

  it("a Warning Event and a NameConflict condition on the LWS that finds its name taken; the other's objects untouched", async () => {
    await suite.lws.create(lwsOf('clash', 2));
    await suite.lws.waitForGroups('clash', 2, 2);
    const before = (await suite.lws.statefulSet('clash-1'))!;

    await suite.lws.create(lwsOf('clash-1', 1));
    const conflict = await waitFor(
      'the NameConflict condition on clash-1',
      async () => (await suite.lws.get('clash-1'))?.status?.conditions?.find((c) => c.type === 'NameConflict'),
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    assert.equal(conflict.status, 'True');
    assert.match(conflict.message, /is the worker StatefulSet of group 1 of LeaderWorkerSet clash/);
    const events = await suite.lws.core.listNamespacedEvent({
      namespace: suite.namespace,
      fieldSelector: 'involvedObject.name=clash-1',
    });
    assert.ok(
      events.items.some((e) => e.type === 'Warning' && e.reason === 'NameConflict'),
      JSON.stringify(events.items.map((e) => e.reason)),
    );

    const after = (await suite.lws.statefulSet('clash-1'))!;
    assert.equal(after.metadata?.uid, before.metadata?.uid);
    assert.equal(after.metadata?.generation, before.metadata?.generation, 'its spec untouched');
    assert.deepEqual(after.metadata?.ownerReferences, before.metadata?.ownerReferences);
    await suite.lws.waitForGroups('clash', 2, 2);
  });
});
