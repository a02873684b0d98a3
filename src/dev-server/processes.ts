import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** Starts a long-running server in its own process group, detached from ours, with output appended to a log file. */
export function spawnDaemon(
  cmd: string,
  args: string[],
  logFile: string,
  env: NodeJS.ProcessEnv = process.env,
  cwd?: string,
): number {
  const out = openSync(logFile, 'a');
  try {
    const child = spawn(cmd, args, { detached: true, stdio: ['ignore', out, out], env, cwd });
    if (child.pid === undefined) throw new Error(`could not start ${cmd}; see ${logFile}`);
    child.unref();
    return child.pid;
  } finally {
    closeSync(out);
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** SIGTERM to the process group, then SIGKILL after `graceMs`; resolves once the leader process is gone. */
export async function stopProcessGroup(pid: number, graceMs = 5000): Promise<void> {
  const signalGroup = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      try {
        process.kill(pid, sig);
      } catch {
        /* already gone */
      }
    }
  };
  if (!isAlive(pid)) return;
  signalGroup('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < deadline) await sleep(50);
  if (isAlive(pid)) {
    signalGroup('SIGKILL');
    while (isAlive(pid)) await sleep(20);
  }
}

/**
 * Below Linux's ephemeral range (32768-60999): a port the kernel gives out as a client's source port can be taken by
 * any outgoing connection between our check and the server's bind. Temporal also stores its membership ports as a
 * signed 16-bit integer.
 */
export const SERVER_PORTS = { from: 20000, to: 32767 };
/** Handed out by this process already: a server may not have bound its port yet. */
const handedOut = new Set<number>();

/** A TCP port on 127.0.0.1 that nobody listens on right now: any the kernel picks, or one in `range`. */
export async function freePort(range?: { from: number; to: number }): Promise<number> {
  if (range === undefined) return listenOnce(0);
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = range.from + Math.floor(Math.random() * (range.to - range.from + 1));
    if (handedOut.has(port)) continue;
    const got = await listenOnce(port).catch(() => undefined);
    if (got !== undefined) {
      handedOut.add(got);
      return got;
    }
  }
  throw new Error(`no free port between ${range.from} and ${range.to} on 127.0.0.1`);
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** Runs `start`, and again (up to `attempts` times in all) while it fails in a way `retryable` accepts. */
export async function startRetrying<T>(
  start: () => Promise<T>,
  retryable: (err: unknown) => boolean,
  attempts = 3,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= attempts || !retryable(err)) throw err;
    }
  }
}

/** Thrown by a `waitFor` check to stop waiting at once (the awaited thing can no longer happen). */
export class GiveUp extends Error {
  override name = 'GiveUp';
}

/** Polls `check` until it returns a value (not undefined) or the deadline passes; the error names what we waited for. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  opts: { timeoutMs: number; intervalMs?: number; hint?: string },
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      if (err instanceof GiveUp) {
        throw new Error(`gave up waiting for ${what}: ${err.message}${opts.hint ? `. ${opts.hint}` : ''}`, {
          cause: err,
        });
      }
      lastError = err;
    }
    if (Date.now() > deadline) {
      const detail = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(
        `timed out after ${opts.timeoutMs / 1000}s waiting for ${what}${detail}${opts.hint ? `. ${opts.hint}` : ''}`,
      );
    }
    await sleep(opts.intervalMs ?? 200);
  }
}
