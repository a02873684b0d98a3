// The trigger service against one cluster and one Temporal namespace.
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { connectionOptions, type TemporalConfig } from '../config/temporal.js';
import type { Logger } from '../log.js';
import { registeredSearchAttributes } from './search-attributes-check.js';
import { Trigger } from './trigger.js';

export interface RunningTrigger {
  stop(): Promise<void>;
}

export async function runTrigger(temporal: TemporalConfig, kc: k8s.KubeConfig, log: Logger): Promise<RunningTrigger> {
  const connection = await Connection.connect(connectionOptions(temporal)).catch((err: unknown) => {
    throw new Error(
      `cannot reach Temporal at ${temporal.address} (${(err as Error).message}): set TEMPORAL_ADDRESS, or unset it with \`npm start\` to run an embedded dev server`,
      { cause: err },
    );
  });
  const client = new Client({ connection, namespace: temporal.namespace });
  const searchAttributes = await registeredSearchAttributes(client, temporal.namespace, log);
  const trigger = new Trigger({ kc, client, taskQueue: temporal.taskQueue, log, searchAttributes });
  log.info('starting', {
    temporal: temporal.address,
    namespace: temporal.namespace,
    taskQueue: temporal.taskQueue,
    cluster: kc.getCurrentCluster()?.server,
  });
  await trigger.start();
  return {
    async stop() {
      await trigger.stop();
      await connection.close();
    },
  };
}
