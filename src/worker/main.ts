// `npm run worker`: the Temporal worker that runs every lifecycle workflow and the Kubernetes activities.
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../activities/index.js';
import { loadKubeConfig } from '../config/kubernetes.js';
import { connectionOptions, temporalConfigFromEnv } from '../config/temporal.js';
import { createLogger } from '../log.js';

const log = createLogger('worker');

async function main(): Promise<void> {
  const temporal = temporalConfigFromEnv();
  const kc = loadKubeConfig();
  const connection = await NativeConnection.connect(connectionOptions(temporal)).catch((err: unknown) => {
    throw new Error(
      `cannot reach Temporal at ${temporal.address} (${(err as Error).message}): set TEMPORAL_ADDRESS, or start a dev server with \`.lws-temporal/bin/temporal server start-dev\``,
      { cause: err },
    );
  });
  const worker = await Worker.create({
    connection,
    namespace: temporal.namespace,
    taskQueue: temporal.taskQueue,
    workflowsPath: fileURLToPath(new URL('../workflows/index.ts', import.meta.url)),
    activities: createActivities(kc),
  });
  log.info('running', {
    temporal: temporal.address,
    namespace: temporal.namespace,
    taskQueue: temporal.taskQueue,
    cluster: kc.getCurrentCluster()?.server,
  });
  // SIGTERM and SIGINT make the SDK drain: running activities finish or are cancelled, then run() resolves.
  await worker.run();
  await connection.close();
  log.info('stopped');
}

main().catch((err: unknown) => {
  log.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
