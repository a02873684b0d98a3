// npm run api-chaos [-- --seed <n>] [--trials-per-fault <n>]
//   [--faults 429,5xx,reset,watch-cut,slow,apiserver-restart,etcd-restart] [--temporal dev-server|cluster]
//   [--grace <seconds>] [--replicas <n>] [--size <n>] [--out <file.json>]
// The API-fault campaign (tools/chaos/api-campaign.ts): the controller behind the fault proxy, and restarts of the API
// server and etcd. Prints the per-fault table; exits 1 if any trial broke an invariant.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { API_FAULT_KINDS, apiCampaignMarkdown, runApiCampaign } from '../tools/chaos/api-campaign.js';
import { kindsFlag, wholeFlag } from '../tools/chaos/flags.js';
import { createLogger } from '../src/log.js';
import { clusterBinaries, isProvisioned, provision } from '../tools/stack/provision.js';
import { parseTemporalTarget, temporalBinaries } from '../tools/stack/temporal-target.js';

const log = createLogger('api-chaos');

try {
  const { values } = parseArgs({
    options: {
      seed: { type: 'string', default: '1' },
      'trials-per-fault': { type: 'string', default: '4' },
      faults: { type: 'string', default: API_FAULT_KINDS.join(',') },
      temporal: { type: 'string', default: 'dev-server' },
      grace: { type: 'string', default: '10' },
      replicas: { type: 'string', default: '3' },
      size: { type: 'string', default: '3' },
      out: { type: 'string' },
    },
  });
  const faults = kindsFlag('faults', values.faults, API_FAULT_KINDS);
  const temporal = parseTemporalTarget(values.temporal);
  const binaries = [...clusterBinaries(), ...temporalBinaries(temporal)];
  if (!(await isProvisioned(binaries))) await provision({ log: createLogger('provision'), only: binaries });
  const result = await runApiCampaign({
    seed: wholeFlag('seed', values.seed, 0, 2 ** 31),
    trialsPerFault: wholeFlag('trials-per-fault', values['trials-per-fault'], 1, 1000),
    faults,
    temporal,
    graceSeconds: wholeFlag('grace', values.grace, 1, 120),
    // Two groups at least: a scale-down removes one.
    replicas: wholeFlag('replicas', values.replicas, 2, 20),
    size: wholeFlag('size', values.size, 1, 10),
    progress: (line) => process.stdout.write(line + '\n'),
  });
  if (values.out) writeFileSync(values.out, JSON.stringify(result, null, 2) + '\n');
  process.stdout.write('\n' + apiCampaignMarkdown(result));
  process.exit(result.trials.some((t) => t.violations.length) ? 1 : 0);
} catch (err) {
  log.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}
