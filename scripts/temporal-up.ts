// npm run temporal:up [-- --shards <n>]: start the production-shaped Temporal on loopback (or report the running one)
// and print how to point the controller at it.
import { createLogger } from '../src/log.js';
import { isProvisioned, provision, temporalClusterBinaries } from '../tools/stack/provision.js';
import { temporalClusterUp } from '../tools/stack/temporal-cluster.js';

const log = createLogger('temporal');
const at = process.argv.indexOf('--shards');
const shards = at === -1 ? undefined : Number(process.argv[at + 1]);
try {
  if (shards !== undefined && !(Number.isInteger(shards) && shards >= 1)) {
    throw new Error(`--shards must be a whole number of at least 1, got ${process.argv[at + 1]}`);
  }
  if (!(await isProvisioned(temporalClusterBinaries))) {
    await provision({ log: createLogger('provision'), only: temporalClusterBinaries });
  }
  const state = await temporalClusterUp(log, shards === undefined ? {} : { shards });
  process.stdout.write(`export TEMPORAL_ADDRESS=${state.address} TEMPORAL_NAMESPACE=${state.namespace}\n`);
  process.stderr.write(`Web UI: ${state.uiUrl}\nStop it with: npm run temporal:down\n`);
} catch (err) {
  log.error((err as Error).message);
  process.exit(1);
}
