// npm run temporal:down [-- --wipe]: stop every process of the production-shaped Temporal; --wipe also forgets its data.
import { createLogger } from '../src/log.js';
import { temporalClusterDown } from '../tools/stack/temporal-cluster.js';

await temporalClusterDown(createLogger('temporal'), { wipe: process.argv.includes('--wipe') });
