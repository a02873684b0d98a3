// Nothing secret in Temporal (issue 28): people who read workflow histories may not read the cluster's Secrets, and
// an LWS's pod templates carry env values inline (upstream's vLLM example puts HF_TOKEN there). On the real stack, an
// LWS whose templates hold a distinctive env value, image, command and pod labels and annotations of its own is
// provisioned, has a group rebuilt, a container restarted and a rolling update; then every string and byte of every
// history under lws/<cluster>/<namespace>/ (inputs, results, local activity markers, signals, memo, search attributes, failures)
// is searched for them, and for `managedFields`, which only a whole object carries. It also prints the history bytes
// per lifecycle (docs/benchmarks.md). The payloads do not depend on the Temporal server: the dev server alone.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { lwsFacts, parseWorkflowId, type LeaderWorkerSet } from '../../src/model/index.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { useControllerSuite } from '../fixtures/controller-suite.js';
import { isReady } from '../fixtures/lws.js';

const token = randomBytes(6).toString('hex');
const SECRET = `secret-${token}`;
const IMAGE = `registry.invalid/payload-${token}`;
const COMMAND = `/opt/payload-${token}/serve`;
// A user's own pod labels and annotations: the pods carry them, the facts the workflows read do not.
const USER_LABEL = `team-${token}`;
const USER_ANNOTATION = `contact-${token}@example.com`;
const NAME = 'secrets';

const template = (role: string, tag: string) => ({
  metadata: { labels: { 'example.com/team': USER_LABEL }, annotations: { 'example.com/contact': USER_ANNOTATION } },
  spec: {
    terminationGracePeriodSeconds: 2,
    containers: [
      {
        name: role,
        image: `${IMAGE}:${tag}`,
        command: [COMMAND, '--role', role],
        env: [{ name: 'HF_TOKEN', value: SECRET }],
      },
    ],
  },
});

const lwsOf = (): LeaderWorkerSet => ({
  apiVersion: 'leaderworkerset.x-k8s.io/v1',
  kind: 'LeaderWorkerSet',
  metadata: { name: NAME },
  spec: {
    replicas: 2,
    podTerminationPolicy: 'Parallel',
    leaderWorkerTemplate: { size: 2, leaderTemplate: template('leader', '1'), workerTemplate: template('worker', '1') },
  },
});

const { History } = temporal.api.history.v1;
type HistoryObject = Parameters<typeof History.fromObject>[0];

/** Every string in a history, bytes (payload data) decoded as UTF-8: what anyone with read access can see. */
function* texts(value: unknown): Generator<string> {
  if (typeof value === 'string') yield value;
  else if (value instanceof Uint8Array) yield Buffer.from(value).toString('utf8');
  else if (Array.isArray(value)) for (const v of value) yield* texts(v);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) yield* texts(v);
}

