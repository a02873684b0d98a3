// `npm run trigger`: the trigger service process.
import { resolveClusterName } from '../config/cluster.js';
import { loadKubeConfig } from '../config/kubernetes.js';
import { temporalConfigFromEnv } from '../config/temporal.js';
import { checkLogSettings, createLogger } from '../log.js';
import { runTrigger } from './run.js';

const log = createLogger('trigger');
try {
  checkLogSettings();
  const kc = loadKubeConfig(process.env, 'trigger');
  const temporal = temporalConfigFromEnv(process.env, await resolveClusterName(kc));
  const running = await runTrigger(temporal, kc, log);
  const stop = (signal: string) => {
    log.info('stopping', { signal });
    void running.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
} catch (err) {
  log.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}
