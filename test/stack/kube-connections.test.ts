import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as http2 from 'node:http2';
import * as https from 'node:https';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import * as k8s from '@kubernetes/client-node';
import { identifyAs, reuseConnections, userAgent } from '../../src/config/kubernetes.js';
import { http2Timeouts, openConnections } from '../../src/kube/api-http2.js';
import { podsJson, podsPath } from '../../src/kube/kube-json.js';
import { watchOnce } from '../../src/kube/watch.js';
import { clusterDir, kubeconfigPath } from '../../tools/stack/paths.js';
import { ensureCluster } from '../fixtures/cluster.js';

/** The agent client-node would use for the next request of this KubeConfig. */
async function agentOf(kc: k8s.KubeConfig): Promise<https.Agent> {
  const options: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  return options.agent as https.Agent;
}

/** The local cluster's kubeconfig with the certificate authority replaced. */
function withCa(caPem: string): k8s.KubeConfig {
  return withCluster((c) => ({ ...c, caData: Buffer.from(caPem).toString('base64'), caFile: undefined }));
}

/** The local cluster's kubeconfig with its cluster entry changed. */
function withCluster(change: (cluster: k8s.Cluster) => k8s.Cluster): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const current = kc.getCurrentCluster()!;
  kc.clusters = kc.clusters.map((c) => (c.name === current.name ? change(c) : c));
  return reuseConnections(kc);
}

