// The worker process's workflow task polls, read from the SDK's own metrics: the poller settings in src/worker/run.ts
// take effect (the SDK silently ignored the option used for them before).
import assert from 'node:assert/strict';
import { startControllerProcess, type ControllerProcess } from '../../tools/stack/controller-processes.js';
import { kubeconfigPath } from '../../tools/stack/paths.js';
import { freePort, SERVER_PORTS, waitFor } from '../../src/dev-server/processes.js';
import { startDevServerEnvironment } from '../../tools/stack/temporal.js';
import { allSearchAttributes } from '../../src/workflows/search-attributes.js';
import { ensureCluster } from '../fixtures/cluster.js';
import { testLogDir } from '../fixtures/controller.js';

/** The `temporal_num_pollers` gauge by poller type, from a Prometheus text page. */
function pollers(page: string): Record<string, number> {
  const found: Record<string, number> = {};
  for (const match of page.matchAll(/^temporal_num_pollers\{[^}]*poller_type="([a-z_]+)"[^}]*\} (\d+)$/gm)) {
    found[match[1]!] = Number(match[2]);
  }
  return found;
}

describe('worker process: workflow task polls', function () {
  this.timeout(120_000);

  it('keeps 20 polls open on the task queue (new workflows) and 20 on its sticky queue', async () => {
    await ensureCluster();
    const env = await startDevServerEnvironment({ searchAttributes: allSearchAttributes });
    let worker: ControllerProcess | undefined;
    try {
      const metricsPort = await freePort(SERVER_PORTS);
      worker = await startControllerProcess(
        'worker',
        {
          ...process.env,
          KUBECONFIG: kubeconfigPath,
          TEMPORAL_ADDRESS: env.address,
          TEMPORAL_TASK_QUEUE: 'pollers-test',
          TEMPORAL_METRICS_PORT: String(metricsPort),
        },
        testLogDir,
      );
      const want = { workflow_task: 20, sticky_workflow_task: 20 };
      // The polls open within moments of the start: wait for them, then compare what was seen last.
      let seen = {};
      await waitFor(
        'the worker to open its workflow task polls',
        async () => {
          const page = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then(
            (r) => r.text(),
            () => '',
          );
          const { workflow_task, sticky_workflow_task } = pollers(page);
          seen = { workflow_task, sticky_workflow_task };
          return workflow_task === want.workflow_task && sticky_workflow_task === want.sticky_workflow_task
            ? true
            : undefined;
        },
        { timeoutMs: 30_000 },
      ).catch(() => undefined);
      assert.deepEqual(seen, want, `workflow task polls by queue (see the worker.log in ${testLogDir})`);
    } finally {
      await worker?.stop();
      await env.teardown();
    }
  });
});
