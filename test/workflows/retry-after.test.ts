import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { ApiException } from '@kubernetes/client-node';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { classify } from '../../src/activities/kube-errors.js';
import { startTimeSkippingEnvironment } from '../../tools/stack/temporal.js';

/**
 * A 429 with Retry-After is made again when the API server asks, not after the retry policy's 200 ms: the SDK takes
 * the failure's nextRetryDelay for a local activity too (its backoff is in-memory, so wall time shows it).
 */
describe('an API call the server throttles with Retry-After', function () {
  this.timeout(120_000);
  let env: TestWorkflowEnvironment;

  before(async () => {
    env = await startTimeSkippingEnvironment();
  });
  after(async () => {
    await env?.teardown();
  });

  for (const [what, retryAfter, leastGapMs] of [
    ['Retry-After: 1', '1', 900],
    ['no Retry-After: the retry policy', undefined, 0],
  ] as const) {
    it(`${what}: made again ${leastGapMs ? 'at least 1 s apart' : 'after the policy’s backoff'}, then served`, async () => {
      const attempts: number[] = [];
      const getPod = async () => {
        attempts.push(Date.now());
        if (attempts.length < 3) {
          const headers: Record<string, string> = retryAfter === undefined ? {} : { 'Retry-After': retryAfter };
          throw classify(new ApiException(429, 'HTTP 429', '{"message":"slow down"}', headers));
        }
        return { uid: 'pod-uid' };
      };
      const taskQueue = `retry-after-${randomUUID()}`;
      const worker = await Worker.create({
        connection: env.nativeConnection,
        taskQueue,
        workflowsPath: fileURLToPath(new URL('../fixtures/retry-after-workflows.ts', import.meta.url)),
        activities: { getPod },
      });
      const result = await worker.runUntil(
        env.client.workflow.execute('readPodOnce', { taskQueue, workflowId: `retry-after-${randomUUID()}` }),
      );
      assert.equal(result, 'pod-uid');
      const gaps = attempts.slice(1).map((t, i) => t - attempts[i]!);
      assert.equal(gaps.length, 2);
      assert.ok(Math.min(...gaps) >= leastGapMs, `gaps ${gaps.join(', ')} ms`);
    });
  }
});
