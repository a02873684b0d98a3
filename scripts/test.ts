// `npm test` after provisioning: every suite, in tiers, so that CI finds a failure early and stays within its budget.
//   1. The fast tier (unit and workflow tests: no cluster) runs beside the floor tier's first part, on the oldest
//      Kubernetes supported (LWS_KUBERNETES=floor): the stack, the CRD and upstream's webhook cases, admission, install, and
//      upstream's e2e cases, whose time is mostly their pods' grace periods.
//   2. The floor's termination suite, alone: it checks teardown durations against the grace period.
//   3. The main tier: every other suite, on the newest Kubernetes.
// `tsx scripts/test.ts floor` runs only the floor tier. Every tier runs even when an earlier one failed; the exit code
// is 1 if any did.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { versions } from '../tools/stack/versions.js';

const FLOOR_FIRST = [
  'test/stack/cluster.test.ts',
  'test/cluster/crd.test.ts',
  'test/cluster/upstream-webhook-cases.test.ts',
  'test/cluster/admission.test.ts',
  'test/deploy/apply.test.ts',
  'test/e2e/upstream-conformance.test.ts',
];
const FLOOR_TIMED = ['test/e2e/termination.test.ts'];
const FAST = ['test/unit/**/*.test.ts', 'test/workflows/**/*.test.ts'];
/** Suites that run only on the floor. */
const FLOOR_ONLY = ['test/e2e/termination.test.ts', 'test/e2e/upstream-conformance.test.ts'];
const MAIN = ['test/**/*.test.ts', ...[...FLOOR_ONLY, ...FAST].flatMap((f) => ['--ignore', f])];

/** Runs mocha; with `prefix`, each line of its output carries it (it runs beside another tier). */
function mocha(args: string[], opts: { floor?: boolean; prefix?: string } = {}): Promise<number> {
  const env = opts.floor ? { ...process.env, LWS_KUBERNETES: 'floor' } : process.env;
  const child = spawn(process.execPath, ['node_modules/mocha/bin/mocha.js', ...args], {
    env,
    stdio: opts.prefix ? ['ignore', 'pipe', 'pipe'] : 'inherit',
  });
  if (opts.prefix) {
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream! }).on('line', (line) => console.log(`${opts.prefix} ${line}`));
    }
  }
  return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
}

async function floorTier(prefix?: string): Promise<number[]> {
  const first = await mocha(FLOOR_FIRST, { floor: true, ...(prefix && { prefix }) });
  return [first, await mocha(FLOOR_TIMED, { floor: true })];
}

async function main(): Promise<void> {
  if (process.argv[2] === 'floor') {
    process.exitCode = (await floorTier()).some((c) => c !== 0) ? 1 : 0;
    return;
  }
  const started = Date.now();
  const since = () => `${Math.round((Date.now() - started) / 1000)}s`;
  const floor = `Kubernetes v${versions.kubernetesFloor}`;
  console.log(`=== tier 1: the fast tier, beside the floor tier (${floor}; its lines start with [floor])`);
  const floorFirst = mocha(FLOOR_FIRST, { floor: true, prefix: '[floor]' });
  const fast = await mocha(FAST);
  const first = await floorFirst;
  console.log(`=== tier 2: the floor's termination suite, ${floor} (${since()})`);
  const timed = await mocha(FLOOR_TIMED, { floor: true });
  console.log(`=== tier 3: the main tier, Kubernetes v${versions.kubernetes} (${since()})`);
  const rest = await mocha(MAIN);
  const codes = { fast, floor: first, 'floor termination': timed, main: rest };
  console.log(`=== done (${since()}): ${JSON.stringify(codes)}`);
  process.exitCode = Object.values(codes).some((c) => c !== 0) ? 1 : 0;
}

await main();
