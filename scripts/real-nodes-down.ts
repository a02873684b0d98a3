// Stops the local cluster's real nodes (tools/stack/real-nodes.ts) and leaves the cluster running: `npm test` runs it
// once their suites are done, so that their kubelets spend no CPU beside the suites that follow.
import { createLogger } from '../src/log.js';
import { stopRealNodes } from '../tools/stack/real-nodes.js';

const log = createLogger('real-nodes');
if (!(await stopRealNodes({ log }))) log.info('no real nodes were running');
