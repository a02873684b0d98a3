// npm run demo [-- --grace <seconds>] [--exit] [--namespace <name>] [--temporal dev-server|cluster]
import { parseArgs } from 'node:util';
import { runDemo } from '../tools/demo/demo.js';
import { createLogger } from '../src/log.js';
import { parseTemporalTarget } from '../tools/stack/temporal-target.js';

const log = createLogger('demo');
try {
  const { values } = parseArgs({
    options: {
      grace: { type: 'string', default: '20' },
      exit: { type: 'boolean', default: false },
      namespace: { type: 'string', default: 'lws-demo' },
      temporal: { type: 'string', default: 'dev-server' },
    },
  });
  const temporal = parseTemporalTarget(values.temporal);
  const graceSeconds = Number(values.grace);
  if (!Number.isInteger(graceSeconds) || graceSeconds < 1 || graceSeconds > 600) {
    throw new Error(`--grace ${values.grace}: expected whole seconds from 1 to 600`);
  }
  await runDemo({ graceSeconds, exit: values.exit, namespace: values.namespace, temporal });
  process.exit(0);
} catch (err) {
  log.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}
