// The only code that talks to the Kubernetes API. Each activity is thin and idempotent, so a Temporal retry after a
// lost response or a crashed worker is always safe. Register: `Worker.create({ activities: createActivities(kc) })`.
import type * as k8s from '@kubernetes/client-node';
import type { WorkerMetrics } from '../observability/metrics.js';
import { makeClients, type KubeClients } from './clients.js';
import { pruneControllerRevisions } from './controller-revisions.js';
import { reportTeardown } from './report.js';
import { deletePod, deleteSeenWorkers, deleteWorkerStatefulSet, releaseForegroundDeletion } from './deletes.js';
import { recordEvent, recordEvents, tellWhenDone } from './events.js';
import { waitForPodsGone, waitForReplacementGroupReady } from './group-waits.js';
import { readGroupRestarts, writeGroupRestarts } from './group-restarts.js';
import { annotateLeaderPods, markGroupFailed, markGroupRecreated, markWorkersRefused } from './leader-pods.js';
import { getLeaderWorkerSet, getNodeLabel, getPod, getStatefulSet, listGroupPods, listGroups } from './reads.js';
import {
  ensureControllerRevisionOf,
  ensureHeadlessServiceOf,
  ensureLeaderStatefulSetOf,
  ensureWorkerStatefulSetOf,
} from './lws-target.js';
import { updateLeaderWorkerSetStatus } from './status.js';
import type { AllActivities, StuckResult } from './types.js';
import {
  waitForNamesFreed,
  waitForPodGone,
  waitForPodReady,
  waitForPodScheduled,
  waitForStatefulSetGone,
  waitForStatefulSetReady,
} from './waits.js';
import { beginTeardown } from './teardown-start.js';
import { forceDeletePods } from './dead-nodes.js';

export function createActivities(
  kc: k8s.KubeConfig,
  metrics?: WorkerMetrics,
  opts: Pick<KubeClients, 'replacementCheckMs'> = {},
): AllActivities {
  const c = makeClients(kc, metrics, opts);
  const activities: AllActivities = {
    reportTeardown: async (input) => reportTeardown(metrics, input),
    getLeaderWorkerSet: (ref) => getLeaderWorkerSet(c, ref),
    getPod: (key) => getPod(c, key),
    getStatefulSet: (key) => getStatefulSet(c, key),
    listGroups: (ref) => listGroups(c, ref),
    ensureControllerRevisionOf: (target) => ensureControllerRevisionOf(c, target),
    pruneControllerRevisions: (input) => pruneControllerRevisions(c, input),
    listGroupPods: (input) => listGroupPods(c, input),
    getNodeLabel: (input) => getNodeLabel(c, input),
    ensureHeadlessServiceOf: (target) => ensureHeadlessServiceOf(c, target),
    ensureLeaderStatefulSetOf: (target, options, from) => ensureLeaderStatefulSetOf(c, target, options, from),
    ensureWorkerStatefulSetOf: (input) => ensureWorkerStatefulSetOf(c, input),
    deleteWorkerStatefulSet: (input) => deleteWorkerStatefulSet(c, input),
    deletePod: (input) => deletePod(c, input),
    forceDeletePods: (input) => forceDeletePods(c, input),
    releaseForegroundDeletion: (input) => releaseForegroundDeletion(c, input),
    deleteSeenWorkers: (input) => deleteSeenWorkers(c, input),
    annotateLeaderPods: (input) => annotateLeaderPods(c, input),
    markWorkersRefused: (input) => markWorkersRefused(c, input),
    markGroupFailed: (input) => markGroupFailed(c, input),
    markGroupRecreated: (input) => markGroupRecreated(c, input),
    readGroupRestarts: (leaderStatefulSet) => readGroupRestarts(c, leaderStatefulSet),
    writeGroupRestarts: (input) => writeGroupRestarts(c, input),
    waitForPodGone: ({ tell, forceDeleteOnNodeNotReadySeconds, ...target }) =>
      tellWhenDone(c, waitForPodGone(c, target, { forceDeleteOnNodeNotReadySeconds }), tell, isGone),
    waitForStatefulSetGone: ({ tell, ...target }) => tellWhenDone(c, waitForStatefulSetGone(c, target), tell),
    waitForNamesFreed: (input) => waitForNamesFreed(c, input),
    waitForPodReady: (input) => waitForPodReady(c, input),
    waitForPodScheduled: (input) => waitForPodScheduled(c, input),
    waitForStatefulSetReady: ({ tell, ...target }) =>
      tellWhenDone(c, waitForStatefulSetReady(c, target), tell, (r) => 'readyAt' in r),
    waitForPodsGone: ({ tell, ...input }) => tellWhenDone(c, waitForPodsGone(c, input), tell, isGone),
    waitForReplacementGroupReady: (input) => waitForReplacementGroupReady(c, input),
    updateLeaderWorkerSetStatus: (input) => updateLeaderWorkerSetStatus(c, input),
    recordEvent: (event) => recordEvent(c, event),
    recordEvents: (events) => recordEvents(c, events),
    beginTeardown: (input) => beginTeardown(activities, input),
  };
  return activities;
}

/** A pod wait's Events tell of pods gone: none when it ended on stuck pods. */
const isGone = <R extends object>(result: R | StuckResult): boolean => !('stuck' in result);

export type * from './types.js';
export { HEARTBEAT_INTERVAL_MS } from './wait-support.js';
