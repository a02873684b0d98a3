// `npm test`: every suite, in tiers, so that a broken unit or workflow test stops the run within minutes and the whole
// run stays within CI's budget. `tsx scripts/test.ts <tier>...` runs tiers alone (the `test:*` npm scripts).
//   fast       lint, format, typecheck and the unit tests side by side, then the workflow tests (time-skipping test
//              server). They need nothing but the test server. A failure stops the run.
//   floor      the oldest Kubernetes supported (LWS_KUBERNETES=floor): the stack, the CRD, upstream's webhook cases,
//              admission, install and upstream's e2e cases; then the termination suite alone (it compares teardown
//              durations with the grace period). In `npm test` its first part starts beside the fast tier on a
//              cluster of its own, and is stopped if the fast tier fails.
//   cluster    the stack, CRD, admission, activities and install suites on the newest Kubernetes.
//   e2e        the real worker, trigger and webhook on the newest Kubernetes.
// In `npm test` cluster and e2e run as one tier in two lanes, each on a cluster of its own (inLanes); the
// production-shaped Temporal is started once for every suite that uses it instead of once per suite. Each tier's time
// is printed at its end, and each suite's in a lane.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { createLogger, formatDuration } from '../src/log.js';
import { buildDist, distStaleReason } from '../tools/build/build.js';
import { repoRoot } from '../tools/stack/paths.js';
import { provision } from '../tools/stack/provision.js';
import { readTemporalClusterState, temporalClusterDown, temporalClusterUp } from '../tools/stack/temporal-cluster.js';
import { versions } from '../tools/stack/versions.js';

const UNIT = ['test/unit/**/*.test.ts'];
const WORKFLOWS = ['test/workflows/**/*.test.ts'];
const CLUSTER = ['test/stack/**/*.test.ts', 'test/cluster/**/*.test.ts', 'test/deploy/**/*.test.ts'];
const E2E = ['test/e2e/**/*.test.ts'];
const FLOOR_FIRST = [
  'test/stack/cluster.test.ts',
  'test/cluster/crd.test.ts',
  'test/cluster/upstream-webhook-cases.test.ts',
  'test/cluster/admission.test.ts',
  'test/deploy/apply.test.ts',
  'test/e2e/upstream-conformance.test.ts',
];
const FLOOR_TIMED = ['test/e2e/termination.test.ts'];
/** Suites `npm test` runs only on the floor: they depend on no newer API, and take long. */
const FLOOR_ONLY = ['test/e2e/termination.test.ts', 'test/e2e/upstream-conformance.test.ts'];
/**
 * The main tier's suites that take a minute or more, slowest first (the per-suite times `npm test` prints): the lanes
 * start them first so that no lane is left with a long one at the end.
 */
const SLOWEST_FIRST = [
  'test/e2e/bench.test.ts',
  'test/e2e/chaos.test.ts',
  'test/e2e/demo.test.ts',
  'test/e2e/upstream-manifests.test.ts',
  'test/e2e/api-faults.test.ts',
  'test/e2e/switch-controllers.test.ts',
  'test/e2e/cli.test.ts',
  'test/e2e/web-ui.test.ts',
  'test/e2e/upgrade.test.ts',
  'test/e2e/termination-with-upstream-features.test.ts',
  'test/e2e/two-clusters.test.ts',
  'test/e2e/provision.test.ts',
];
/**
 * The suites on real nodes (tools/stack/real-nodes.ts), slow ones: one mocha process in one lane, on nodes it starts
 * once. Their kube-proxy owns this host's Service rules, so two lanes' real nodes would undo each other's.
 */
const REAL_NODE_SUITES = ['test/e2e/real-nodes.test.ts', 'test/e2e/chart-on-real-nodes.test.ts'];
/** Runs after both lanes: it stops the production-shaped Temporal the other suites share, and starts it again. */
const AFTER_LANES = ['test/stack/temporal-cluster.test.ts'];
/** The local clusters the lanes run on (LWS_LOCAL_CLUSTER; '' is the checkout's own). */
const LANES = ['', 'b'];
const lanePrefix = (instance: string) => `[lane ${instance || 'a'}]`;

