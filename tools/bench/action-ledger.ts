// Temporal Actions by span of a bench run: the counter's growth between two marks goes to the span the first opened.
// The bench marks once the controller's workflows have closed (settle); the server reports its counters about once a
// second, so a mark waits that long before it reads, and the counter then holds what the span did.
import { setTimeout as sleep } from 'node:timers/promises';
import { actionsBetween, type ActionCounts } from './actions.js';

/** Longer than the server's reporting interval (about 1 s, measured on the dev server 1.9.1). */
export const REPORTING_DELAY_MS = 1200;

export class ActionLedger {
  private last: ActionCounts | undefined;
  private open: string | undefined;
  private readonly spans = new Map<string, ActionCounts>();

  constructor(
    private readonly scrape: () => Promise<ActionCounts>,
    private readonly delayMs = REPORTING_DELAY_MS,
  ) {}

  /** Ends the open span and opens `next` (none: what follows is counted nowhere). */
  async mark(next?: string): Promise<void> {
    if (this.delayMs > 0) await sleep(this.delayMs);
    const now = await this.scrape();
    if (this.open !== undefined && this.last !== undefined) {
      const sum = this.spans.get(this.open) ?? new Map<string, number>();
      for (const [type, n] of actionsBetween(this.last, now)) sum.set(type, (sum.get(type) ?? 0) + n);
      this.spans.set(this.open, sum);
    }
    this.last = now;
    this.open = next;
  }

  /** A span's Actions by action_type, most first; undefined if it was never opened and closed. */
  of(span: string): Record<string, number> | undefined {
    const counts = this.spans.get(span);
    return counts && Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]));
  }
}
