import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@temporalio/client';
import { chromium, type Browser } from 'playwright-core';
import { serveCodec, type CodecServer } from '../../src/codec/codec-server.js';
import { payloadCodecsFromEnv } from '../../src/config/payload-codec.js';
import { createLogger } from '../../src/log.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { testLogDir, testTemporalTargets } from '../fixtures/controller.js';
import { useControllerSuite } from '../fixtures/controller-suite.js';
import { LwsClient } from '../fixtures/lws.js';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it): no browser download. */
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

const smallParallelLws = (name: string) => ({
  apiVersion: 'leaderworkerset.x-k8s.io/v1',
  kind: 'LeaderWorkerSet',
  metadata: { name },
  spec: {
    podTerminationPolicy: 'Parallel' as const,
    replicas: 1,
    leaderWorkerTemplate: {
      size: 2,
      workerTemplate: {
        spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'worker', image: 'registry.invalid/ai:1' }] },
      },
    },
  },
});

for (const target of testTemporalTargets()) {
  describe(`the Temporal Web UI in a real browser (Temporal ${target})`, function () {
    this.timeout(240_000);
    let browser: Browser;

    // Registered first: the browser closes before the namespace and the controller go.
    after(async () => {
      await browser?.close();
    });

    const suite = useControllerSuite('e2e-web-ui', { temporal: target });

    before(async () => {
      browser = await launchBrowser();
    });

    it('filters teardown runs by the LWS search attributes, opens the rebuild and shows its summary and timeline', async () => {
      const lws = new LwsClient(suite.controller.kc, suite.namespace);
      const template = (role: string) => ({
        spec: { terminationGracePeriodSeconds: 2, containers: [{ name: role, image: 'registry.invalid/ai:1' }] },
      });
      await lws.create({
        apiVersion: 'leaderworkerset.x-k8s.io/v1',
        kind: 'LeaderWorkerSet',
        metadata: { name: 'ui-demo' },
        spec: {
          podTerminationPolicy: 'Parallel',
          replicas: 1,
          leaderWorkerTemplate: { size: 2, workerTemplate: template('worker') },
        },
      });
      await lws.waitForGroups('ui-demo', 1, 2);
      const leader = (await lws.pod('ui-demo-0'))!;
      await lws.core.deleteNamespacedPod({ name: 'ui-demo-0', namespace: suite.namespace });
      const workflowId = `lws/${suite.controller.cluster}/${suite.namespace}/ui-demo/group-0/teardown/${leader.metadata!.uid}`;
      const handle = suite.controller.client.workflow.getHandle(workflowId);
      await waitFor('the trigger to start the rebuild', () => handle.describe().then(() => true), {
        timeoutMs: 30_000,
      });
      await handle.result();

      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const query = `LwsNamespace = "${suite.namespace}" AND LwsName = "ui-demo" AND Lifecycle = "rebuild" AND TerminationPolicy = "Parallel"`;
      await page.goto(
        `${suite.controller.uiUrl}/namespaces/${suite.controller.temporalNamespace}/workflows?query=${encodeURIComponent(query)}`,
      );
      const row = page.getByText(workflowId).first();
      await row.waitFor({ timeout: 60_000 });
      // Only the rebuild matches: the provisioning runs of the same LWS are filtered out by the query.
      assert.equal(
        await page
          .getByText(`lws/${suite.controller.cluster}/${suite.namespace}/ui-demo/group-0/provision/`, { exact: false })
          .count(),
        0,
      );
      await row.click();
      // The run's result holds the timeline; the Web UI shows its start on the run's page (the viewer renders only the
      // lines in view).
      await page.getByText('"leader terminating"', { exact: false }).first().waitFor({ timeout: 60_000 });
      await page.getByText('"workers terminating"', { exact: false }).first().waitFor({ timeout: 60_000 });
      // The static summary and the live timeline (the run's current details) are under User Metadata; the UI renders
      // them as Markdown in frames of their own.
      await page.getByText('User Metadata').first().click();
      const frameText = async () =>
        (
          await Promise.all(
            page
              .frames()
              .map((f) => f.evaluate<string>('document.body ? document.body.innerText : ""').catch(() => '')),
          )
        ).join('\n');
      await waitFor(
        'the summary and the timeline under User Metadata',
        async () => {
          const text = await frameText();
          return text.includes(`tear down group 0 of ${suite.namespace}/ui-demo (rebuild)`) &&
            /workers terminating[\s\S]*new group ready/.test(text)
            ? true
            : undefined;
        },
        { timeoutMs: 30_000 },
      );
      // Kept with the test logs (docs/web-ui-rebuild.png is one of them, copied by hand), not over a tracked file.
      await page.screenshot({ path: join(testLogDir, `web-ui-rebuild-${target}.png`) });
    });

    it("shows a recreation waiting in backoff: the timer in the run's history and the wait in its timeline", async () => {
      const lws = new LwsClient(suite.controller.kc, suite.namespace);
      const spec = smallParallelLws('ui-backoff');
      // Long enough to look at the run while it waits.
      Object.assign(spec.spec.leaderWorkerTemplate, { groupRestartBackoff: { initialIntervalSeconds: 120 } });
      await lws.create(spec);
      await lws.waitForGroups('ui-backoff', 1, 2);
      // The first failure recreates the group at once; the second, soon after, waits.
      const first = (await lws.pod('ui-backoff-0'))!.metadata!.uid!;
      await lws.reportContainerRestart('ui-backoff-0-1');
      await waitFor(
        'the group recreated',
        async () => ((await lws.pod('ui-backoff-0'))?.metadata?.uid !== first ? true : undefined),
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      await lws.waitForGroups('ui-backoff', 1, 2);
      const leaderUid = (await lws.pod('ui-backoff-0'))!.metadata!.uid!;
      await lws.reportContainerRestart('ui-backoff-0-1');
      const workflowId = `lws/${suite.controller.cluster}/${suite.namespace}/ui-backoff/group-0/recreate/${leaderUid}`;
      const handle = suite.controller.client.workflow.getHandle(workflowId);
      await waitFor(
        'the recreate run on its backoff timer',
        async () => {
          const history = await handle.fetchHistory().catch(() => undefined);
          return history?.events?.some((e) => e.timerStartedEventAttributes) ? true : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 250 },
      );
      const { runId, status } = await handle.describe();
      assert.equal(status.name, 'RUNNING');

      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      await page.goto(
        `${suite.controller.uiUrl}/namespaces/${suite.controller.temporalNamespace}/workflows/${encodeURIComponent(workflowId)}/${runId}/history`,
      );
      // The pending timer, with its summary, in the event history.
      await page.getByText('backoff before the 2nd recreation of group 0', { exact: false }).first().waitFor({
        timeout: 60_000,
      });
      await page.getByText('User Metadata').first().click();
      await waitFor(
        'the wait in the timeline under User Metadata',
        async () => {
          const texts = await Promise.all(
            page
              .frames()
              .map((f) => f.evaluate<string>('document.body ? document.body.innerText : ""').catch(() => '')),
          );
          return /backing off \(.*2nd recreation in a row: waiting 120 s/.test(texts.join('\n')) ? true : undefined;
        },
        { timeoutMs: 30_000 },
      );
      await page.screenshot({ path: join(testLogDir, `web-ui-backoff-${target}.png`) });
      // Not left waiting past the suite: the LWS goes with the namespace, and the run then has nothing to do.
      await handle.terminate('test over');
    });
  });
}

describe('the Web UI decodes an encrypted run through the codec server (Temporal dev-server)', function () {
  this.timeout(240_000);
  let browser: Browser;
  let codec: CodecServer;
  const keys = { LWS_PAYLOAD_KEYS_DIR: '', LWS_PAYLOAD_KEY_ID: 'test-key' };
  const origins: string[] = [];

  // Registered first: the browser closes before the namespace and the controller go, the codec server after them.
  after(async () => {
    await browser?.close();
  });

  before(async () => {
    keys.LWS_PAYLOAD_KEYS_DIR = mkdtempSync(join(tmpdir(), 'lws-payload-keys-'));
    writeFileSync(join(keys.LWS_PAYLOAD_KEYS_DIR, 'test-key'), randomBytes(32).toString('base64'));
    codec = await serveCodec({
      codecs: payloadCodecsFromEnv(keys),
      port: 0,
      allowOrigins: origins,
      log: createLogger('codec-server'),
    });
  });

  const suite = useControllerSuite('e2e-web-ui-codec', () => ({
    temporal: 'dev-server',
    env: keys,
    uiCodecEndpoint: codec.url,
  }));

  before(async () => {
    origins.push(suite.controller.uiUrl);
    browser = await launchBrowser();
  });

  after(async () => {
    await codec?.close();
  });

  it('stores the rebuild encrypted, and shows its timeline decoded', async () => {
    const lws = new LwsClient(suite.controller.kc, suite.namespace);
    await lws.create(smallParallelLws('sealed'));
    await lws.waitForGroups('sealed', 1, 2);
    const leader = (await lws.pod('sealed-0'))!;
    await lws.core.deleteNamespacedPod({ name: 'sealed-0', namespace: suite.namespace });
    const workflowId = `lws/${suite.controller.cluster}/${suite.namespace}/sealed/group-0/teardown/${leader.metadata!.uid}`;
    const handle = suite.controller.client.workflow.getHandle(workflowId);
    await waitFor('the trigger to start the rebuild', () => handle.describe().then(() => true), {
      timeoutMs: 30_000,
    });
    // The test's client has the key: the result reads as usual.
    const result = (await handle.result()) as { timeline: { event: string }[] };
    assert.ok(result.timeline.some((e) => e.event === 'new group ready'));
    // Without the key, the history holds only ciphertext: no step of the timeline, no pod name.
    const raw = new Client({
      connection: suite.controller.client.connection,
      namespace: suite.controller.temporalNamespace,
    });
    const history = JSON.stringify(await raw.workflow.getHandle(workflowId).fetchHistory());
    assert.match(history, /binary\/encrypted|YmluYXJ5L2VuY3J5cHRlZA/);
    for (const plain of ['new group ready', 'leader terminating', 'sealed-0']) {
      assert.ok(!history.includes(plain) && !history.includes(Buffer.from(plain).toString('base64')), plain);
    }

    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const { runId } = await handle.describe();
    await page.goto(
      `${suite.controller.uiUrl}/namespaces/${suite.controller.temporalNamespace}/workflows/${encodeURIComponent(workflowId)}/${runId}/history`,
    );
    // The Web UI called the codec server: the result's timeline shows in clear.
    await page.getByText('"leader terminating"', { exact: false }).first().waitFor({ timeout: 60_000 });
    // The viewer renders only the lines in view: the first steps of the timeline.
    await page.getByText('"workers terminating"', { exact: false }).first().waitFor({ timeout: 60_000 });
    await page.screenshot({ path: join(testLogDir, 'web-ui-decoded-rebuild.png') });
  });
});
