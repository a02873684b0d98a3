// Patch IDs (workflow.patched): each marks a change in what a workflow does, so that histories recorded before the
// change replay the old way and new runs take the new one. Remove one with deprecatePatch once no run that started
// before its change can still be open.

/** A rebuild's replacement wait, when given up, is waited on until it has ended (cancellableWait). */
export const REPLACEMENT_WAIT_ENDS_FIRST = 'replacement-wait-ends-first';

/** A teardown's first round (the Parallel delete and the reads) is one local activity, and its two Events one more. */
export const TEARDOWN_FIRST_ROUND_IN_ONE_CALL = 'teardown-first-round-in-one-call';

/** The reconcile lists the groups first and steers the leader StatefulSet's size and partition from them. */
export const ROLLOUT_STEERED_BY_GROUPS = 'rollout-steered-by-groups';

/** A teardown judges its lifecycle again from its first reads, where they differ from the trigger's judgement. */
export const LIFECYCLE_FROM_FIRST_READS = 'lifecycle-from-first-reads';

/** The reconcile's status says when it steers a rolling update (UpdateInProgress, reason RollingUpdate). */
export const ROLLING_UPDATE_IN_STATUS = 'rolling-update-in-status';

/** While rolling, the reconcile's batch window ends when a signal says a group became Ready. */
export const ROLLOUT_STEP_AT_GROUP_READY = 'rollout-step-at-group-ready';

/** The reconcile reads the LWS and lists its groups at the same time, one round trip instead of two per pass. */
export const RECONCILE_READS_AT_ONCE = 'reconcile-reads-at-once';

/**
 * The reconcile keeps the LWS it first read: one deleted and created again under the same name (another uid) is
 * another LWS, taken over by a fresh run.
 */
export const RECONCILE_KEEPS_ONE_LWS = 'reconcile-keeps-one-lws';

/** A teardown takes the policy of a leader created before the LWS of its name from the leader, not that LWS. */
export const POLICY_OF_ITS_OWN_LWS = 'policy-of-its-own-lws';
