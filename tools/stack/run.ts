import { spawn } from 'node:child_process';
import { formatDuration, type Logger } from '../../src/log.js';

/** A failed step of a long operation: what was being done, the command, and what the user can try. */
export class StepError extends Error {
  constructor(
    readonly step: string,
    readonly command: string,
    readonly hint: string,
    readonly output = '',
  ) {
    super(`${step} failed: ${command}${output ? `\n--- last output ---\n${output}` : ''}\nTry: ${hint}`);
    this.name = 'StepError';
  }
}

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Printed with the elapsed time every `heartbeatMs` while the command runs, so long builds show progress. */
  progress?: { log: Logger; what: string; heartbeatMs?: number };
  hint: string;
  step: string;
}

/** Runs a command to completion; keeps its last lines of output for the error message. */
export function runCommand(cmd: string, args: string[], opts: RunOptions): Promise<string> {
  const shown = [cmd, ...args].map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ');
  return new Promise((resolvePromise, reject) => {
    const started = Date.now();
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const keep = (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-4000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = opts.progress
      ? setInterval(() => {
          opts.progress!.log.info(`still ${opts.progress!.what}`, { elapsed: formatDuration(Date.now() - started) });
        }, opts.progress.heartbeatMs ?? 30_000)
      : undefined;
    child.on('error', (err) => {
      if (timer) clearInterval(timer);
      reject(new StepError(opts.step, shown, opts.hint, err.message));
    });
    child.on('close', (code, signal) => {
      if (timer) clearInterval(timer);
      if (code === 0) resolvePromise(tail);
      else
        reject(
          new StepError(
            opts.step,
            `${shown} (exit ${code ?? signal})`,
            opts.hint,
            tail.trim().split('\n').slice(-25).join('\n'),
          ),
        );
    });
  });
}
