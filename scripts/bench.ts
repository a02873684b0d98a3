// npm run bench [-- --quick] [--grace <seconds>] [--only <scenario,...>] [--out <dir>] [--one-process] [--together]
//   [--dev]
import { writeFileSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { markdown, targets, timelineSvg } from '../src/bench/report.js';
import { runBench } from '../src/bench/run.js';
import { createLogger } from '../src/log.js';
import { repoRoot } from '../src/stack/paths.js';

const log = createLogger('bench');
try {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      grace: { type: 'string', default: '10' },
      only: { type: 'string', default: '' },
      out: { type: 'string', default: join(repoRoot, 'docs') },
      dev: { type: 'boolean', default: false },
      'one-process': { type: 'boolean', default: false },
      together: { type: 'boolean', default: false },
    },
  });
  const graceSeconds = Number(values.grace);
  if (!Number.isInteger(graceSeconds) || graceSeconds < 1 || graceSeconds > 300) {
    throw new Error(`--grace ${values.grace}: expected whole seconds from 1 to 300`);
  }
  const out = resolve(values.out);
  mkdirSync(out, { recursive: true });
  const result = await runBench({
    graceSeconds,
    quick: values.quick,
    only: values.only.split(',').filter(Boolean),
    compiled: !values.dev,
    oneProcess: values['one-process'],
    together: values.together,
    progress: (line) => process.stdout.write(line + '\n'),
  });
  writeFileSync(join(out, 'benchmarks.json'), JSON.stringify(result, null, 2) + '\n');
  writeFileSync(join(out, 'bench-timeline.svg'), timelineSvg(result));
  writeFileSync(join(out, 'benchmarks.md'), markdown(result, 'bench-timeline.svg'));
  for (const t of targets(result)) process.stdout.write(`${t.met ? 'met ' : 'MISS'}  ${t.target}: ${t.measured}\n`);
  process.stdout.write(`results: ${join(out, 'benchmarks.md')}, benchmarks.json, bench-timeline.svg\n`);
  process.exit(0);
} catch (err) {
  log.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}
