// The worker's stop on SIGTERM (docs/operations.md, "Upgrades"). A build that is no longer current keeps polling until
// no open run is pinned to it: in a rolling update of the worker Deployment, the old pods stay (Terminating, bounded by
// terminationGracePeriodSeconds) until the teardowns and provisionings they started have ended, then exit.
import type { WorkflowService } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type { Logger } from '../log.js';
import { versionStatus } from './versioning.js';

/** The visibility query for the open runs pinned to `version` (the reconciles auto-upgrade: they are not counted). */
export function pinnedRunsQuery(version: WorkerDeploymentVersion): string {
  const quoted = `${version.deploymentName}:${version.buildId}`.replaceAll("'", "''");
  return (
    `ExecutionStatus = 'Running' AND TemporalWorkflowVersioningBehavior = 'Pinned' AND ` +
    `TemporalWorkerDeploymentVersion = '${quoted}'`
  );
}

/**
 * `current`: the build still gets new work (a pod restart or a node drain, not an upgrade): its other workers, or the
 * pod that replaces this one, serve its runs, so it stops at once. `drained`: no run is pinned to it any more.
 * `interrupted`: a second signal. `unreachable`: Temporal did not answer for `unreachableMs`; the runs left then wait
 * for a worker of this build, or are moved to another (docs/operations.md).
 */
export type DrainOutcome = 'current' | 'drained' | 'interrupted' | 'unreachable';

export interface DrainOptions {
  service: WorkflowService;
  namespace: string;
  version: WorkerDeploymentVersion;
  log: Logger;
  /** True once the process was told to stop again: the drain ends. */
  interrupted: () => boolean;
  intervalMs?: number;
  progressEveryMs?: number;
  /** How long one call may take: the SDK's client retries a server that is down for much longer. */
  callMs?: number;
  unreachableMs?: number;
}

function answerWithin<T>(ms: number, call: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from Temporal within ${ms} ms`)), ms);
  });
  return Promise.race([call, late]).finally(() => clearTimeout(timer));
}

export async function drainPinnedRuns(opts: DrainOptions): Promise<DrainOutcome> {
  const { service, namespace, version, log } = opts;
  const intervalMs = opts.intervalMs ?? 1000;
  const progressEveryMs = opts.progressEveryMs ?? 15_000;
  const callMs = opts.callMs ?? 5000;
  const query = pinnedRunsQuery(version);
  let lastAnswer = Date.now();
  let lastProgress = 0;
  while (!opts.interrupted()) {
    try {
      const { workerDeploymentVersionInfo: info } = await answerWithin(
        callMs,
        service.describeWorkerDeploymentVersion({ namespace, deploymentVersion: version }),
      );
      const status = versionStatus[(info?.status ?? 0) as keyof typeof versionStatus];
      if (status === 'current' || status === 'ramping') return 'current';
      const { count } = await answerWithin(callMs, service.countWorkflowExecutions({ namespace, query }));
      lastAnswer = Date.now();
      const open = Number(count ?? 0);
      if (open === 0) return 'drained';
      if (Date.now() - lastProgress >= progressEveryMs) {
        lastProgress = Date.now();
        log.info('draining: serving the runs pinned to this build before stopping', {
          open,
          status,
          list: `temporal workflow list --query "${query}"`,
        });
      }
    } catch (err) {
      if (Date.now() - lastAnswer >= (opts.unreachableMs ?? 10_000)) {
        log.warn('cannot ask Temporal which runs are pinned to this build: stopping without draining', {
          error: (err as Error).message,
        });
        return 'unreachable';
      }
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return 'interrupted';
}
