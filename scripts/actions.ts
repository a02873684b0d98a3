// npm run actions [-- --quiet-seconds <s>] [--grace <s>] [--size <n>] [--price <dollars per million>]
// Temporal Actions per group lifecycle, from the `action` counter of the Temporal cluster of `npm run temporal:up`
// (started if it is not up): one LWS of 2 groups through provisioning, a Parallel and a Sequential rebuild, a rolling
// update, a scale-up and a scale-down, an hour of quiet (scaled from --quiet-seconds) and its deletion. Prints a
// Markdown table for docs/benchmarks.md. Run it alone, as the bench: its controller reconciles every LWS of the local
// cluster, and the counter is the whole Temporal namespace's.
import { parseArgs } from 'node:util';
import { actionsTable, measureActions } from '../tools/bench/actions.js';
import { createLogger } from '../src/log.js';

const log = createLogger('actions');
try {
  const { values } = parseArgs({
    options: {
      'quiet-seconds': { type: 'string', default: '300' },
      grace: { type: 'string', default: '2' },
      size: { type: 'string', default: '4' },
      price: { type: 'string', default: '50' },
    },
  });
  const number = (flag: keyof typeof values) => {
    const n = Number(values[flag]);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${flag} ${values[flag]}: expected a positive number`);
    return n;
  };
  const started = Date.now();
  const { rows } = await measureActions({
    quietSeconds: number('quiet-seconds'),
    graceSeconds: number('grace'),
    size: number('size'),
    log,
  });
  console.log(
    `\n\`npm run actions -- --quiet-seconds ${values['quiet-seconds']}\` on ${new Date().toISOString().slice(0, 10)}: ` +
      `groups of ${values.size} pods, grace ${values.grace} s, ${Math.round((Date.now() - started) / 1000)} s.\n`,
  );
  console.log(actionsTable(rows, number('price')));
  process.exit(0);
} catch (err) {
  log.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}
