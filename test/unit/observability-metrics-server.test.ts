import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { createLogger } from '../../src/log.js';
import { defaultMetricsPorts, serveMetrics, TriggerMetrics, WorkerMetrics } from '../../src/observability/metrics.js';

describe('serveMetrics: the metrics and health server of each process', () => {
  const log = createLogger('metrics-test');

  it('gives the worker and the trigger different default ports, so both run on one machine', async () => {
    const worker = await serveMetrics({ registry: new Registry(), role: 'worker', healthy: () => true, log, env: {} });
    const trigger = await serveMetrics({
      registry: new Registry(),
      role: 'trigger',
      healthy: () => false,
      log,
      env: {},
    });
    try {
      assert.deepEqual([worker.port, trigger.port], [defaultMetricsPorts.worker, defaultMetricsPorts.trigger]);
      assert.equal((await fetch(`http://127.0.0.1:${worker.port}/healthz`)).status, 200);
      assert.equal((await fetch(`http://127.0.0.1:${trigger.port}/healthz`)).status, 503);
    } finally {
      await Promise.all([worker.close(), trigger.close()]);
    }
  });

  it('a port in use is an error that names METRICS_PORT and what to do', async () => {
    const first = await serveMetrics({
      registry: new Registry(),
      role: 'worker',
      healthy: () => true,
      log,
      env: { METRICS_PORT: '0' },
    });
    try {
      await assert.rejects(
        serveMetrics({
          registry: new Registry(),
          role: 'trigger',
          healthy: () => true,
          log,
          env: { METRICS_PORT: String(first.port) },
        }),
        new RegExp(`METRICS_PORT=${first.port} is in use by another process: set METRICS_PORT to a free port`),
      );
    } finally {
      await first.close();
    }
  });

  for (const [role, make] of [
    ['worker', () => new WorkerMetrics()],
    ['trigger', () => new TriggerMetrics()],
  ] as const) {
    it(`the ${role} exports the process metrics under their standard names, for standard Node.js dashboards`, async () => {
      const text = await make().registry.metrics();
      for (const name of [
        'process_cpu_seconds_total',
        'process_resident_memory_bytes',
        'nodejs_heap_size_used_bytes',
      ]) {
        assert.match(text, new RegExp(`^${name} `, 'm'), name);
      }
      assert.doesNotMatch(text, /^lws_(worker|trigger)_(process|nodejs)_/m);
    });
  }
});
