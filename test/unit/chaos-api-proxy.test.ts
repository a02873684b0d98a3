import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { retryReason } from '../../src/observability/activity-errors.js';
import { WRITE_VERBS } from '../../tools/chaos/api-faults.js';
import { ApiProxy } from '../../tools/chaos/api-proxy.js';
import { restartReason } from '../../src/kube/informer.js';
import { kubeCall } from '../../src/kube/kube-json.js';
import { watchOnce } from '../../src/kube/watch.js';
import { createLogger } from '../../src/log.js';

/**
 * The proxy on real sockets, between the controller's own clients (kube-json over HTTP/2, watch.ts over HTTP/2,
 * client-node's Watch over HTTP/1.1, as the trigger's informers use it) and a tiny local API server: what passes,
 * what it answers itself, and what it breaks.
 */
describe('chaos API proxy: on real sockets', function () {
  this.timeout(20_000);
  const podsPath = '/api/v1/namespaces/ns/pods';
  let upstream: http.Server;
  let proxy: ApiProxy;
  let kc: k8s.KubeConfig;
  const seen: { method: string; url: string; authorization?: string; body: string }[] = [];

  before(async () => {
    upstream = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization, body });
        if (req.url?.includes('watch=true')) {
          // An event every 50 ms until the client goes: a watch.
          res.writeHead(200, { 'content-type': 'application/json' });
          let n = 0;
          const timer = setInterval(() => {
            res.write(JSON.stringify({ type: 'ADDED', object: { metadata: { name: `p-${n++}` } } }) + '\n');
          }, 50);
          res.on('close', () => clearInterval(timer));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ method: req.method, body: body ? JSON.parse(body) : null }));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const upstreamKc = new k8s.KubeConfig();
    upstreamKc.loadFromOptions({
      clusters: [
        { name: 'up', server: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, skipTLSVerify: true },
      ],
      users: [{ name: 'admin', token: 'the-real-token' }],
      contexts: [{ name: 'up', cluster: 'up', user: 'admin' }],
      currentContext: 'up',
    });
    proxy = await ApiProxy.start({
      upstream: upstreamKc,
      seed: 1,
      log: createLogger('api-proxy-test', {}, { LOG_LEVEL: 'warn' }),
    });
    kc = new k8s.KubeConfig();
    kc.loadFromString(proxy.kubeconfig());
  });

  after(async () => {
    await proxy.close();
    await new Promise((resolve) => upstream.close(resolve));
  });

  beforeEach(() => {
    proxy.clearFaults();
    seen.length = 0;
  });

  const rejection = (promise: Promise<unknown>) =>
    promise.then(
      () => assert.fail('expected a failure'),
      (err: unknown) => err,
    );

  it('passes a request through with the real credentials, and its answer back', async () => {
    const answer = await kubeCall(kc, { method: 'POST', path: podsPath, body: { metadata: { name: 'p' } } });
    assert.deepEqual(answer, { method: 'POST', body: { metadata: { name: 'p' } } });
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.authorization, 'Bearer the-real-token');
    assert.equal(proxy.requests > 0, true);
  });

  it('answers a 429 itself, with Retry-After, and only to the verbs its rule names', async () => {
    proxy.setFaults([{ kind: '429', fraction: 1, verbs: WRITE_VERBS, retryAfterSeconds: 2 }]);
    const before = proxy.injected['429'];
    await kubeCall(kc, { method: 'GET', path: `${podsPath}/p` });
    const err = (await rejection(kubeCall(kc, { method: 'POST', path: podsPath, body: {} }))) as ApiException;
    assert.equal(err.code, 429);
    assert.equal(err.headers['retry-after'], '2');
    assert.equal((JSON.parse(err.body as string) as { reason: string }).reason, 'TooManyRequests');
    assert.equal(retryReason(err), '429');
    assert.deepEqual(
      seen.map((s) => s.method),
      ['GET'],
    );
    assert.equal(proxy.injected['429'] - before, 1);
  });

  it('answers a 5xx itself', async () => {
    proxy.setFaults([{ kind: '5xx', fraction: 1, statuses: [503] }]);
    const err = (await rejection(kubeCall(kc, { method: 'GET', path: podsPath }))) as ApiException;
    assert.equal(err.code, 503);
    assert.equal(retryReason(err), '5xx');
    assert.equal(seen.length, 0);
  });

  for (const when of ['before-upstream', 'after-upstream'] as const) {
    it(`resets the connection ${when}: the client sees a network failure`, async () => {
      proxy.setFaults([{ kind: 'reset', fraction: 1, when }]);
      const err = await rejection(kubeCall(kc, { method: 'DELETE', path: `${podsPath}/p`, body: {} }));
      assert.equal(retryReason(err), 'network');
      assert.equal(seen.length, when === 'before-upstream' ? 0 : 1);
    });
  }

  it('adds latency', async () => {
    proxy.setFaults([{ kind: 'slow', fraction: 1, latencyMs: [300, 300] }]);
    const started = Date.now();
    await kubeCall(kc, { method: 'GET', path: podsPath });
    assert.ok(Date.now() - started >= 290, `${Date.now() - started} ms`);
  });

  it('streams a watch, and cuts it mid-way over HTTP/2: an error, not a clean end', async () => {
    proxy.setFaults([{ kind: 'watch-cut', fraction: 1, cutAfterMs: [400, 400] }]);
    let events = 0;
    const started = Date.now();
    const end = await watchOnce(kc, { listPath: podsPath, signal: new AbortController().signal }, () => {
      events++;
      return undefined;
    });
    assert.ok('error' in end, JSON.stringify(end));
    assert.ok(events >= 3, `${events} events before the cut`);
    assert.ok(Date.now() - started >= 390);
  });

  it('cuts an HTTP/1.1 watch (client-node, as the informers use it) so that it fails', async () => {
    proxy.setFaults([{ kind: 'watch-cut', fraction: 1, cutAfterMs: [300, 300] }]);
    let events = 0;
    const err = await new Promise<unknown>((resolve) => {
      void new k8s.Watch(kc).watch(podsPath, {}, () => events++, resolve);
    });
    assert.ok(err instanceof Error, String(err));
    assert.equal(restartReason(err, false), 'watch-restart');
    assert.ok(events >= 2, `${events} events before the cut`);
  });

  it('cuts a watch that was open before the watch-cut was set (the trigger watches for minutes)', async () => {
    let events = 0;
    const err = await new Promise<unknown>((resolve) => {
      void new k8s.Watch(kc).watch(
        podsPath,
        {},
        () => {
          if (++events === 2) proxy.setFaults([{ kind: 'watch-cut', fraction: 1, cutAfterMs: [100, 100] }]);
        },
        resolve,
      );
    });
    assert.ok(err instanceof Error, String(err));
    assert.ok(events >= 3, `${events} events before the cut`);
  });

  it('drops every open connection at once, as an API server that dies: open watches end', async () => {
    let events = 0;
    const started = Date.now();
    const end = await watchOnce(kc, { listPath: podsPath, signal: new AbortController().signal }, () => {
      if (++events === 2) proxy.dropConnections();
      return undefined;
    });
    // A connection closed without a reset ends the HTTP/2 stream as if the server had ended the watch.
    assert.ok('ended' in end || 'error' in end, JSON.stringify(end));
    assert.ok(Date.now() - started < 2000);
  });

  it('passes everything again once the faults are cleared', async () => {
    proxy.setFaults([{ kind: '5xx', fraction: 1 }]);
    proxy.clearFaults();
    assert.deepEqual(await kubeCall(kc, { method: 'GET', path: podsPath }), { method: 'GET', body: null });
  });
});

type ApiException = k8s.ApiException<unknown>;
