// A worker acts on the one cluster its KUBECONFIG reaches. A task queue shared by controllers of two clusters would
// hand it activities of the other's workflows: their API calls would land on the wrong cluster, and the UID
// preconditions that stop most wrong writes do not stop a create.
import { ApplicationFailure } from '@temporalio/common';
import type { Info } from '@temporalio/activity';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import { parseWorkflowId } from '../model/index.js';

/** The failure type of an activity refused because its workflow belongs to another cluster. */
export const OTHER_CLUSTER_FAILURE = 'ActivityOfAnotherCluster';

/** Why an activity of this workflow must not run on `cluster`'s worker, or undefined when it may. */
export function otherClusterRefusal(cluster: string, workflowId: string): string | undefined {
  const owner = parseWorkflowId(workflowId)?.cluster;
  if (owner === undefined || owner === cluster) return undefined;
  return `workflow ${workflowId} acts on cluster ${owner}, and this worker serves cluster ${cluster}: give each cluster its own task queue (leave TEMPORAL_TASK_QUEUE unset for lws-temporal-<cluster>)`;
}

/** Refuses, non-retryably, every activity of a workflow whose ID names another cluster. */
export function refuseOtherClusters(cluster: string, info: Info): ActivityInboundCallsInterceptor {
  return {
    execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
      const refusal = otherClusterRefusal(cluster, info.workflowExecution?.workflowId ?? '');
      if (refusal) return Promise.reject(ApplicationFailure.nonRetryable(refusal, OTHER_CLUSTER_FAILURE));
      return next(input);
    },
  };
}
