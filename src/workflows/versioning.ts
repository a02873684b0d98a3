// Worker Versioning per workflow type (docs/operations.md, "Upgrades and Worker Versioning"). A lifecycle is short: it
// runs to its end on the build that started it. The reconcile lives as long as its generation, across builds: it moves
// to the current build at its next workflow task, so from the first release on its changes go behind a patch, and the
// replay test guards them.
import type { VersioningBehavior } from '@temporalio/common';
import { setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import { provisionGroup } from './provision-group.js';
import { reconcileLeaderWorkerSet } from './reconcile.js';
import { recreateGroup } from './recreate-group.js';
import { teardownGroup } from './teardown-group.js';

export const versioningBehaviors = {
  provisionGroup: 'PINNED',
  teardownGroup: 'PINNED',
  recreateGroup: 'PINNED',
  reconcileLeaderWorkerSet: 'AUTO_UPGRADE',
} as const satisfies Record<string, VersioningBehavior>;

export type VersionedWorkflowType = keyof typeof versioningBehaviors;

/**
 * The options of a run of `type` on a worker of this deployment version. None on an unversioned worker
 * (TEMPORAL_WORKER_VERSIONING=false): the server refuses a workflow task completed with a behaviour and no version.
 */
export function versioningOptions(
  type: VersionedWorkflowType,
  version: { deploymentName?: string } | undefined,
): { versioningBehavior?: VersioningBehavior } {
  return version?.deploymentName ? { versioningBehavior: versioningBehaviors[type] } : {};
}

/** Registers each type's options on its function; the SDK evaluates them when a run starts. */
export function applyVersioningBehaviors(
  workflows: Record<VersionedWorkflowType, (...args: never[]) => Promise<unknown>>,
): void {
  for (const type of Object.keys(versioningBehaviors) as VersionedWorkflowType[]) {
    setWorkflowOptions(() => versioningOptions(type, workflowInfo().currentDeploymentVersion), workflows[type]);
  }
}

applyVersioningBehaviors({ provisionGroup, teardownGroup, recreateGroup, reconcileLeaderWorkerSet });
