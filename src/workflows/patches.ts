// Patch IDs (workflow.patched): each marks a change in what a workflow does, so that histories recorded before the
// change replay the old way and new runs take the new one. Remove one with deprecatePatch once no run that started
// before its change can still be open.

/** A rebuild's replacement wait, when given up, is waited on until it has ended (cancellableWait). */
export const REPLACEMENT_WAIT_ENDS_FIRST = 'replacement-wait-ends-first';
