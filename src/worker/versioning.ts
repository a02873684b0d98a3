// The worker's Worker Deployment Version (docs/operations.md, "Upgrades and Worker Versioning"): its build ID, and making it the current version.
import { createHash } from 'node:crypto';
import { isGrpcServiceError, type WorkflowService } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type { WorkerDeploymentOptions } from '@temporalio/worker';
import { VERSION } from '../config/kubernetes.js';
import type { SetCurrentPolicy } from '../config/temporal.js';
import type { Logger } from '../log.js';

/**
 * The build ID of a workflow bundle: the package version, for people, and a digest of the bundled code, which changes
 * with any change to what the workflows run (their sources, src/model, the SDK), and with nothing else.
 */
export function buildIdOf(bundleCode: string | Buffer): string {
  return `${VERSION}-${createHash('sha256').update(bundleCode).digest('hex').slice(0, 12)}`;
}

/** Every workflow type registers its own behaviour (src/workflows/versioning.ts); a type without one is pinned. */
export function deploymentOptions(version: WorkerDeploymentVersion): WorkerDeploymentOptions {
  return { version, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' };
}

/** temporal.api.enums.v1.WorkerDeploymentVersionStatus (test/unit/worker-versioning.test.ts checks the numbers). */
export const versionStatus = { 1: 'inactive', 2: 'current', 3: 'ramping', 4: 'draining', 5: 'drained' } as const;

export function setCurrentCommand(version: WorkerDeploymentVersion): string {
  return `temporal worker deployment set-current-version --deployment-name ${version.deploymentName} --build-id ${version.buildId}`;
}

/**
 * What to do when the server refuses: the current version polls a task queue this build does not (another controller
 * shares the deployment name, or the task queue was renamed), and the server will not leave that queue unserved.
 */
export function setCurrentHint(error: string): string | undefined {
  if (!/missing active task queues/i.test(error)) return undefined;
  return (
    'the current version serves a task queue this worker does not poll: give each TEMPORAL_TASK_QUEUE its own ' +
    'TEMPORAL_WORKER_DEPLOYMENT (the default), or, if that queue is retired, promote with --ignore-missing-task-queues'
  );
}

/** `current`: it was already; `made-current`: this call did it; `left`: the policy left it as it was. */
export type SetCurrentOutcome = 'current' | 'made-current' | 'left' | 'failed';

export interface SetCurrentOptions {
  namespace: string;
  version: WorkerDeploymentVersion;
  policy: SetCurrentPolicy;
  log: Logger;
  identity?: string;
  /** False once the worker stops: waiting for the server to see its polls ends then. */
  running?: () => boolean;
  timeoutMs?: number;
  intervalMs?: number;
}

/** Answers that the next attempt may not get: the version is not registered yet (its first poll), or the server is busy. */
const retried = new Set([
  4 /* DEADLINE_EXCEEDED */, 5 /* NOT_FOUND */, 8 /* RESOURCE_EXHAUSTED */, 10 /* ABORTED */, 14 /* UNAVAILABLE */,
]);

/**
 * Makes this worker's version the current one of its deployment if the policy says so. A version exists on the server
 * once its worker has polled: the status is read, then set, only after that, so a build that never polled is never
 * made current. Never throws: a worker whose version is not current still serves the runs pinned to it.
 */
export async function setCurrentVersion(
  connection: { workflowService: WorkflowService },
  opts: SetCurrentOptions,
): Promise<SetCurrentOutcome> {
  const { namespace, version, policy, log } = opts;
  const service = connection.workflowService;
  const promote = setCurrentCommand(version);
  if (policy === 'never') {
    log.info('this build gets new workflows once it is made the current version', { promote });
    return 'left';
  }
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let lastError = '';
  while ((opts.running?.() ?? true) && Date.now() < deadline) {
    try {
      const { workerDeploymentVersionInfo: info } = await service.describeWorkerDeploymentVersion({
        namespace,
        deploymentVersion: version,
      });
      const status = versionStatus[(info?.status ?? 0) as keyof typeof versionStatus];
      if (status === 'current') return 'current';
      if (status === undefined) {
        lastError = `version status ${info?.status ?? 'missing'}`;
      } else if (policy === 'if-new' && status !== 'inactive') {
        log.warn('this build was the current version before and is not now (a rollback?): left as it is', {
          status,
          promote,
        });
        return 'left';
      } else {
        const { previousDeploymentVersion: previous } = await service.setWorkerDeploymentCurrentVersion({
          namespace,
          deploymentName: version.deploymentName,
          buildId: version.buildId,
          identity: opts.identity,
        });
        log.info('made this build the current version', { previous: previous?.buildId || undefined });
        return 'made-current';
      }
    } catch (err) {
      if (!isGrpcServiceError(err) || !retried.has(err.code)) {
        const error = (err as Error).message;
        log.error('cannot make this build the current version', { error, promote, hint: setCurrentHint(error) });
        return 'failed';
      }
      lastError = err.message;
    }
    await new Promise((resolve) => setTimeout(resolve, opts.intervalMs ?? 250));
  }
  if (!(opts.running?.() ?? true)) return 'left';
  log.error('cannot make this build the current version: the server has not seen its polls', {
    error: lastError,
    promote,
  });
  return 'failed';
}
