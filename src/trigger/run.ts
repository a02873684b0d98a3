// The trigger service against one cluster and one Temporal namespace.
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { connectionOptions, temporalUnreachable, type TemporalConfig } from '../config/temporal.js';
import { followConfiguredApiKey } from '../config/api-key-file.js';
import { payloadCodecsFromEnv } from '../config/payload-codec.js';
import type { Logger } from '../log.js';
import { serveMetrics, TriggerMetrics } from '../observability/metrics.js';
import { registeredSearchAttributes } from './search-attributes-check.js';
import { Trigger } from './trigger.js';

export interface RunningTrigger {
  stop(): Promise<void>;
}

export async function runTrigger(
  temporal: TemporalConfig,
  kc: k8s.KubeConfig,
  log: Logger,
  /** Where METRICS_PORT is read (`npm start` moves the trigger's next to the worker's). */
  env: NodeJS.ProcessEnv = process.env,
  /**
   * The worker's connection, when both run in this process (`npm start`): starts then ask for eager workflow start,
   * and the caller closes it. Otherwise the trigger opens a connection of its own.
   */
  shared?: NativeConnection,
): Promise<RunningTrigger> {
  const connection =
    shared ??
    (await Connection.connect(connectionOptions(temporal)).catch((err: unknown) => {
      throw temporalUnreachable(temporal, err);
    }));
  const apiKey = shared ? undefined : followConfiguredApiKey(temporal, connection, log);
  const client = new Client({
    connection,
    namespace: temporal.namespace,
    dataConverter: { payloadCodecs: payloadCodecsFromEnv(env) },
  });
  const searchAttributes = await registeredSearchAttributes(client, temporal.namespace, log);
  const metrics = new TriggerMetrics();
  metrics.kubeApiRequests.observe(kc);
  let ready = false;
  const server = await serveMetrics({ registry: metrics.registry, role: 'trigger', healthy: () => ready, log, env });
  const trigger = new Trigger({
    kc,
    cluster: temporal.cluster,
    client,
    taskQueue: temporal.taskQueue,
    log,
    searchAttributes,
    eagerStart: shared !== undefined,
    onStarted: (action, outcome, latencyMs) => {
      if (outcome === 'started') {
        metrics.started.inc({ workflow: action.workflowType });
        metrics.reaction.observe(latencyMs / 1000);
      } else if (outcome === 'deduplicated') metrics.deduplicated.inc({ workflow: action.workflowType });
      else metrics.signalled.inc();
    },
    onWatchRestart: (resource, reason) => {
      metrics.watchRestarts.inc({ resource });
      metrics.kubeApiRetries.inc({ component: 'trigger', reason });
    },
  });
  log.info('starting', {
    temporal: temporal.address,
    namespace: temporal.namespace,
    taskQueue: temporal.taskQueue,
    cluster: temporal.cluster,
    apiServer: kc.getCurrentCluster()?.server,
  });
  await trigger.start();
  ready = true;
  return {
    async stop() {
      ready = false;
      apiKey?.stop();
      await trigger.stop();
      await server.close();
      if (!shared) await connection.close();
    },
  };
}
