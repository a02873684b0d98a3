// The trigger's `changed` signals to a reconcile run, and when its next pass is due. The trigger batches a burst of
// pod events into one signal (trigger/starter.ts), so a signal makes a pass at once.
import { condition, defineSignal, setHandler, sleep } from '@temporalio/workflow';

/** Something about this LWS changed; look again. Signals coalesce: many changes, one pass. */
export const changedSignal = defineSignal('changed');

/** A quiet LWS is still looked at this often, in case an event was missed. */
export const RECONCILE_RESYNC_MS = 5 * 60_000;

export class ChangeSignals {
  /** The first pass is due at once. */
  private changed = true;
  private resyncDue = false;
  private resyncTimerRunning = false;

  constructor() {
    setHandler(changedSignal, () => {
      this.changed = true;
    });
  }

  /**
   * Resolves when the next pass is due: at a change, or at the resync. One resync timer runs at a time, started after
   * a pass that left no change waiting: each timer is a Temporal Action, and a busy LWS has many passes.
   */
  async nextPass(): Promise<void> {
    if (!this.changed && !this.resyncTimerRunning) {
      this.resyncTimerRunning = true;
      void sleep(RECONCILE_RESYNC_MS).then(() => {
        this.resyncTimerRunning = false;
        this.resyncDue = true;
      });
    }
    await condition(() => this.changed || this.resyncDue);
    this.changed = false;
    this.resyncDue = false;
  }

  /** The next pass comes at once, as after a change. */
  passNow(): void {
    this.changed = true;
  }
}
