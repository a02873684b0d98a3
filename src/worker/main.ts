// `npm run worker`: the Temporal worker process.
import { loadKubeConfig } from '../config/kubernetes.js';
import { temporalConfigFromEnv } from '../config/temporal.js';
import { createLogger } from '../log.js';
import { runWorker } from './run.js';

const log = createLogger('worker');
runWorker(temporalConfigFromEnv(), loadKubeConfig(), log).catch((err: unknown) => {
  log.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