describe('controller: no pod template, env value or managedFields in any workflow history (real cluster)', function () {
  this.timeout(600_000);
  const suite = useControllerSuite('e2e-payloads', { temporal: 'dev-server' });

  const leaderUid = async (i: number) => (await suite.lws.pod(`${NAME}-${i}`))?.metadata?.uid;

  /** Resolves once group `i` runs a leader other than `uid`, and every group is Ready. */
  async function rebuilt(i: number, uid: string | undefined) {
    await waitFor('a new leader', async () => ((await leaderUid(i)) !== uid ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    await suite.lws.waitForGroups(NAME, 2, 2);
  }

  /** Every run of every workflow of the namespace's LWSs, lifecycles ended (the reconcile keeps running). */
  async function histories() {
    const query = `WorkflowId STARTS_WITH "lws/${suite.controller.cluster}/${suite.namespace}/"`;
    await waitFor(
      'every lifecycle workflow closed',
      async () => {
        for await (const wf of suite.controller.client.workflow.list({
          query: `${query} AND ExecutionStatus = "Running"`,
        })) {
          if (parseWorkflowId(wf.workflowId)?.op.kind !== 'reconcile') return undefined;
        }
        return true;
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    const runs: { workflowId: string; kind: string; history: HistoryObject }[] = [];
    for await (const wf of suite.controller.client.workflow.list({ query })) {
      const history = await suite.controller.client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
      runs.push({ workflowId: wf.workflowId, kind: parseWorkflowId(wf.workflowId)?.op.kind ?? '?', history });
    }
    return runs;
  }

  /**
   * History bytes per lifecycle: protobuf (as the server counts a history's size) and JSON (as the fixtures), and for
   * the reconcile per pass (each pass lists the groups once), as its count of passes follows the signals.
   */
  function reportBytes(runs: Awaited<ReturnType<typeof histories>>) {
    const rows = new Map<string, { runs: number; proto: number; json: number; passes: number }>();
    for (const { kind, history } of runs) {
      const message = History.fromObject(history);
      const json = JSON.stringify(History.toObject(message, { enums: String, longs: String, bytes: String }));
      const passes = [...texts(history)].filter((t) => t.includes('"activity_type":"listGroups"')).length;
      const row = rows.get(kind) ?? { runs: 0, proto: 0, json: 0, passes: 0 };
      rows.set(kind, {
        runs: row.runs + 1,
        proto: row.proto + History.encode(message).finish().length,
        json: row.json + json.length,
        passes: row.passes + passes,
      });
    }
    console.log('      history bytes per lifecycle (runs, protobuf total, protobuf per run, JSON total):');
    for (const [kind, r] of [...rows].sort()) {
      const perPass = kind === 'reconcile' ? `, ${r.passes} passes, ${Math.round(r.proto / r.passes)} B/pass` : '';
      console.log(
        `        ${kind}: ${r.runs} runs, ${r.proto} B, ${Math.round(r.proto / r.runs)} B/run, ${r.json} B JSON${perPass}`,
      );
    }
  }

  it('provisions, rebuilds a group, recreates one after a restart and rolls out: nothing of the templates recorded', async () => {
    await suite.lws.create(lwsOf());
    await suite.lws.waitForGroups(NAME, 2, 2);
    const pod = await suite.lws.pod(`${NAME}-0-1`);
    assert.equal(pod?.metadata?.labels?.['example.com/team'], USER_LABEL, 'the pods carry the label (test premise)');

    // A rebuild (Parallel): the leader deleted.
    const first = await leaderUid(0);
    await suite.lws.core.deleteNamespacedPod({ name: `${NAME}-0`, namespace: suite.namespace });
    await rebuilt(0, first);

    // A container restart (RecreateGroupOnPodRestart, the default): the group recreated.
    const second = await leaderUid(1);
    await suite.lws.reportContainerRestart(`${NAME}-1-1`);
    await rebuilt(1, second);

    // A rolling update: a new image for the workers, every group rolled onto it.
    const spec = lwsOf().spec.leaderWorkerTemplate;
    await suite.lws.patchSpec(NAME, { leaderWorkerTemplate: { ...spec, workerTemplate: template('worker', '2') } });
    await waitFor(
      'every worker on the new image',
      async () => {
        const pods = (await suite.lws.pods(NAME)).filter((p) => !p.metadata?.deletionTimestamp);
        const workers = pods.filter((p) => p.metadata!.name!.split('-').length === 3);
        const rolled = workers.every((p) => p.spec?.containers[0]?.image === `${IMAGE}:2` && isReady(p));
        return pods.length === 4 && workers.length === 2 && rolled && pods.every(isReady) ? true : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 500 },
    );

    const runs = await histories();
    reportBytes(runs);
    const stored = (await suite.lws.get(NAME))!;
    const sizes = [JSON.stringify(stored).length, JSON.stringify(lwsFacts(stored)).length];
    console.log(`      the LWS as stored: ${sizes[0]} B of JSON; its facts (what the workflows read): ${sizes[1]} B`);
    const kinds = new Set(runs.map((r) => r.kind));
    for (const kind of ['reconcile', 'provision', 'teardown', 'recreate']) {
      assert.ok(kinds.has(kind), `no ${kind} workflow among ${[...kinds].join(', ')}`);
    }
    const found: string[] = [];
    for (const { workflowId, history } of runs) {
      const all = [...texts(history)].join('\n');
      for (const [what, needle] of [
        ['the env value', SECRET],
        ['managedFields', 'managedFields'],
        ['the container image', IMAGE],
        ['the container command', COMMAND],
        ["the user's pod label", USER_LABEL],
        ["the user's pod annotation", USER_ANNOTATION],
      ] as const) {
        if (all.includes(needle)) found.push(`${workflowId}: ${what}`);
      }
    }
    assert.deepEqual(found, [], `recorded in Temporal:\n${found.join('\n')}`);
  });
});
