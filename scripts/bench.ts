// npm run bench [-- --quick] [--grace <seconds>] [--only <scenario,...>] [--out <dir>] [--one-process] [--together]
//   [--dev] [--temporal dev-server|cluster] [--against upstream] [--scale] [--cpu-profile <dir>]
//   --scale: the scale scenarios too (10, 100 and 1,000 groups of 4 on KWOK; with --quick 4 and 8), after the others;
//   `--only scale-1000` runs one of them alone.
//   --against upstream: every scenario again with upstream LeaderWorkerSet's controller (built into the cache by
//   `npm run provision`), after this project's, on the same cluster.
//   --cpu-profile <dir>: V8 CPU profiles of the worker's and trigger's threads, and the windows measured; summarise
//   them with `npm run cpu-profile -- <dir>`.
// npm run bench -- --compare <first> <second>: prints a Markdown table of two runs side by side (each a
//   benchmarks.json or the --out folder holding one), e.g. the dev server's against the cluster's; runs nothing.
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { compareTemporal, markdown, targets, timelineSvg } from '../tools/bench/report.js';
import type { BenchResult } from '../tools/bench/results.js';
import { runBench } from '../tools/bench/run.js';
import { createLogger } from '../src/log.js';
import { repoRoot } from '../tools/stack/paths.js';
import { parseTemporalTarget } from '../tools/stack/temporal-target.js';

/** A result file, or the benchmarks.json of an --out folder. */
function readResult(path: string): BenchResult {
  const file = existsSync(path) && statSync(path).isDirectory() ? join(path, 'benchmarks.json') : path;
  return JSON.parse(readFileSync(file, 'utf8')) as BenchResult;
}

const log = createLogger('bench');
try {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      quick: { type: 'boolean', default: false },
      grace: { type: 'string', default: '10' },
      only: { type: 'string', default: '' },
      out: { type: 'string', default: join(repoRoot, 'docs') },
      dev: { type: 'boolean', default: false },
      'one-process': { type: 'boolean', default: false },
      together: { type: 'boolean', default: false },
      temporal: { type: 'string', default: 'dev-server' },
      compare: { type: 'boolean', default: false },
      against: { type: 'string' },
      scale: { type: 'boolean', default: false },
      'cpu-profile': { type: 'string' },
    },
  });
  if (values.compare) {
    if (positionals.length !== 2)
      throw new Error('--compare: expected two results, e.g. --compare dev.json cluster.json');
    process.stdout.write(compareTemporal(readResult(positionals[0]!), readResult(positionals[1]!)));
    process.exit(0);
  }
  if (positionals.length > 0) throw new Error(`unexpected argument ${positionals[0]} (results go with --compare)`);
  const temporal = parseTemporalTarget(values.temporal);
  const graceSeconds = Number(values.grace);
  if (!Number.isInteger(graceSeconds) || graceSeconds < 1 || graceSeconds > 300) {
    throw new Error(`--grace ${values.grace}: expected whole seconds from 1 to 300`);
  }
  if (values.against !== undefined && values.against !== 'upstream') {
    throw new Error(`--against ${values.against}: the one contender is upstream (upstream LeaderWorkerSet)`);
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
    temporal,
    ...(values.against === 'upstream' && { against: 'upstream' as const }),
    scale: values.scale,
    ...(values['cpu-profile'] !== undefined && { cpuProfile: resolve(values['cpu-profile']) }),
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