const log = createLogger('test');
const started = Date.now();
const since = () => formatDuration(Date.now() - started);
const FLOOR_ENV = { ...process.env, LWS_KUBERNETES: 'floor' };

interface Run {
  child: ChildProcess;
  done: Promise<number>;
}

interface RunOptions {
  env?: NodeJS.ProcessEnv;
  /** Each line of the output carries it (the command runs beside another). */
  prefix?: string;
  /** With `prefix`: the output's lines are also kept here. */
  lines?: string[];
}

/** A command of this checkout. */
function run(command: string, args: string[], opts: RunOptions = {}): Run {
  const child = spawn(command, args, {
    env: opts.env ?? process.env,
    stdio: opts.prefix ? ['ignore', 'pipe', 'pipe'] : 'inherit',
  });
  if (opts.prefix) {
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream! }).on('line', (line) => {
        console.log(`${opts.prefix} ${line}`);
        opts.lines?.push(line);
      });
    }
  }
  const done = new Promise<number>((resolve) => {
    child.on('exit', (code) => resolve(code ?? 1));
    child.on('error', () => resolve(1));
  });
  return { child, done };
}

/** Mocha options given after the tier names (`npm run test:unit -- --grep budget`). */
let mochaOptions: string[] = [];
const mocha = (files: string[], opts: RunOptions = {}) =>
  run(
    process.execPath,
    [
      'node_modules/mocha/bin/mocha.js',
      ...files,
      ...(opts.prefix || !process.stdout.isTTY ? ['--no-color'] : []),
      ...mochaOptions,
    ],
    opts,
  );
const npx = (bin: string, args: string[], prefix: string) =>
  run(process.execPath, [`node_modules/${bin}`, ...args], { prefix });
const tsx = (script: string, env: NodeJS.ProcessEnv, prefix = '[floor]') =>
  run(process.execPath, ['--import', 'tsx', script], { env, prefix }).done;

/** Times a tier and prints its end. */
async function tier(name: string, body: () => Promise<boolean>): Promise<boolean> {
  const from = Date.now();
  console.log(`\n=== ${name} (at ${since()})`);
  const ok = await body();
  console.log(`=== ${name}: ${ok ? 'passed' : 'FAILED'} in ${formatDuration(Date.now() - from)}`);
  return ok;
}

const allZero = (codes: number[]) => codes.every((c) => c === 0);

async function provisionTestServer(): Promise<void> {
  await provision({ log: createLogger('provision'), only: ['temporal-test-server'] });
}

async function provisionAll(): Promise<void> {
  await provision({ log: createLogger('provision') });
}

/** Lint, typecheck and unit tests at once: none needs anything provisioned. */
async function checks(): Promise<boolean> {
  const codes = await Promise.all([
    npx('eslint/bin/eslint.js', ['.'], '[lint]').done,
    npx('prettier/bin/prettier.cjs', ['--check', '.', '--log-level', 'warn'], '[format]').done,
    npx('typescript/bin/tsc', ['--noEmit'], '[typecheck]').done,
    mocha(UNIT, { prefix: '[unit]' }).done,
  ]);
  return allZero(codes);
}

async function workflows(): Promise<boolean> {
  await provisionTestServer();
  return (await mocha(WORKFLOWS).done) === 0;
}

async function floorTier(): Promise<boolean> {
  await provisionAll();
  const first = await mocha(FLOOR_FIRST, { env: FLOOR_ENV }).done;
  const timed = await mocha(FLOOR_TIMED, { env: FLOOR_ENV }).done;
  return allZero([first, timed]);
}

/** The production-shaped Temporal for every suite that uses it; stops it at the end only if it started it. */
async function sharedTemporal(): Promise<() => Promise<void>> {
  const temporalLog = createLogger('temporal');
  const before = await readTemporalClusterState();
  const state = await temporalClusterUp(temporalLog);
  const startedHere = before?.pids['frontend'] !== state.pids['frontend'];
  return async () => {
    if (startedHere) await temporalClusterDown(temporalLog);
  };
}

