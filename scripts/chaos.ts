// npm run chaos [-- --seed <n>] [--trials <n>] [--temporal dev-server|cluster] [--grace <seconds>]
//   [--faults worker,trigger,both,temporal] [--out <file.json>]
// The fault campaign (tools/chaos/campaign.ts). Prints the per-fault table for docs/reliability.md; exits 1 if any
// trial broke an invariant.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { runCampaign } from '../tools/chaos/campaign.js';
import { FAULT_KINDS } from '../tools/chaos/plan.js';
import { campaignMarkdown } from '../tools/chaos/report.js';
import { kindsFlag, wholeFlag } from '../tools/chaos/flags.js';
import { createLogger } from '../src/log.js';
import { clusterBinaries, isProvisioned, provision } from '../tools/stack/provision.js';
import { parseTemporalTarget, temporalBinaries } from '../tools/stack/temporal-target.js';

const log = createLogger('chaos');

try {
  const { values } = parseArgs({
    options: {
      seed: { type: 'string', default: '1' },
      trials: { type: 'string', default: '32' },
      temporal: { type: 'string', default: 'dev-server' },
      grace: { type: 'string', default: '10' },
      faults: { type: 'string', default: FAULT_KINDS.join(',') },
      out: { type: 'string' },
    },
  });
  const faults = kindsFlag('faults', values.faults, FAULT_KINDS);
  const temporal = parseTemporalTarget(values.temporal);
  const binaries = [...clusterBinaries(), ...temporalBinaries(temporal)];
  if (!(await isProvisioned(binaries))) await provision({ log: createLogger('provision'), only: binaries });
  const result = await runCampaign({
    seed: wholeFlag('seed', values.seed, 0, 2 ** 31),
    trials: wholeFlag('trials', values.trials, 1, 10_000),
    temporal,
    graceSeconds: wholeFlag('grace', values.grace, 1, 120),
    replicas: 3,
    size: 3,
    faults,
    progress: (line) => process.stdout.write(line + '\n'),
  });
  if (values.out) writeFileSync(values.out, JSON.stringify(result, null, 2) + '\n');
  process.stdout.write('\n' + campaignMarkdown(result));
  process.exit(result.trials.some((t) => t.violations.length) ? 1 : 0);
} catch (err) {
  log.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}
