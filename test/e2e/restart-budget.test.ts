// spec.leaderWorkerTemplate.maxGroupRestarts on the local cluster with the real controller (docs/operations.md, "Group
// restart budget"): a group whose worker keeps crashing is recreated that many times, then kept as it is with the
// condition Failed and a Warning Event, and rebuilt once the user annotates its leader with recover=true. The count is
// kept on the leader StatefulSet, so a kill -9 of the worker and the trigger in the middle loses none of it.
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import {
  ANNOTATION_GROUP_RESTART_COUNT,
  ANNOTATION_RECOVER,
  CONDITION_FAILED,
  type LeaderWorkerSet,
} from '../../src/model/index.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { useControllerSuite } from '../fixtures/controller-suite.js';
import { sampleLeaderWorkerSet } from '../../tools/stack/sample-lws.js';

const NAME = 'budget';
const IMAGE = 'registry.invalid/ai:1';
const SIZE = 2;
const MAX = 2;

function lwsOf(): LeaderWorkerSet {
  return sampleLeaderWorkerSet({
    name: NAME,
    replicas: 1,
    size: SIZE,
    graceSeconds: 1,
    image: IMAGE,
    maxGroupRestarts: MAX,
  });
}

describe('the group restart budget (maxGroupRestarts) with the real controller', function () {
  this.timeout(240_000);
  const suite = useControllerSuite('e2e-budget');

  const leaderUid = async () => (await suite.lws.pod(`${NAME}-0`))?.metadata?.uid;
  const counts = async () => {
    const annotation = (await suite.lws.statefulSet(NAME))?.metadata?.annotations?.[ANNOTATION_GROUP_RESTART_COUNT];
    return Object.values(JSON.parse(annotation ?? '{}') as Record<string, number>);
  };
  const failedCondition = async () =>
    (await suite.lws.get(NAME))?.status?.conditions?.find((c) => c.type === CONDITION_FAILED && c.status === 'True');
  /** A crash of the group's worker container, as the kubelet reports it. */
  const crash = () => suite.lws.reportContainerRestart(`${NAME}-0-1`);
  const rebuilt = async (before: string | undefined) => {
    await waitFor('the group to be recreated', async () => ((await leaderUid()) !== before ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 200,
    });
    return suite.lws.waitForGroups(NAME, 1, SIZE);
  };

  it('recreates a crashing group maxGroupRestarts times, keeps it failed after that, and rebuilds it on recover=true', async () => {
    await suite.lws.create(lwsOf());
    await suite.lws.waitForGroups(NAME, 1, SIZE);

    // First crash: recreated.
    let before = await leaderUid();
    await crash();
    await rebuilt(before);
    assert.deepEqual(await counts(), [1]);

    // Second crash, with the worker and the trigger killed as it is handled: recreated once, counted once.
    before = await leaderUid();
    await crash();
    await Promise.all([suite.controller.worker.kill9(), suite.controller.trigger.kill9()]);
    await Promise.all([suite.controller.startWorker(), suite.controller.startTrigger()]);
    await rebuilt(before);
    assert.deepEqual(await counts(), [2]);

    // Third crash: the budget is spent. The group is kept as it is, and the LWS says so.
    const kept = (await suite.lws.pods(NAME)).map((p) => p.metadata!.uid).sort();
    await crash();
    const condition = await waitFor('condition Failed', failedCondition, { timeoutMs: 60_000, intervalMs: 250 });
    assert.equal(condition.reason, 'MaxGroupRestartsExceeded');
    assert.match(
      condition.message ?? '',
      /group 0 was recreated 2 times \(spec.leaderWorkerTemplate.maxGroupRestarts 2\)/,
    );
    assert.match(condition.message ?? '', new RegExp(`kubectl annotate pod ${NAME}-0 ${ANNOTATION_RECOVER}=true`));
    const events = await suite.lws.core.listNamespacedEvent({ namespace: suite.namespace });
    const warning = events.items.filter((e) => e.reason === 'MaxGroupRestartsExceeded');
    assert.equal(warning.length, 1);
    assert.equal(warning[0]!.type, 'Warning');
    assert.equal(warning[0]!.involvedObject.name, NAME);
    // Nothing more happens to its pods: they stay for debugging.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    assert.deepEqual((await suite.lws.pods(NAME)).map((p) => p.metadata!.uid).sort(), kept);
    assert.deepEqual(await counts(), [2]);

    // The user's recover: rebuilt, the count starts again, the condition goes.
    before = await leaderUid();
    await suite.lws.core.patchNamespacedPod(
      {
        name: `${NAME}-0`,
        namespace: suite.namespace,
        body: { metadata: { annotations: { [ANNOTATION_RECOVER]: 'true' } } },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await rebuilt(before);
    assert.deepEqual(await counts(), [0]);
    await waitFor('condition Failed to go', async () => ((await failedCondition()) ? undefined : true), {
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    const recovered = (await suite.lws.core.listNamespacedEvent({ namespace: suite.namespace })).items.filter(
      (e) => e.reason === 'GroupRecovered',
    );
    assert.equal(recovered.length, 1);
  });
});
