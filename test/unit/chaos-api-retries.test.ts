import assert from 'node:assert/strict';
import { ApiException } from '@kubernetes/client-node';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityExecuteInput } from '@temporalio/worker';
import { classify, KUBERNETES_THROTTLED } from '../../src/activities/kube-errors.js';
import { TransientKubernetesError } from '../../src/kube/api-errors.js';
import { KUBE_RETRY_REASONS, MAX_RETRY_AFTER_MS, type KubeRetryReason } from '../../src/kube/retry-reasons.js';
import { metricsPort, parseRetries, retriesBetween } from '../../tools/chaos/api-campaign.js';
import { restartDelayMs, restartReason } from '../../src/kube/informer.js';
import { RestartBackoff } from '../../src/kube/restart-backoff.js';
import { countActivityErrors, retryReason } from '../../src/observability/activity-errors.js';
import { TriggerMetrics, WorkerMetrics } from '../../src/observability/metrics.js';

const api = (code: number) => new ApiException(code, `HTTP ${code}`, '{}', {});
const coded = (code: string, message = code) => Object.assign(new Error(message), { code });
const asked = (code: number, retryAfter: string) =>
  new ApiException(code, `HTTP ${code}`, '{"message":"slow down"}', { 'Retry-After': retryAfter });

describe('chaos API retries: why a failed call is made again (retryReason)', () => {
  const cases: [string, unknown, KubeRetryReason | undefined][] = [
    ['a 429', api(429), '429'],
    ['a 500', api(500), '5xx'],
    ['a 503, classified', classify(api(503)), '5xx'],
    ['a 409 (a conflict, retried)', api(409), 'other'],
    ['a 404 (permanent)', api(404), undefined],
    ['a 422, classified (non-retryable)', classify(api(422)), undefined],
    ['a stream that ended without a status (HTTP 0)', classify(api(0)), 'network'],
    ['a transient error with its code', new TransientKubernetesError(429, 'x'), '429'],
    ['a 429 with Retry-After, classified (retried when asked)', classify(asked(429, '1')), '429'],
    ['a 503 with Retry-After, classified', classify(asked(503, '2')), '5xx'],
    ['a refused connection', coded('ECONNREFUSED'), 'network'],
    ['a reset, as a cause', new Error('request failed', { cause: coded('ECONNRESET') }), 'network'],
    ['an HTTP/2 stream reset', coded('ERR_HTTP2_STREAM_ERROR'), 'network'],
    ['an HTTP/2 stream closed early', new Error('GET /x: the HTTP/2 stream closed early (code 2)'), 'network'],
    ['a socket hang up', new Error('socket hang up'), 'network'],
    ['a watch refused with a status', Object.assign(new Error('Too Many Requests'), { statusCode: 429 }), '429'],
    ["the activity's own retryable failure", ApplicationFailure.retryable('not ready yet'), undefined],
    ['a plain error', new Error('the pod is not there yet'), undefined],
    ['a cancellation', new CancelledFailure('cancelled'), undefined],
    ['not an error', 'x', undefined],
  ];
  for (const [what, err, want] of cases) it(`${what}: ${want ?? 'none'}`, () => assert.equal(retryReason(err), want));
});

describe('chaos API retries: a call the API server asks to make again later (Retry-After)', () => {
  const cases: [string, ApiException<unknown>, number | undefined][] = [
    ['a 429 asking for 1 s', asked(429, '1'), 1_000],
    ['a 503 asking for 5 s', asked(503, ' 5 '), 5_000],
    ['a 429 asking for an hour: capped', asked(429, '3600'), MAX_RETRY_AFTER_MS],
    [
      'a 429 with an HTTP date (not what the API server sends): the retry policy',
      asked(429, 'Wed, 21 Oct 2026 07:28:00 GMT'),
      undefined,
    ],
    ['a 429 without it: the retry policy', api(429), undefined],
    ['a 500 with it (only 429 and 503 mean it)', asked(500, '1'), undefined],
  ];
  for (const [what, err, delay] of cases) {
    it(`${what}: ${delay === undefined ? 'no delay of its own' : `${delay} ms`}`, () => {
      const failure = classify(err);
      if (delay === undefined) {
        assert.ok(failure instanceof TransientKubernetesError, String(failure));
        return;
      }
      assert.ok(failure instanceof ApplicationFailure);
      assert.equal(failure.type, KUBERNETES_THROTTLED);
      assert.equal(failure.nonRetryable, false);
      assert.equal(failure.nextRetryDelay, delay);
      assert.match(failure.message, /slow down \(retried after \d+ s, as Retry-After asks\)/);
    });
  }
});

