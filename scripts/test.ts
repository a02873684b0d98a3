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
// In `npm test` cluster and e2e run as one tier on one cluster; the production-shaped Temporal is started once for
// every suite that uses it instead of once per suite. Each tier's time is printed at its end.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { createLogger, formatDuration } from '../src/log.js';
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

const log = createLogger('test');
const started = Date.now();
const since = () => formatDuration(Date.now() - started);
const FLOOR_ENV = { ...process.env, LWS_KUBERNETES: 'floor' };

interface Run {
  child: ChildProcess;
  done: Promise<number>;
}

/** A command of this checkout; with `prefix`, each line of its output carries it (it runs beside another). */
function run(command: string, args: string[], opts: { env?: NodeJS.ProcessEnv; prefix?: string } = {}): Run {
  const child = spawn(command, args, {
    env: opts.env ?? process.env,
    stdio: opts.prefix ? ['ignore', 'pipe', 'pipe'] : 'inherit',
  });
  if (opts.prefix) {
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream! }).on('line', (line) => console.log(`${opts.prefix} ${line}`));
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
const mocha = (files: string[], opts: { env?: NodeJS.ProcessEnv; prefix?: string } = {}) =>
  run(process.execPath, ['node_modules/mocha/bin/mocha.js', ...files, ...mochaOptions], opts);
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
  await tier(`floor tier, Kubernetes v${versions.kubernetesFloor}: the rest of its first part`, async () => {
    const [first, stop] = await Promise.all([floorStarted, sharedTemporal()]);
    stopTemporal = stop;
    codes['floor'] = first;
    return first === 0;
  });
  await tier(`floor tier, Kubernetes v${versions.kubernetesFloor}: the termination suite, alone`, async () => {
    codes['floor termination'] = await mocha(FLOOR_TIMED, { env: FLOOR_ENV }).done;
    return codes['floor termination'] === 0;
  });
  await tsx('scripts/cluster-down.ts', FLOOR_ENV);
  await tier(`cluster and e2e tiers, Kubernetes v${versions.kubernetes}`, async () => {
    const ignore = FLOOR_ONLY.flatMap((f) => ['--ignore', f]);
    // test/stack last: its Temporal suite ends with temporal:down, which would stop the shared server early.
    const files = [...CLUSTER.filter((f) => !f.startsWith('test/stack/')), ...E2E, 'test/stack/**/*.test.ts'];
    codes['cluster and e2e'] = await mocha([...files, ...ignore]).done;
    return codes['cluster and e2e'] === 0;
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