describe('connections to the API server (reuseConnections, HTTP/2)', function () {
  this.timeout(60_000);
  before(async function () {
    this.timeout(180_000);
    await ensureCluster();
  });

  it('calls share one keep-alive agent with one TLS context, and requests verify the cluster CA through it', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    reuseConnections(kc);
    const agent = await agentOf(kc);
    assert.equal(await agentOf(kc), agent, 'the same agent for the next call');
    const options = (agent as unknown as { options: https.AgentOptions }).options;
    assert.equal(options.keepAlive, true);
    assert.ok(options.secureContext, 'a TLS context built once, not per connection');
    const namespace = 'kube-system';
    const pods = await podsJson(kc).list({ namespace, labelSelector: 'no-such-label=1' });
    assert.deepEqual(pods.items, []);
  });

  it('another certificate authority gets its own agent, and the cluster is not trusted through it', async () => {
    const cluster = new k8s.KubeConfig();
    cluster.loadFromFile(kubeconfigPath);
    reuseConnections(cluster);
    const stranger = withCa(rootCertificates[0]!);
    assert.notEqual(await agentOf(stranger), await agentOf(cluster));
    await assert.rejects(
      podsJson(stranger).list({ namespace: 'kube-system', labelSelector: 'no-such-label=1' }),
      (err: { code?: string }) => /CERT|SIGNED|ISSUER/.test(String(err.code)),
    );
  });

  it('JSON calls and watches are streams on shared HTTP/2 connections, at most 100 open on each', async () => {
    // The cluster's CA plus another: an identity of its own, so these calls start with no connection at all.
    const clusterCa = readFileSync(join(clusterDir, 'pki', 'apiserver.crt'), 'utf8');
    const kc = withCa(`${clusterCa}\n${rootCertificates[0]!}`);
    const before = openConnections();
    const namespace = 'kube-system';
    const aborts = Array.from({ length: 120 }, () => new AbortController());
    // 120 watches that stay open, and 130 calls at the same time: 250 streams.
    const watches = aborts.map((a, i) =>
      watchOnce(
        kc,
        { listPath: podsPath(namespace), fieldSelector: `metadata.name=none-${i}`, signal: a.signal },
        () => undefined,
      ),
    );
    const calls = Array.from({ length: 130 }, () => podsJson(kc).list({ namespace, labelSelector: 'no-such-label=1' }));
    const lists = await Promise.all(calls);
    assert.ok(lists.every((l) => l.items.length === 0));
    assert.equal(openConnections() - before, 3, '250 streams: 3 connections of at most 100 streams');
    for (const a of aborts) a.abort();
    assert.ok(
      (await Promise.all(watches)).every((end) => 'ended' in end),
      'cancelled watches end',
    );
  });

  it('a server that does not offer HTTP/2 gets HTTP/1.1, for calls and watches', async () => {
    // The local API server's certificate (valid for 127.0.0.1, and the kubeconfig's CA) on an HTTP/1.1-only server.
    const pki = join(clusterDir, 'pki');
    const versions: string[] = [];
    const server = https.createServer(
      { cert: readFileSync(join(pki, 'apiserver.crt')), key: readFileSync(join(pki, 'apiserver.key')) },
      (req, res) => {
        versions.push(req.httpVersion);
        res.setHeader('Content-Type', 'application/json');
        if (req.url?.includes('watch=true')) {
          res.end(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'p' } } }) + '\n');
        } else res.end(JSON.stringify({ kind: 'PodList', items: [] }));
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const kc = withCluster((c) => ({ ...c, server: `https://127.0.0.1:${port}` }));
      const namespace = 'default';
      assert.deepEqual((await podsJson(kc).list({ namespace, labelSelector: 'a=b' })).items, []);
      assert.deepEqual((await podsJson(kc).list({ namespace, labelSelector: 'a=b' })).items, []);
      const seen = await watchOnce(
        kc,
        { listPath: podsPath(namespace), signal: new AbortController().signal },
        (type, obj) => `${type} ${(obj as { metadata: { name: string } }).metadata.name}`,
      );
      assert.deepEqual(seen, { result: 'ADDED p' });
      assert.deepEqual(versions, ['1.1', '1.1', '1.1']);
    } finally {
      server.close();
      server.closeAllConnections();
    }
  });

  it('every request names the process (User-Agent): JSON calls and watches over HTTP/2, typed calls over HTTP/1.1', async () => {
    const pki = join(clusterDir, 'pki');
    const seen: string[] = [];
    // Both protocols on one port, as the API server: h2 by ALPN, HTTP/1.1 for clients that do not offer it.
    const server = http2.createSecureServer(
      {
        cert: readFileSync(join(pki, 'apiserver.crt')),
        key: readFileSync(join(pki, 'apiserver.key')),
        allowHTTP1: true,
      },
      (req, res) => {
        seen.push(`HTTP/${req.httpVersion} ${String(req.headers['user-agent'])}`);
        res.setHeader('Content-Type', 'application/json');
        if (req.url?.includes('watch=true')) {
          res.end(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'p' } } }) + '\n');
        } else res.end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: [] }));
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const kc = identifyAs(
        withCluster((c) => ({ ...c, server: `https://127.0.0.1:${port}` })),
        userAgent('worker'),
      );
      const namespace = 'default';
      await podsJson(kc).list({ namespace, labelSelector: 'a=b' });
      await watchOnce(kc, { listPath: podsPath(namespace), signal: new AbortController().signal }, () => true);
      await kc.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace });
      assert.deepEqual(seen, [
        'HTTP/2.0 lws-temporal/0.1.0 (worker)',
        'HTTP/2.0 lws-temporal/0.1.0 (worker)',
        'HTTP/1.1 lws-temporal/0.1.0 (worker)',
      ]);
    } finally {
      server.close();
    }
  });
  describe('idle connections', () => {
    const saved = { ...http2Timeouts };
    let server: http2.Http2SecureServer;
    let sessions: http2.ServerHttp2Session[];
    /** Between the client and the server: forwards bytes until `silence()`, then drops what the client sends. */
    let proxy: net.Server;
    let silence: () => void;
    let kc: k8s.KubeConfig;

    beforeEach(async () => {
      Object.assign(http2Timeouts, { idleMs: 300, pingTimeoutMs: 300 });
      const pki = join(clusterDir, 'pki');
      sessions = [];
      server = http2.createSecureServer(
        { cert: readFileSync(join(pki, 'apiserver.crt')), key: readFileSync(join(pki, 'apiserver.key')) },
        (req, res) => {
          res.setHeader('Content-Type', 'application/json');
          // A watch that never says anything; a list answered at once.
          if (req.url?.includes('watch=true')) res.writeHead(200);
          else res.end(JSON.stringify({ kind: 'PodList', items: [] }));
        },
      );
      server.on('session', (session) => sessions.push(session));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as AddressInfo).port;
      const silenced: (() => void)[] = [];
      silence = () => silenced.forEach((f) => f());
      proxy = net.createServer((client) => {
        const upstream = net.connect(port, '127.0.0.1');
        client.pipe(upstream);
        upstream.pipe(client);
        for (const s of [client, upstream]) s.on('error', () => s.destroy());
        silenced.push(() => {
          client.unpipe(upstream);
          client.on('data', () => undefined);
        });
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      const proxyPort = (proxy.address() as AddressInfo).port;
      kc = withCluster((c) => ({ ...c, server: `https://127.0.0.1:${proxyPort}` }));
    });

    afterEach(() => {
      Object.assign(http2Timeouts, saved);
      for (const session of sessions) session.destroy();
      server.close();
      proxy.close();
    });

    const closed = (session: http2.ServerHttp2Session) =>
      new Promise<void>((resolve) =>
        session.closed || session.destroyed ? resolve() : session.once('close', resolve),
      );

    it('a connection without streams is closed once it has been quiet for idleMs', async () => {
      const before = openConnections();
      await podsJson(kc).list({ namespace: 'default', labelSelector: 'a=b' });
      assert.equal(openConnections(), before + 1);
      assert.equal(sessions.length, 1);
      const t0 = Date.now();
      await closed(sessions[0]!);
      assert.ok(Date.now() - t0 >= 200, 'closed only after being idle');
      assert.equal(openConnections(), before);
      // The next call opens a fresh connection.
      await podsJson(kc).list({ namespace: 'default', labelSelector: 'a=b' });
      assert.equal(sessions.length, 2);
    });

    it('a quiet watch keeps its connection while the server answers pings, and fails when it stops answering', async () => {
      const pings: number[] = [];
      server.on('session', (session) => session.on('ping', () => pings.push(Date.now())));
      const abort = new AbortController();
      const watching = watchOnce(kc, { listPath: podsPath('default'), signal: abort.signal }, () => true);
      // Pinged, answered, and still open after several idle periods.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      assert.ok(pings.length >= 2, `${pings.length} pings`);
      assert.equal(sessions.length, 1);
      assert.ok(!sessions[0]!.closed && !sessions[0]!.destroyed, 'the connection stays while pings are answered');
      // The connection goes silent (the server is gone, say): the next ping never arrives, so it is never answered.
      silence();
      const end = await watching;
      assert.ok('error' in end, `the watch ended with ${JSON.stringify(end)}`);
      assert.match(String((end as { error: unknown }).error), /did not answer a ping/);
    });
  });
});
