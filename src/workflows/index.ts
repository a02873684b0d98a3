// Every workflow the worker runs; the worker bundles this file.
export { reconcileLeaderWorkerSet, changedSignal } from './reconcile.js';
export { provisionGroup } from './provision-group.js';
export { teardownGroup } from './teardown-group.js';
export { recreateGroup } from './recreate-group.js';
export { timelineQuery } from './timeline.js';
export { versioningBehaviors } from './versioning.js';