describe('chaos API retries: how long a watch waits before it lists again (restartDelayMs)', () => {
  const cases: [string, unknown, number][] = [
    ['a list throttled with Retry-After: 2: as asked, over the backoff', asked(429, '2'), 2_000],
    ['a list throttled without it: the backoff', api(429), 500],
    ['a watch cut: the backoff', coded('ERR_STREAM_PREMATURE_CLOSE'), 500],
  ];
  for (const [what, err, want] of cases) {
    it(`${what}: ${want} ms`, () => assert.equal(restartDelayMs(new RestartBackoff(), err, 0), want));
  }
});

describe('chaos API retries: why a watch restarts (restartReason)', () => {
  const premature = coded('ERR_STREAM_PREMATURE_CLOSE', 'Premature close');
  const cases: [string, unknown, boolean, KubeRetryReason][] = [
    ['a list throttled', api(429), true, '429'],
    ['a list refused a connection', coded('ECONNREFUSED'), true, 'network'],
    ['a list failing otherwise', new Error('boom'), true, 'other'],
    ['a watch cut mid-stream', premature, false, 'watch-restart'],
    ['a watch whose connection reset', coded('ECONNRESET'), false, 'watch-restart'],
    ['a watch refused with a 503', Object.assign(new Error('Service Unavailable'), { statusCode: 503 }), false, '5xx'],
    ['a watch failing otherwise', new Error('boom'), false, 'watch-restart'],
  ];
  for (const [what, err, listFailed, want] of cases) {
    it(`${what}: ${want}`, () => assert.equal(restartReason(err, listFailed), want));
  }
});

describe('chaos API retries: the counter and how the campaign reads it', () => {
  it('starts every reason of both processes at 0', async () => {
    for (const [component, metrics] of [
      ['worker', new WorkerMetrics()],
      ['trigger', new TriggerMetrics()],
    ] as const) {
      const counts = parseRetries(await metrics.registry.metrics());
      assert.deepEqual(counts, Object.fromEntries(KUBE_RETRY_REASONS.map((r) => [`${component}/${r}`, 0])));
    }
  });

  it('counts a retried activity failure by reason, and neither a permanent one nor a non-API one', async () => {
    const metrics = new WorkerMetrics();
    const interceptor = countActivityErrors(metrics, () => 'getPod');
    const fail = (err: unknown) =>
      interceptor.execute!({} as ActivityExecuteInput, () => Promise.reject(err)).catch(() => undefined);
    for (const err of [classify(api(429)), classify(api(429)), classify(api(500)), coded('ECONNRESET')])
      await fail(err);
    await fail(classify(api(403)));
    await fail(new Error('not yet'));
    const counts = parseRetries(await metrics.registry.metrics());
    assert.deepEqual(Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0)), {
      'worker/429': 2,
      'worker/5xx': 1,
      'worker/network': 1,
    });
  });

  it('finds the metrics port in either log format', () => {
    const cases: [string[], number | undefined][] = [
      [['[worker] running', '[worker] metrics server listening port=40123 paths="/metrics /healthz"'], 40123],
      [['{"component":"trigger","msg":"metrics server listening","port":40124,"paths":"/metrics /healthz"}'], 40124],
      [['[worker] starting'], undefined],
    ];
    for (const [lines, want] of cases) assert.equal(metricsPort(lines), want);
  });

  it('takes differences, a counter that went down counting from 0 (a restarted process)', () => {
    const text = [
      '# HELP lws_kube_api_retries_total x',
      '# TYPE lws_kube_api_retries_total counter',
      'lws_kube_api_retries_total{component="worker",reason="429"} 7',
      'lws_kube_api_retries_total{component="worker",reason="network"} 2',
      'lws_activity_errors_total{activity="getPod",kind="transient"} 9',
    ].join('\n');
    const after = parseRetries(text);
    assert.deepEqual(after, { 'worker/429': 7, 'worker/network': 2 });
    assert.deepEqual(retriesBetween({ 'worker/429': 3, 'worker/network': 5 }, after), {
      'worker/429': 4,
      'worker/network': 2,
    });
  });
});
