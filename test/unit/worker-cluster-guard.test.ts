import assert from 'node:assert/strict';
import type { Info } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityExecuteInput } from '@temporalio/worker';
import { describe, it } from 'mocha';
import { workflowId } from '../../src/model/index.js';
import { OTHER_CLUSTER_FAILURE, otherClusterRefusal, refuseOtherClusters } from '../../src/worker/cluster-guard.js';

const ref = { namespace: 'default', name: 'vllm' };
const teardown = { kind: 'teardown', groupIndex: 0, oldLeaderUid: 'u' } as const;

function execute(cluster: string, id: string): Promise<unknown> {
  const info = { workflowExecution: { workflowId: id, runId: 'r' } } as Info;
  const interceptor = refuseOtherClusters(cluster, info);
  return interceptor.execute!({} as ActivityExecuteInput, () => Promise.resolve('ran'));
}

describe('worker/cluster-guard', () => {
  const cases: [string, string, string, boolean][] = [
    ["its own cluster's workflow", 'a', workflowId('a', ref, teardown), true],
    ["another cluster's workflow", 'a', workflowId('b', ref, teardown), false],
    ["another cluster's reconcile", 'a', workflowId('b', ref, { kind: 'reconcile', generation: 1 }), false],
    // Not one of this project's lifecycle IDs (a test's, say): nothing says which cluster it is for.
    ['a workflow ID of no cluster', 'a', 'some-other-workflow', true],
  ];
  for (const [what, cluster, id, runs] of cases) {
    it(`${runs ? 'runs' : 'refuses'} an activity of ${what}`, async () => {
      if (runs) {
        assert.equal(await execute(cluster, id), 'ran');
        assert.equal(otherClusterRefusal(cluster, id), undefined);
        return;
      }
      await assert.rejects(execute(cluster, id), (err: unknown) => {
        assert.ok(err instanceof ApplicationFailure);
        assert.equal(err.nonRetryable, true, 'never retried: no attempt would run it on the right cluster');
        assert.equal(err.type, OTHER_CLUSTER_FAILURE);
        assert.match(
          err.message,
          /acts on cluster b, and this worker serves cluster a: give each cluster its own task queue/,
        );
        return true;
      });
    });
  }
});
