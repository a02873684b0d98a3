// The worker and the trigger as separate OS processes, from the entries `npm run worker` / `npm run trigger` run (for
// the end-to-end tests, the demo and the benchmark), or both in one, the entry `npm start` runs: through tsx from
// src/, or compiled from dist/ with the same memory settings, as those scripts (bin/controller.sh) and the image do.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './paths.js';

/** `main`: worker and trigger in one process (src/main.ts). */
export type ControllerRole = 'worker' | 'trigger' | 'main';

export interface ControllerProcess {
  readonly role: ControllerRole;
  child: ChildProcess;
  /** Log lines so far (stdout and stderr). */
  lines: string[];
  /** Called with every new log line. */
  onLine?: (line: string) => void;
  /** SIGKILL, no cleanup: what a node failure does. */
  kill9(): Promise<void>;
  /** SIGTERM (graceful drain), then SIGKILL after 15 s. */
  stop(): Promise<void>;
}

/**
 * The memory settings the Deployments give each process (deploy/controller/*.yaml, checked by test/deploy), so that
 * local runs and the benchmark measure what a cluster runs. Without a heap limit V8 sizes its heap from the host's
 * memory (about 4 GB here) and leaves hundreds of MB of garbage uncollected. V8's young generation grows to 16 MB
 * semi-spaces in every isolate (the main thread and the workflow thread): capped at 1 MB it costs no measurable CPU
 * and about 70 MB of RSS less per process. glibc's malloc: one arena per thread by default, which
 * adds more for the Temporal core's threads; and a threshold for serving a block from mmap that rises with every large
 * block freed, after which large buffers (response bodies) stay in the heap as free space. A fixed 128 KiB threshold
 * returns them at once: about 30 MB of the worker's peak.
 */
const malloc = {
  MALLOC_ARENA_MAX: '2',
  GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072',
};
type MemorySettings = { NODE_OPTIONS: string } & typeof malloc;
const workerMemory: MemorySettings = { NODE_OPTIONS: '--max-old-space-size=256 --max-semi-space-size=1', ...malloc };
export const memorySettings: Record<ControllerRole, MemorySettings> = {
  worker: workerMemory,
  trigger: { NODE_OPTIONS: '--max-old-space-size=192 --max-semi-space-size=1', ...malloc },
  // No Deployment runs both roles (npm start does): the worker's settings, as the trigger adds little to its heap.
  main: workerMemory,
};

/**
 * The environment a role's process runs with: the memory settings, under whatever the caller sets itself (its own
 * NODE_OPTIONS replaces them, to measure others).
 */
export function controllerEnv(role: ControllerRole, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...memorySettings[role], ...env };
}

export function isControllerRole(value: string): value is ControllerRole {
  return Object.hasOwn(memorySettings, value);
}

/** The line each role logs once it serves, in the human and the JSON log format. */
const workerReady = /\[worker\] running|"component":"worker","msg":"running"/;
const triggerReady = /\[trigger\] watching|"component":"trigger","msg":"watching"/;
/** The lines a process logs once all its roles serve. */
const readyLines: Record<ControllerRole, RegExp[]> = {
  worker: [workerReady],
  trigger: [triggerReady],
  main: [workerReady, triggerReady],
};

const entryPoint: Record<ControllerRole, string> = { worker: 'worker/main', trigger: 'trigger/main', main: 'main' };

/** Starts the role's entry point; resolves once it logged that it is serving, appending its output to `logDir`. */
export function startControllerProcess(
  role: ControllerRole,
  env: NodeJS.ProcessEnv,
  logDir: string,
  /** Run the compiled entry in dist/ (after `npm run build`), as in production, instead of TypeScript through tsx. */
  compiled = false,
  /** Node's own flags, before the entry: those it refuses in NODE_OPTIONS (`--cpu-prof`). */
  nodeArgs: string[] = [],
): Promise<ControllerProcess> {
  mkdirSync(logDir, { recursive: true });
  const entry = compiled
    ? [...nodeArgs, join(repoRoot, 'dist', `${entryPoint[role]}.js`)]
    : [...nodeArgs, '--import', 'tsx', join(repoRoot, 'src', `${entryPoint[role]}.ts`)];
  const child = spawn(process.execPath, entry, {
    cwd: repoRoot,
    // A free metrics port each, unless the caller chose one: worker and trigger share this host.
    env: controllerEnv(role, { METRICS_PORT: '0', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const file = createWriteStream(join(logDir, `${role}.log`), { flags: 'a' });
  // Never outlive the process that started it (a test runner that exits early, a Ctrl-C).
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.off('exit', killOnExit));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const proc: ControllerProcess = {
    role,
    child,
    lines: [],
    async kill9() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
  return new Promise((resolve, reject) => {
    const waitingFor = new Set(readyLines[role]);
    let buffered = '';
    const onData = (chunk: Buffer) => {
      file.write(chunk);
      buffered += chunk.toString();
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const line of parts) {
        proc.lines.push(line);
        proc.onLine?.(line);
        for (const ready of waitingFor) if (ready.test(line)) waitingFor.delete(ready);
        if (waitingFor.size === 0) resolve(proc);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) =>
      reject(new Error(`${role} exited with ${code} before it was ready:\n${proc.lines.slice(-20).join('\n')}`)),
    );
    setTimeout(
      () => reject(new Error(`${role} not ready after 90 s:\n${proc.lines.slice(-20).join('\n')}`)),
      90_000,
    ).unref();
  });
}
