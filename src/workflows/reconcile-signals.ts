// The trigger's `changed` signals to a reconcile run, and when its next pass is due. A change to a group is a burst of
// pod events: the signals that come within the batch window make one pass.
import { condition, defineSignal, setHandler, sleep } from '@temporalio/workflow';

/** What the trigger says of a change, beyond that there was one. */
export interface Change {
  /** A group became Ready while a rolling update is under way: its next step waits for exactly this. */
  groupReady?: boolean;
}

/** Something about this LWS changed; look again. Signals coalesce: many changes, one pass. */
export const changedSignal = defineSignal<[Change?]>('changed');

/** A quiet LWS is still looked at this often, in case an event was missed. */
const resyncInterval = '5 minutes';
/** How long changes are batched before a pass; the status lags by at most this much. */
const batchWindow = '1 second';

export class ChangeSignals {
  /** The first pass is due at once. */
  private changed = true;
  private groupReady = false;

  constructor() {
    setHandler(changedSignal, (change?: Change) => {
      this.changed = true;
      if (change?.groupReady) this.groupReady = true;
    });
  }

  /**
   * Resolves when the next pass is due: at a change, or at the resync. Once the generation is applied, the changes of
   * the batch window go in the same pass; while rolling, a group turned Ready ends the window early.
   */
  async nextPass({ applied, rolling }: { applied: boolean; rolling: boolean }): Promise<void> {
    const signalled = await condition(() => this.changed, resyncInterval);
    if (signalled && applied) {
      if (rolling) await condition(() => this.groupReady, batchWindow);
      else await sleep(batchWindow);
    }
    this.changed = false;
    this.groupReady = false;
  }

  /** The next pass comes at once, as after a change. */
  passNow(): void {
    this.changed = true;
  }
}
