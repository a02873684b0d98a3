// npm run chaos [-- --seed <n>] [--trials <n>] [--temporal dev-server|cluster] [--grace <seconds>]
//   [--faults worker,trigger,both,temporal] [--out <file.json>]
// The fault campaign (src/chaos/campaign.ts). Prints the per-fault table for docs/reliability.md; exits 1 if any
// trial broke an invariant.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { runCampaign } from '../src/chaos/campaign.js';
import { FAULT_KINDS, type FaultKind } from '../src/chaos/plan.js';
import { campaignMarkdown } from '../src/chaos/report.js';
import { createLogger } from '../src/log.js';
import { isProvisioned, provision } from '../src/stack/provision.js';
import { parseTemporalTarget } from '../src/stack/temporal-target.js';

const log = createLogger('chaos');

function whole(flag: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`--${flag} ${value}: expected a whole number from ${min} to ${max}`);
  return n;
}

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
  const faults = values.faults.split(',').filter(Boolean);
  for (const f of faults) {
    if (!(FAULT_KINDS as readonly string[]).includes(f))
      throw new Error(`--faults ${f}: expected some of ${FAULT_KINDS.join(', ')}`);
  }
  if (!(await isProvisioned())) await provision({ log: createLogger('provision') });
  const result = await runCampaign({
    seed: whole('seed', values.seed, 0, 2 ** 31),
    trials: whole('trials', values.trials, 1, 10_000),
    temporal: parseTemporalTarget(values.temporal),
    graceSeconds: whole('grace', values.grace, 1, 120),
    replicas: 3,
    size: 3,
    faults: faults as FaultKind[],
    progress: (line) => process.stdout.write(line + '\n'),
  });
  if (values.out) writeFileSync(values.out, JSON.stringify(result, null, 2) + '\n');
  process.stdout.write('\n' + campaignMarkdown(result));
  process.exit(result.trials.some((t) => t.violations.length) ? 1 : 0);
} catch (err) {
  log.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}
