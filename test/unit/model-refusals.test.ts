// StatefulSets the API server refuses for good, as told on the LWS: which refusals count, the messages, the groups
// whose leader says so, the condition on the status, and the one bound on the API server's message.
import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { ApiException } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { classify } from '../../src/activities/kube-errors.js';
import {
  ANNOTATION_WORKERS_REFUSED,
  CONDITION_REPLICA_FAILURE,
  computeStatus,
  EVENT_REASONS,
  leaderRefusal,
  lwsFacts,
  MAX_API_MESSAGE_LENGTH,
  refusalTold,
  truncateApiMessage,
  workerRefusal,
  workersRefusedOf,
  type Refusal,
} from '../../src/model/index.js';
import { apiRefusal, KUBERNETES_API_ERROR, NAMESPACE_TERMINATING } from '../../src/shared/failures.js';
import { sampleLws } from './model-fixtures.js';

const apiMessage = 'StatefulSet.apps "demo-0" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Never"';

const failure = (type: string, code?: number) =>
  ApplicationFailure.create({ message: apiMessage, type, nonRetryable: true, details: [{ code, reason: 'Invalid' }] });

describe('model/refusals', () => {
  describe('apiRefusal: the failures that are a refused object', () => {
    const rows: Array<{ name: string; err: unknown; code?: number }> = [
      { name: '422 Invalid', err: failure(KUBERNETES_API_ERROR, 422), code: 422 },
      { name: '400 BadRequest', err: failure(KUBERNETES_API_ERROR, 400), code: 400 },
      { name: '403 Forbidden (rights, not the template): no', err: failure(KUBERNETES_API_ERROR, 403) },
      { name: 'no code in the details: no', err: failure(KUBERNETES_API_ERROR) },
      { name: 'a namespace being deleted: no', err: failure(NAMESPACE_TERMINATING, 422) },
      { name: 'a plain error: no', err: new Error(apiMessage) },
    ];
    for (const row of rows) {
      it(row.name, () => {
        const got = apiRefusal(row.err);
        assert.deepEqual(got, row.code === undefined ? undefined : { code: row.code, message: apiMessage });
      });
    }
  });

  it('truncates the API server message to 1 KB, once', () => {
    assert.equal(truncateApiMessage('short'), 'short');
    const long = truncateApiMessage('x'.repeat(5000));
    assert.equal(long.length, MAX_API_MESSAGE_LENGTH);
    assert.ok(long.endsWith('...'));
    assert.equal(truncateApiMessage(long), long);
  });

  it('the activities raise a 422 with the message so bounded, and the workflows read it back', () => {
    const body = JSON.stringify({
      kind: 'Status',
      code: 422,
      reason: 'Invalid',
      message: `${apiMessage} ${'y'.repeat(3000)}`,
    });
    const raised = classify(new ApiException(422, 'Unprocessable Entity', body, {}));
    assert.ok(raised instanceof ApplicationFailure);
    assert.equal(raised.nonRetryable, true);
    const read = apiRefusal(raised);
    assert.equal(read?.code, 422);
    assert.equal(read?.message.length, MAX_API_MESSAGE_LENGTH);
    assert.ok(read?.message.startsWith(apiMessage));
  });

  it('says which StatefulSet, from which template, and the API server message', () => {
    const refusal = { code: 422, message: apiMessage };
    assert.deepEqual(leaderRefusal('default/demo', refusal), {
      reason: 'InvalidLeaderTemplate',
      message:
        'the API server refused leader StatefulSet default/demo (HTTP 422), built from ' +
        `spec.leaderWorkerTemplate.leaderTemplate (or workerTemplate without one): ${apiMessage}`,
    });
    assert.deepEqual(workerRefusal(2, 'default/demo-2', refusal), {
      reason: 'InvalidWorkerTemplate',
      message:
        'group 2: the API server refused worker StatefulSet default/demo-2 (HTTP 422), built from ' +
        `spec.leaderWorkerTemplate.workerTemplate: ${apiMessage}`,
    });
    assert.equal(EVENT_REASONS.invalidLeaderTemplate, 'InvalidLeaderTemplate');
    assert.equal(EVENT_REASONS.invalidWorkerTemplate, 'InvalidWorkerTemplate');
  });

  describe('workersRefusedOf: the groups whose leader says its workers were refused', () => {
    const leader = (i: number, told?: string, deleting = false) => ({
      name: `demo-${i}`,
      uid: `u${i}`,
      annotations: (told === undefined ? {} : { [ANNOTATION_WORKERS_REFUSED]: told }) as Record<string, string>,
      ...(deleting && { deletionTimestamp: '2025-01-01T00:00:00Z' }),
    });
    const rows: Array<{ name: string; leaders: ReturnType<typeof leader>[]; formed?: string[]; message?: string }> = [
      { name: 'none says so', leaders: [leader(0), leader(1)] },
      { name: 'one', leaders: [leader(0), leader(1, 'g1')], message: 'g1' },
      {
        name: 'two: the first, and how many more',
        leaders: [leader(0, 'g0'), leader(1, 'g1')],
        message: 'g0 (and 1 more groups)',
      },
      { name: 'a terminating leader is not counted', leaders: [leader(0, 'g0', true)] },
      {
        name: 'a group made since is not counted',
        leaders: [leader(0, 'g0'), leader(1, 'g1')],
        formed: ['u0'],
        message: 'g1',
      },
    ];
    for (const row of rows) {
      it(row.name, () => {
        const got = workersRefusedOf(row.leaders, (l) => (row.formed ?? []).includes(l.uid));
        assert.deepEqual(
          got,
          row.message === undefined ? undefined : { reason: 'InvalidWorkerTemplate', message: row.message },
        );
      });
    }
  });

  describe('on the status: a ReplicaFailure condition while it lasts', () => {
    const facts = lwsFacts(sampleLws());
    const counts = { ready: 0, updated: 0, conditions: ['Progressing' as const], updateDone: false };
    const refusal: Refusal = { reason: 'InvalidWorkerTemplate', message: 'group 0: refused' };
    const T1 = '2025-01-01T00:00:00Z';
    const T2 = '2025-01-02T00:00:00Z';

    it('added True with the reason and message; kept with its time while it lasts; gone after', () => {
      const first = computeStatus(facts, counts, undefined, T1, undefined, refusal);
      const condition = first.conditions?.find((c) => c.type === CONDITION_REPLICA_FAILURE);
      assert.deepEqual(condition, {
        type: 'ReplicaFailure',
        status: 'True',
        reason: 'InvalidWorkerTemplate',
        message: 'group 0: refused',
        lastTransitionTime: T1,
        observedGeneration: facts.metadata.generation,
      });
      assert.equal(first.conditions?.find((c) => c.type === 'Progressing')?.status, 'True', "upstream's as before");
      const again = computeStatus({ ...facts, status: first }, counts, undefined, T2, undefined, refusal);
      assert.equal(again.conditions?.find((c) => c.type === CONDITION_REPLICA_FAILURE)?.lastTransitionTime, T1);
      const fixed = computeStatus({ ...facts, status: again }, counts, undefined, T2);
      assert.equal(
        fixed.conditions?.find((c) => c.type === CONDITION_REPLICA_FAILURE),
        undefined,
      );
    });

    it('refusalTold: the status already says exactly this', () => {
      const status = computeStatus(facts, counts, undefined, T1, undefined, refusal);
      assert.equal(refusalTold(status, refusal), true);
      assert.equal(refusalTold(status, { ...refusal, message: 'another answer' }), false);
      assert.equal(refusalTold(status, { ...refusal, reason: 'InvalidLeaderTemplate' }), false);
      assert.equal(refusalTold(undefined, refusal), false);
    });
  });
});
