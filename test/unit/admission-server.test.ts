import assert from 'node:assert/strict';
import { request } from 'node:https';
import type { V1Pod } from '@kubernetes/client-node';
import { createServingBundle, type ServingBundle } from '../../src/admission/certificates.js';
import { applyPatch, type JsonPatchOperation } from '../../src/admission/json-patch.js';
import { AdmissionMetrics } from '../../src/observability/metrics.js';
import {
  createAdmissionServer,
  parseReview,
  reviewLeaderWorkerSet,
  reviewPod,
  type AdmissionReview,
  type AdmissionServer,
  type PodMutation,
} from '../../src/admission/server.js';

const NAME = 'leaderworkerset.sigs.k8s.io/name';

/** A stand-in for mutatePod: labels a pod of an LWS, refuses one marked `refuse`. */
const mutate: PodMutation = (pod) => {
  const copy = structuredClone(pod);
  const labels = copy.metadata?.labels;
  if (!labels?.[NAME]) return copy;
  if (copy.metadata?.annotations?.refuse) return { error: `pod ${copy.metadata.name}: refused as asked` };
  labels['stamped'] = `${copy.metadata?.namespace}/${copy.metadata?.name}`;
  return copy;
};

function review(object: unknown, overrides: Record<string, unknown> = {}) {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'req-1',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace: 'team-a',
      operation: 'CREATE',
      object,
      ...overrides,
    },
  };
}

const pod = (labels: Record<string, string>, annotations?: Record<string, string>): V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'demo-0', namespace: 'team-a', labels, annotations },
  spec: { containers: [{ name: 'main', image: 'x' }] },
});

function decodePatch(review: AdmissionReview): JsonPatchOperation[] {
  return JSON.parse(Buffer.from(review.response.patch ?? '', 'base64').toString('utf8')) as JsonPatchOperation[];
}