/**
 * dist/ built once before the lanes: suites in both run the controller from it (`npm start`, the bench's one-process
 * run), and each would build a stale one at the same time.
 */
async function buildDistIfStale(): Promise<void> {
  const outDir = `${repoRoot}/dist`;
  const reason = distStaleReason(outDir);
  if (reason === undefined) return;
  const buildLog = createLogger('build');
  buildLog.info('building dist/ for the lanes', { reason });
  await buildDist(outDir, (step) => buildLog.info(step));
}

/** The suite files of `dirs`, in order. */
function suitesIn(...dirs: string[]): string[] {
  return dirs.flatMap((dir) =>
    readdirSync(dir)
      .filter((f) => f.endsWith('.test.ts'))
      .sort()
      .map((f) => `${dir}/${f}`),
  );
}

/**
 * Runs `files` in lanes, one per local cluster in LANES: each lane runs one suite at a time as a mocha process of its
 * own, and takes the next one, slowest first, when the last ends. The suites mostly wait on grace periods and process
 * starts, so two lanes share two cores; each has its own cluster, and the production-shaped Temporal's suites take a
 * task queue of their own. A failed suite does not stop its lane. Resolves with the files that failed.
 */
async function inLanes(files: string[]): Promise<string[]> {
  // The clusters stay up after the lanes: AFTER_LANES runs on the first one.
  const realNodes = REAL_NODE_SUITES.filter((f) => files.includes(f));
  const alone = files.filter((f) => !realNodes.includes(f));
  const queue: string[][] = [
    ...(realNodes.length > 0 ? [realNodes] : []),
    ...SLOWEST_FIRST.filter((f) => alone.includes(f)).map((f) => [f]),
    ...alone.filter((f) => !SLOWEST_FIRST.includes(f)).map((f) => [f]),
  ];
  const failed: string[] = [];
  const times: Array<[string, number]> = [];
  /** What a failed suite printed from its failures on: the lanes' output interleaves it with the other lane's. */
  const failures: string[] = [];
  const lane = async (instance: string) => {
    const env = { ...process.env, LWS_LOCAL_CLUSTER: instance };
    const prefix = lanePrefix(instance);
    if ((await tsx('scripts/cluster-up.ts', env, prefix)) !== 0) {
      failed.push(`the cluster of ${prefix}`);
      return;
    }
    for (let suites = queue.shift(); suites !== undefined; suites = queue.shift()) {
      const file = suites.join(' ');
      const from = Date.now();
      const lines: string[] = [];
      const code = await mocha(suites, { env, prefix, lines }).done;
      if (suites === realNodes) await tsx('scripts/real-nodes-down.ts', env, prefix);
      times.push([file, Date.now() - from]);
      console.log(`${prefix} ${file}: ${code === 0 ? 'passed' : 'FAILED'} in ${formatDuration(Date.now() - from)}`);
      if (code !== 0) {
        failed.push(file);
        failures.push(`\n--- ${file} (${prefix}) ---`, ...failureReport(lines));
      }
    }
  };
  await Promise.all(LANES.map(lane));
  console.log('\nsuites by time:');
  for (const [file, ms] of times.sort((a, b) => b[1] - a[1]))
    console.log(`  ${formatDuration(ms).padStart(6)}  ${file}`);
  if (failures.length > 0) console.log(`\nthe failed suites' failures, again:${failures.join('\n')}`);
  return failed;
}

/** A mocha run's failures (from its "N failing" line on), else, when it ended before them, its last 60 lines. */
function failureReport(lines: string[]): string[] {
  const from = lines.findIndex((l) => /^\s*\d+ failing/.test(l));
  return from >= 0 ? lines.slice(from) : lines.slice(-60);
}

