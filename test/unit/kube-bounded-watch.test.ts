import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { watchResource, type RunningWatch } from '../../src/kube/informer.js';
import { silentLogger } from '../../src/log.js';
import { waitFor } from '../../src/dev-server/processes.js';

/**
 * An API server of one resource: its list answers at once; each watch answers with its headers and then what the
 * test writes to it, which may be nothing at all (a stream stalled on its way).
 */
class FakeWatchServer {
  readonly watches: { query: URLSearchParams; res: ServerResponse }[] = [];
  private readonly server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    res.writeHead(200, { 'content-type': 'application/json' });
    if (url.searchParams.get('watch') !== 'true') {
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '1' }, items: [] }));
      return;
    }
    res.flushHeaders();
    this.watches.push({ query: url.searchParams, res });
  });

  async listen(): Promise<k8s.KubeConfig> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [
        {
          name: 'fake',
          server: `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`,
          skipTLSVerify: true,
        },
      ],
      users: [{ name: 'fake' }],
      contexts: [{ name: 'fake', cluster: 'fake', user: 'fake' }],
      currentContext: 'fake',
    });
    return kc;
  }

  /** One line on the latest watch, as the API server sends a bookmark. */
  bookmark(resourceVersion: string): void {
    const line = { type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion } } };
    this.watches.at(-1)!.res.write(JSON.stringify(line) + '\n');
  }

  async close(): Promise<void> {
    for (const { res } of this.watches) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe('bounded watches (src/kube/bounded-watch.ts)', () => {
  let server: FakeWatchServer;
  let running: RunningWatch | undefined;
  const restarts: string[] = [];

  async function start(idleMs: number): Promise<void> {
    server = new FakeWatchServer();
    const kc = await server.listen();
    running = watchResource<k8s.V1Pod>({
      kc,
      what: 'pods',
      path: '/api/v1/pods',
      list: async () => ({ apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '1' }, items: [] }),
      log: silentLogger,
      handlers: { upsert: () => undefined, remove: () => undefined },
      onRestart: (reason) => restarts.push(reason),
      bounds: { idleMs, timeoutSeconds: () => 420 },
    });
    await running.synced;
  }

  afterEach(async () => {
    await running?.stop();
    running = undefined;
    await server.close();
    restarts.length = 0;
  });

  it('asks for bookmarks and a server-side timeout, as client-go does', async () => {
    await start(60_000);
    const watch = await waitFor('a watch', async () => server.watches[0], { timeoutMs: 5_000 });
    assert.equal(watch.query.get('allowWatchBookmarks'), 'true');
    assert.equal(watch.query.get('timeoutSeconds'), '420');
    assert.equal(watch.query.get('resourceVersion'), '1');
  });

  it('a stream silent for its idle bound is ended and watched again from where it was', async () => {
    await start(300);
    await waitFor('a watch', async () => server.watches[0], { timeoutMs: 5_000 });
    await waitFor('the stalled watch restarted', async () => server.watches[1], { timeoutMs: 5_000 });
    assert.deepEqual(restarts, ['watch-restart']);
    assert.equal(server.watches[1]!.query.get('resourceVersion'), '1', 'resumed, not listed again');
  });

  it('bookmarks keep a quiet stream open', async () => {
    await start(400);
    await waitFor('a watch', async () => server.watches[0], { timeoutMs: 5_000 });
    for (let i = 2; i < 10; i++) {
      await new Promise((resolve) => setTimeout(resolve, 150));
      server.bookmark(String(i));
    }
    assert.equal(server.watches.length, 1, 'never restarted');
    assert.deepEqual(restarts, []);
    await waitFor('restarted once the bookmarks stop', async () => server.watches[1], { timeoutMs: 5_000 });
    assert.equal(server.watches[1]!.query.get('resourceVersion'), '9', 'from the last bookmark');
  });
});
