// Templates the CRD accepts and the StatefulSet API refuses (issue 28, item 4), on the real stack: told on the LWS as a
// Warning Event and a ReplicaFailure condition with the API server's message within 5 s, no workflow failed, and a
// fixed template recovers with no manual step. What the CRD's schema refuses (`cpu: banana`, a leader template without
// containers) never gets this far: it is refused at apply, naming the field.
import assert from 'node:assert/strict';
import type * as k8s from '@kubernetes/client-node';
import { formatStatus } from '../../src/cli/format.js';
import { readStatus } from '../../src/cli/status.js';
import type { LeaderWorkerSet } from '../../src/model/index.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { useControllerSuite } from '../fixtures/controller-suite.js';

type Json = Record<string, unknown>;

const good = { name: 'main', image: 'registry.invalid/ai:1' };
/** Accepted by the CRD's schema (each value is a valid quantity); the pod validation of a StatefulSet refuses it. */
const requestsAboveLimits = { ...good, resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } };
const podSpec = (container: Json) => ({ spec: { terminationGracePeriodSeconds: 1, containers: [container] } });

function lwsOf(name: string, templates: { leaderTemplate?: Json; workerTemplate: Json }): LeaderWorkerSet {
  return {
    apiVersion: 'leaderworkerset.x-k8s.io/v1',
    kind: 'LeaderWorkerSet',
    metadata: { name },
    spec: { replicas: 2, leaderWorkerTemplate: { size: 2, ...templates } },
  } as LeaderWorkerSet;
}

const eventTime = (e: k8s.CoreV1Event) => new Date(e.eventTime ?? e.firstTimestamp ?? 0).getTime();

describe('controller: templates the API server refuses, told on the LWS (issue 28)', function () {
  this.timeout(300_000);
  const suite = useControllerSuite('e2e-refused', { temporal: 'dev-server' });

  async function warnings(name: string, reason: string): Promise<k8s.CoreV1Event[]> {
    const events = await suite.lws.core.listNamespacedEvent({
      namespace: suite.namespace,
      fieldSelector: `involvedObject.name=${name}`,
    });
    return events.items.filter((e) => e.type === 'Warning' && e.reason === reason);
  }

  const replicaFailure = async (name: string) =>
    (await suite.lws.get(name))?.status?.conditions?.find((c) => c.type === 'ReplicaFailure');

  async function failedWorkflows(): Promise<string[]> {
    const failed: string[] = [];
    for await (const wf of suite.controller.client.workflow.list({
      query: `WorkflowId STARTS_WITH "lws/${suite.controller.cluster}/${suite.namespace}/"`,
    })) {
      if (wf.status.name === 'FAILED') failed.push(wf.workflowId);
    }
    return failed;
  }

  /** Told (Event, then condition), nothing failed; then fixed by an update of the LWS: Ready, the condition gone. */
  async function toldThenFixed(name: string, reason: string, field: RegExp, fix: Json): Promise<void> {
    const event = await waitFor(`a Warning ${reason} on ${name}`, async () => (await warnings(name, reason)).at(0), {
      timeoutMs: 30_000,
      intervalMs: 200,
    });
    const condition = await waitFor(`the ReplicaFailure condition on ${name}`, () => replicaFailure(name), {
      timeoutMs: 30_000,
      intervalMs: 200,
    });
    assert.equal(condition.status, 'True');
    assert.equal(condition.reason, reason);
    assert.match(condition.message, field, 'the API server message, which names the field');
    assert.match(event.message ?? '', field);
    // Measured from the leader pods' creation, which starts the provisioning; timestamps of whole seconds.
    const toEvent = eventTime(event) - new Date((await suite.lws.get(name))!.metadata!.creationTimestamp!).getTime();
    const toCondition = new Date(condition.lastTransitionTime!).getTime() - eventTime(event);
    console.log(`      ${name}: LWS created -> ${reason} Event ${toEvent} ms; Event -> condition ${toCondition} ms`);
    assert.ok(toCondition < 5_000, `condition ${toCondition} ms after the Event`);
    assert.ok(toEvent < 15_000, `Event ${toEvent} ms after the LWS was created`);

    // `lws-temporal status` shows it (and, for refused workers, the groups so).
    const text = formatStatus(await readStatus({ namespace: suite.namespace, name }, suite.controller.kc));
    assert.ok(text.includes(`ReplicaFailure=True  ${reason}: ${condition.message}`), text);
    if (reason === 'InvalidWorkerTemplate') assert.match(text, /\n0 +\S+ +Refused /, text);

    // Nothing failed, and nothing is told twice for the same refusal.
    await new Promise((r) => setTimeout(r, 3_000));
    assert.deepEqual(await failedWorkflows(), []);
    // One Event per refusal: the leader StatefulSet's, or each group's workers'.
    const told = (await warnings(name, reason)).map((e) => e.message ?? '');
    if (reason === 'InvalidWorkerTemplate')
      assert.deepEqual(told.map((m) => m.slice(0, 8)).sort(), ['group 0:', 'group 1:']);
    else assert.equal(told.length, 1, told.join('\n'));

    await suite.lws.patchSpec(name, { leaderWorkerTemplate: fix });
    await suite.lws.waitForGroups(name, 2, 2, 150_000);
    await waitFor(`${name} without ReplicaFailure`, async () => ((await replicaFailure(name)) ? undefined : true), {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    assert.deepEqual(await failedWorkflows(), []);
  }

  it("what the CRD's schema refuses is refused at apply, naming the field (cpu: banana, a leader without containers)", async () => {
    const banana = { ...good, resources: { limits: { cpu: 'banana' } } };
    const refusals = [
      {
        body: lwsOf('banana', { workerTemplate: podSpec(banana) }),
        field: /workerTemplate\.spec\.containers\[0\]\.resources\.limits\.cpu/,
      },
      {
        body: lwsOf('no-containers', { leaderTemplate: { spec: {} }, workerTemplate: podSpec(good) }),
        field: /leaderTemplate\.spec\.containers: Required value/,
      },
    ];
    for (const { body, field } of refusals) {
      const err = (await suite.lws.create(body).then(
        () => assert.fail('accepted'),
        (e: unknown) => e,
      )) as { code?: number; body?: unknown };
      assert.equal(err.code, 422);
      assert.match(String(err.body), field);
    }
  });

  it('a worker template the StatefulSet API refuses: InvalidWorkerTemplate on the LWS, then fixed', async () => {
    await suite.lws.create(
      lwsOf('bad-workers', { leaderTemplate: podSpec(good), workerTemplate: podSpec(requestsAboveLimits) }),
    );
    await toldThenFixed('bad-workers', 'InvalidWorkerTemplate', /must be less than or equal to cpu limit/, {
      workerTemplate: podSpec(good),
    });
  });

  it('a leader template the StatefulSet API refuses: InvalidLeaderTemplate on the LWS, then fixed', async () => {
    await suite.lws.create(
      lwsOf('bad-leader', { leaderTemplate: podSpec(requestsAboveLimits), workerTemplate: podSpec(good) }),
    );
    await toldThenFixed('bad-leader', 'InvalidLeaderTemplate', /must be less than or equal to cpu limit/, {
      leaderTemplate: podSpec(good),
    });
  });
});
