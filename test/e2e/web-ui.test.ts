import assert from 'node:assert/strict';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { stateDir } from '../../src/stack/paths.js';
import { waitFor } from '../../src/stack/processes.js';
import { startController, testTemporalTargets, type Controller } from '../fixtures/controller.js';
import { LwsClient } from '../fixtures/lws.js';
import { createTestNamespace, deleteTestNamespace } from '../fixtures/namespace.js';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it): no browser download. */
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

for (const target of testTemporalTargets()) {
  describe(`the Temporal Web UI in a real browser (Temporal ${target})`, function () {
    this.timeout(240_000);
    let controller: Controller;
    let namespace: string;
    let browser: Browser;

    before(async function () {
      this.timeout(300_000);
      controller = await startController({ temporal: target });
      namespace = await createTestNamespace(controller.kc, 'e2e-web-ui');
      browser = await chromium.launch({
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
    });

    after(async () => {
      await browser?.close();
      await deleteTestNamespace(controller?.kc, namespace);
      await controller?.stop();
    });

    it('filters teardown runs by the LWS search attributes, opens the rebuild and shows its summary and timeline', async () => {
      const lws = new LwsClient(controller.kc, namespace);
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
      await lws.core.deleteNamespacedPod({ name: 'ui-demo-0', namespace });
      const workflowId = `lws/${namespace}/ui-demo/group-0/teardown/${leader.metadata!.uid}`;
      const handle = controller.client.workflow.getHandle(workflowId);
      await waitFor('the trigger to start the rebuild', () => handle.describe().then(() => true), {
        timeoutMs: 30_000,
      });
      await handle.result();

      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const query = `LwsNamespace = "${namespace}" AND LwsName = "ui-demo" AND Lifecycle = "rebuild" AND TerminationPolicy = "Parallel"`;
      await page.goto(
        `${controller.uiUrl}/namespaces/${controller.temporalNamespace}/workflows?query=${encodeURIComponent(query)}`,
      );
      const row = page.getByText(workflowId).first();
      await row.waitFor({ timeout: 60_000 });
      // Only the rebuild matches: the provisioning runs of the same LWS are filtered out by the query.
      assert.equal(await page.getByText(`lws/${namespace}/ui-demo/group-0/provision/`, { exact: false }).count(), 0);
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
          return text.includes(`tear down group 0 of ${namespace}/ui-demo (rebuild)`) &&
            /workers terminating[\s\S]*new group ready/.test(text)
            ? true
            : undefined;
        },
        { timeoutMs: 30_000 },
      );
      // Kept with the test logs (docs/web-ui-rebuild.png is one of them, copied by hand), not over a tracked file.
      await page.screenshot({ path: join(stateDir, 'test-logs', `web-ui-rebuild-${target}.png`) });
    });
  });
}
