// npm run cluster:down: stop every process of the local cluster and forget its data.
import { stopCluster } from '../tools/stack/cluster.js';
import { createLogger } from '../src/log.js';

const log = createLogger('cluster');
if (!(await stopCluster({ log }))) log.info('no local cluster was running');
