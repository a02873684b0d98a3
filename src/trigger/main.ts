// `npm run trigger`: the trigger service process.
import { Client, Connection } from '@temporalio/client';
import { loadKubeConfig } from '../config/kubernetes.js';
import { connectionOptions, temporalConfigFromEnv } from '../config/temporal.js';
import { createLogger } from '../log.js';
import { registeredSearchAttributes } from './search-attributes-check.js';
import { Trigger } from './trigger.js';

const log = createLogger('trigger');

async function main(): Promise<void> {
  const temporal = temporalConfigFromEnv();
  const kc = loadKubeConfig();
  const connection = await Connection.connect(connectionOptions(temporal)).catch((err: unknown) => {
    throw new Error(
      `cannot reach Temporal at ${temporal.address} (${(err as Error).message}): set TEMPORAL_ADDRESS, or start a dev server with \`.lws-temporal/bin/temporal server start-dev\``,
      { cause: err },
    );
  });
  const client = new Client({ connection, namespace: temporal.namespace });
  const searchAttributes = await registeredSearchAttributes(client, temporal.namespace, log);
  const trigger = new Trigger({ kc, client, taskQueue: temporal.taskQueue, log, searchAttributes });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('stopping', { signal });
    await trigger.stop();
    await connection.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  log.info('starting', {
    temporal: temporal.address,
    namespace: temporal.namespace,
    taskQueue: temporal.taskQueue,
    cluster: kc.getCurrentCluster()?.server,
  });
  await trigger.start();
}

main().catch((err: unknown) => {
  log.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