describe('admission/server: AdmissionReviews in, JSONPatches out', function () {
  this.timeout(30_000);

  describe('reviewPod', () => {
    it('patches a pod the mutation changed, and the patch gives the mutated pod', () => {
      const input = pod({ [NAME]: 'demo' });
      const { review: out, paths } = reviewPod(parseReview(review(input)), mutate);
      assert.equal(out.apiVersion, 'admission.k8s.io/v1');
      assert.equal(out.kind, 'AdmissionReview');
      assert.equal(out.response.uid, 'req-1');
      assert.equal(out.response.allowed, true);
      assert.equal(out.response.patchType, 'JSONPatch');
      assert.deepEqual(paths, ['/metadata/labels']);
      assert.deepEqual(applyPatch(input, decodePatch(out)), JSON.parse(JSON.stringify(mutate(input))));
    });

    it('allows a pod the mutation leaves alone without a patch', () => {
      const { review: out, paths } = reviewPod(parseReview(review(pod({ other: 'x' }))), mutate);
      assert.deepEqual(out.response, { uid: 'req-1', allowed: true });
      assert.deepEqual(paths, []);
    });

    it('denies with the mutation error as the status message', () => {
      const { review: out, denied } = reviewPod(parseReview(review(pod({ [NAME]: 'demo' }, { refuse: '1' }))), mutate);
      assert.deepEqual(out.response, {
        uid: 'req-1',
        allowed: false,
        status: { code: 403, reason: 'Forbidden', message: 'pod demo-0: refused as asked' },
      });
      assert.equal(denied, 'pod demo-0: refused as asked');
    });

    it("gives the mutation the request's namespace when the object has none, and does not patch it", () => {
      const input = pod({ [NAME]: 'demo' });
      delete input.metadata?.namespace;
      const out = reviewPod(parseReview(review(input, { namespace: 'team-b' })), mutate).review;
      const ops = decodePatch(out);
      assert.deepEqual(ops, [
        { op: 'replace', path: '/metadata/labels', value: { [NAME]: 'demo', stamped: 'team-b/demo-0' } },
      ]);
    });

    it('denies (500) when the mutation throws, rather than letting an unmutated pod through', () => {
      const out = reviewPod(parseReview(review(pod({ [NAME]: 'demo' }))), () => {
        throw new Error('boom');
      }).review;
      assert.equal(out.response.allowed, false);
      assert.equal(out.response.status?.code, 500);
      assert.match(out.response.status?.message ?? '', /boom/);
    });

    const untouched: Array<[string, Record<string, unknown>]> = [
      ['an UPDATE', { operation: 'UPDATE' }],
      ['a subresource', { subResource: 'status' }],
      ['another kind', { kind: { group: 'apps', version: 'v1', kind: 'StatefulSet' } }],
    ];
    for (const [what, overrides] of untouched) {
      it(`allows ${what} unchanged`, () => {
        const out = reviewPod(parseReview(review(pod({ [NAME]: 'demo' }), overrides)), mutate).review;
        assert.deepEqual(out.response, { uid: 'req-1', allowed: true });
      });
    }

    const malformed: Array<[string, unknown, RegExp]> = [
      ['no object', [], /expected a JSON object/],
      ['a v1beta1 review', { ...review({}), apiVersion: 'admission.k8s.io/v1beta1' }, /admissionReviewVersions \[v1\]/],
      ['no uid', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {} }, /no request\.uid/],
    ];
    for (const [what, body, message] of malformed) {
      it(`refuses ${what}`, () => assert.throws(() => parseReview(body), message));
    }
  });

  describe('reviewLeaderWorkerSet', () => {
    const lws = (restartPolicy: string, type: string) => ({
      apiVersion: 'leaderworkerset.x-k8s.io/v1',
      kind: 'LeaderWorkerSet',
      metadata: { name: 'vllm', namespace: 'team-a' },
      spec: {
        leaderWorkerTemplate: { size: 2, restartPolicy, workerTemplate: { spec: { containers: [] } } },
        rolloutStrategy: { type, rollingUpdateConfiguration: { partition: 0 } },
      },
    });
    const lwsReview = (object: unknown, overrides: Record<string, unknown> = {}) =>
      parseReview(
        review(object, {
          kind: { group: 'leaderworkerset.x-k8s.io', version: 'v1', kind: 'LeaderWorkerSet' },
          resource: { group: 'leaderworkerset.x-k8s.io', version: 'v1', resource: 'leaderworkersets' },
          ...overrides,
        }),
      );

    for (const operation of ['CREATE', 'UPDATE']) {
      it(`patches upstream's two rewrites into an LWS ${operation}, and the patch gives the rewritten LWS`, () => {
        const input = lws('Default', '');
        const { review: out, paths } = reviewLeaderWorkerSet(lwsReview(input, { operation }));
        assert.equal(out.response.allowed, true);
        assert.deepEqual(paths, ['/spec/leaderWorkerTemplate', '/spec/rolloutStrategy']);
        assert.deepEqual(applyPatch(input, decodePatch(out)), lws('None', 'RollingUpdate'));
      });
    }

    it('allows an LWS with nothing to rewrite without a patch', () => {
      const out = reviewLeaderWorkerSet(lwsReview(lws('None', 'RollingUpdate'))).review;
      assert.deepEqual(out.response, { uid: 'req-1', allowed: true });
    });

    const untouched: Array<[string, Record<string, unknown>]> = [
      ['a DELETE', { operation: 'DELETE' }],
      ['the status subresource', { subResource: 'status' }],
      ['a pod', { kind: { group: '', version: 'v1', kind: 'Pod' } }],
    ];
    for (const [what, overrides] of untouched) {
      it(`allows ${what} unchanged`, () => {
        const out = reviewLeaderWorkerSet(lwsReview(lws('Default', ''), overrides)).review;
        assert.deepEqual(out.response, { uid: 'req-1', allowed: true });
      });
    }
  });

  describe('over HTTPS', () => {
    const metrics = new AdmissionMetrics();
    let bundle: ServingBundle;
    let admission: AdmissionServer;
    let port: number;

    before(async () => {
      bundle = await createServingBundle({ hosts: ['127.0.0.1'] });
      admission = createAdmissionServer({ tls: bundle, mutate, maxBodyBytes: 64 * 1024, metrics });
      port = await admission.listen(0, '127.0.0.1');
    });

    after(() => admission.close());

    function call(
      method: string,
      path: string,
      body?: string,
      headers: Record<string, string> = { 'content-type': 'application/json' },
    ): Promise<{ status: number; body: string }> {
      return new Promise((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, method, path, ca: bundle.ca.cert, headers }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        });
        req.on('error', reject);
        req.end(body);
      });
    }

    /** lws_admission_reviews_total by `webhook/outcome`, and the count of the duration histogram by webhook. */
    async function counts(): Promise<Record<string, number>> {
      const reviews = (await metrics.reviews.get()).values.map(
        (v) => [`${v.labels.webhook}/${v.labels.outcome}`, v.value] as const,
      );
      const durations = (await metrics.duration.get()).values
        .filter((v) => v.metricName === 'lws_admission_review_duration_seconds_count')
        .map((v) => [`${v.labels.webhook} timed`, v.value] as const);
      return Object.fromEntries([...reviews, ...durations]);
    }

    it('counts each review by webhook and outcome, and times it (lws_admission_reviews_total, _duration_seconds)', async () => {
      const before = await counts();
      await call('POST', '/mutate-pod', JSON.stringify(review(pod({ [NAME]: 'demo' }))));
      await call(
        'POST',
        '/mutate-pod',
        JSON.stringify(review({ kind: 'Pod', metadata: { name: 'x' } }, { operation: 'DELETE' })),
      );
      await call('POST', '/mutate-pod', '{');
      const lws = { group: 'leaderworkerset.x-k8s.io', version: 'v1', kind: 'LeaderWorkerSet' };
      await call('POST', '/mutate-leaderworkerset', JSON.stringify(review({ spec: {} }, { kind: lws })));
      const after = await counts();
      const delta = Object.fromEntries(
        Object.entries(after)
          .map(([k, v]) => [k, v - (before[k] ?? 0)] as const)
          .filter(([, v]) => v !== 0),
      );
      assert.deepEqual(delta, {
        'pod/patched': 1,
        'pod/unchanged': 1,
        'pod/error': 1,
        'leaderworkerset/unchanged': 1,
        'pod timed': 3,
        'leaderworkerset timed': 1,
      });
    });

    it('answers /healthz', async () => {
      assert.deepEqual(await call('GET', '/healthz'), { status: 200, body: 'ok\n' });
    });

    it('answers a review POSTed to /mutate-pod (the query string the API server may add is ignored)', async () => {
      const res = await call('POST', '/mutate-pod?timeout=10s', JSON.stringify(review(pod({ [NAME]: 'demo' }))));
      assert.equal(res.status, 200);
      const out = JSON.parse(res.body) as AdmissionReview;
      assert.equal(out.response.allowed, true);
      assert.deepEqual(decodePatch(out)[0]?.path, '/metadata/labels');
    });

    it('answers an LWS review POSTed to /mutate-leaderworkerset', async () => {
      const object = { spec: { leaderWorkerTemplate: { restartPolicy: 'Default' } } };
      const kind = { group: 'leaderworkerset.x-k8s.io', version: 'v1', kind: 'LeaderWorkerSet' };
      const res = await call('POST', '/mutate-leaderworkerset', JSON.stringify(review(object, { kind })));
      assert.equal(res.status, 200);
      const out = JSON.parse(res.body) as AdmissionReview;
      assert.deepEqual(decodePatch(out), [
        { op: 'replace', path: '/spec/leaderWorkerTemplate', value: { restartPolicy: 'None' } },
      ]);
    });

    const refusals: Array<[string, () => Promise<{ status: number; body: string }>, number]> = [
      ['another path', () => call('POST', '/validate', '{}'), 404],
      ['a GET of the webhook', () => call('GET', '/mutate-pod'), 405],
      ['a body that is not JSON', () => call('POST', '/mutate-pod', '{'), 400],
      ['another content type', () => call('POST', '/mutate-pod', '{}', { 'content-type': 'text/plain' }), 415],
      [
        'a body over the limit',
        () => call('POST', '/mutate-pod', JSON.stringify(review({ pad: 'x'.repeat(70_000) }))),
        413,
      ],
    ];
    for (const [what, send, status] of refusals) {
      it(`refuses ${what} with ${status}`, async () => assert.equal((await send()).status, status));
    }

    it('refuses a chunked body (no Content-Length) once it grows over the limit, with 413', async () => {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/mutate-pod',
            ca: bundle.ca.cert,
            headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        for (let i = 0; i < 10; i++) req.write('x'.repeat(10_000));
        req.end();
      });
      assert.equal(status, 413);
    });

    it('still serves after a refused body, and /healthz turns 503 once marked unhealthy', async () => {
      assert.equal((await call('GET', '/healthz')).status, 200);
      admission.markUnhealthy();
      assert.equal((await call('GET', '/healthz')).status, 503);
    });
  });
});
