// When a long-lived run starts afresh (continue-as-new): its history stays short however long it lives, so a worker
// that picks it up replays little.
import { workflowInfo } from '@temporalio/workflow';

/** Events in a run's history past which it continues as new, even before the server suggests it. */
export const HISTORY_EVENTS_LIMIT = 2000;

export function shouldContinueAsNew(): boolean {
  const { continueAsNewSuggested, historyLength } = workflowInfo();
  return continueAsNewSuggested || historyLength > HISTORY_EVENTS_LIMIT;
}
