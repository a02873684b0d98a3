// How long a watch waits before it lists again. Restarts that fail in a row back off (an API server that is away is
// not hammered); a watch that ran a while before it ended (the API server closes watches every few minutes) starts
// over from the shortest delay.
export interface RestartBackoffOptions {
  initialMs: number;
  maxMs: number;
  /** A watch whose list succeeded this long before it ended counts as healthy. */
  stableMs: number;
}

export const defaultRestartBackoff: RestartBackoffOptions = { initialMs: 500, maxMs: 30_000, stableMs: 30_000 };

export class RestartBackoff {
  private delayMs: number;
  private listedAt?: number;

  constructor(private readonly opts: RestartBackoffOptions = defaultRestartBackoff) {
    this.delayMs = opts.initialMs;
  }

  /** The list of a (re)start succeeded. */
  listed(now: number): void {
    this.listedAt = now;
  }

  /** The watch ended (or its list failed): the delay before the next start. */
  next(now: number): number {
    if (this.listedAt !== undefined && now - this.listedAt >= this.opts.stableMs) this.delayMs = this.opts.initialMs;
    this.listedAt = undefined;
    const delay = this.delayMs;
    this.delayMs = Math.min(delay * 2, this.opts.maxMs);
    return delay;
  }
}