/** Everything, as CI runs it. */
async function everything(): Promise<boolean> {
  await provisionTestServer();
  // The floor's cluster and first suites start beside the fast tier, and are stopped if it fails: the fast tier needs
  // a core at most, the floor mostly waits on grace periods. The floor cluster is started here so that its two parts
  // share it.
  let floorFirst: Run | undefined;
  let stopping = false;
  const floorStarted = provisionAll()
    .then(() => tsx('scripts/cluster-up.ts', FLOOR_ENV))
    .then((code) => {
      if (code !== 0 || stopping) return code || 1;
      floorFirst = mocha(FLOOR_FIRST, { env: FLOOR_ENV, prefix: '[floor]' });
      return floorFirst.done;
    });
  const stopFloor = async () => {
    stopping = true;
    floorFirst?.child.kill('SIGTERM');
    await floorStarted.catch(() => 1);
    await tsx('scripts/cluster-down.ts', FLOOR_ENV);
    return false;
  };
  const fast =
    (await tier('fast tier: lint, format, typecheck, unit tests (the floor tier starts beside them)', checks)) &&
    (await tier('fast tier: workflow tests', async () => (await mocha(WORKFLOWS).done) === 0));
  if (!fast) return stopFloor();
  const codes: Record<string, number> = { fast: 0 };
  let stopTemporal: () => Promise<void> = async () => {};
  await tier(
    `floor tier, Kubernetes v${versions.kubernetesFloor}: the rest of its first part (dist/ and Temporal start beside it)`,
    async () => {
      const [first, stop] = await Promise.all([floorStarted, sharedTemporal(), buildDistIfStale()]);
      stopTemporal = stop;
      codes['floor'] = first;
      return first === 0;
    },
  );
  await tier(`floor tier, Kubernetes v${versions.kubernetesFloor}: the termination suite, alone`, async () => {
    codes['floor termination'] = await mocha(FLOOR_TIMED, { env: FLOOR_ENV }).done;
    return codes['floor termination'] === 0;
  });
  await tsx('scripts/cluster-down.ts', FLOOR_ENV);
  await tier(`cluster and e2e tiers, Kubernetes v${versions.kubernetes}, in ${LANES.length} lanes`, async () => {
    const files = suitesIn('test/cluster', 'test/deploy', 'test/e2e', 'test/stack').filter(
      (f) => !FLOOR_ONLY.includes(f) && !AFTER_LANES.includes(f),
    );
    const failed = await inLanes(files);
    codes['cluster and e2e'] = failed.length === 0 ? 0 : 1;
    if (failed.length > 0) console.log(`failed: ${failed.join(', ')}`);
    // On the first lane's cluster, which is still up.
    codes['after the lanes'] = await mocha(AFTER_LANES).done;
    for (const instance of LANES) {
      await tsx('scripts/cluster-down.ts', { ...process.env, LWS_LOCAL_CLUSTER: instance }, lanePrefix(instance));
    }
    return allZero([codes['cluster and e2e'], codes['after the lanes']]);
  });
  await stopTemporal();
  console.log(`\n=== done in ${since()}: ${JSON.stringify(codes)}`);
  return allZero(Object.values(codes));
}

const tiers: Record<string, () => Promise<boolean>> = {
  fast: async () => (await checks()) && (await workflows()),
  unit: async () => (await mocha(UNIT).done) === 0,
  workflows,
  floor: floorTier,
  cluster: async () => (await provisionAll(), (await mocha(CLUSTER).done) === 0),
  e2e: async () => (await provisionAll(), (await mocha(E2E).done) === 0),
};

async function main(): Promise<boolean> {
  const args = process.argv.slice(2);
  const asked = args.filter((a) => a in tiers);
  mochaOptions = args.filter((a) => !(a in tiers));
  if (args.length === 0) return everything();
  if (asked.length === 0) {
    throw new Error(`name a tier (${Object.keys(tiers).join(', ')}), or none for all; mocha options may follow`);
  }
  for (const name of asked) {
    const body = tiers[name]!;
    if (!(await tier(`${name} tier`, body))) return false;
  }
  return true;
}

try {
  process.exitCode = (await main()) ? 0 : 1;
} catch (err) {
  log.error((err as Error).message);
  process.exitCode = 1;
}
