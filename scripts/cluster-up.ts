// npm run cluster:up: start the local Kubernetes cluster (or report the running one) and print how to use it.
import { startCluster } from '../tools/stack/cluster.js';
import { createLogger } from '../src/log.js';
import { clusterBinaries, isProvisioned, provision } from '../tools/stack/provision.js';

const log = createLogger('cluster');
try {
  // The KWOK cluster's binaries only: real nodes, and their binaries, are the business of the tests that use them.
  const binaries = clusterBinaries();
  if (!(await isProvisioned(binaries))) await provision({ log: createLogger('provision'), only: binaries });
  const state = await startCluster({ log });
  process.stdout.write(`export KUBECONFIG=${state.kubeconfig}\n`);
  process.stderr.write('Stop it with: npm run cluster:down\n');
} catch (err) {
  log.error((err as Error).message);
  process.exit(1);
}
