import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { silentLogger } from '../../src/log.js';
import { freePort, SERVER_PORTS, waitFor } from '../../src/dev-server/processes.js';
import { buildImageCommand, buildStackImages, IMAGE_REGISTRY } from '../../tools/images/stack-images.js';

/** One line of the model server's stdout, with when this side read it. */
interface LogLine {
  time: string;
  event: string;
  pod: string;
  drainedMs?: number;
  [field: string]: unknown;
}

interface Server {
  child: ChildProcess;
  port: number;
  lines: LogLine[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * The local stack's test workload (tools/images/model-server) run as a process on the host, the way a real node's
 * container runs it: its readiness, its drain on SIGTERM and its crash on demand, as its JSON log lines tell them. The
 * machine is slow and shared: durations are checked from below, with generous ceilings.
 */
describe('model-server (the test workload of the real nodes), on the host', function () {
  this.timeout(120_000);
  let dir: string;
  let binary: string;
  const running: Server[] = [];

  before(async function () {
    // A cold Go build cache on two busy cores.
    this.timeout(600_000);
    dir = await mkdtemp(join(tmpdir(), 'model-server-test-'));
    binary = join(dir, 'model-server');
    await buildImageCommand('model-server', binary, { log: silentLogger });
  });

  after(async () => {
    for (const server of running) if (server.child.exitCode === null) server.child.kill('SIGKILL');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function start(env: Record<string, string> = {}): Promise<Server> {
    const port = await freePort(SERVER_PORTS);
    const child = spawn(binary, [], {
      env: { PATH: process.env.PATH, PORT: String(port), POD_NAME: 'group-0-1', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines: LogLine[] = [];
    createInterface({ input: child.stdout! }).on('line', (line) => lines.push(JSON.parse(line) as LogLine));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    const server = { child, port, lines, exited };
    running.push(server);
    await waitFor('the model server to log `started`', async () => event(server, 'started'), {
      timeoutMs: 30_000,
    });
    return server;
  }

  const event = (server: Server, name: string) => server.lines.find((l) => l.event === name);
  const at = (line: LogLine | undefined) => Date.parse(line!.time);
  const get = (server: Server, path: string, method = 'GET') =>
    fetch(`http://127.0.0.1:${server.port}${path}`, { method }).then((r) => r.status);

  it('logs one JSON object a line with time, event and pod; /healthz at once, /readyz after READY_AFTER_SECONDS', async () => {
    const server = await start({ READY_AFTER_SECONDS: '1', POD_NAMESPACE: 'ns', NODE_NAME: 'real-node-0' });
    const started = event(server, 'started')!;
    assert.equal(started.pod, 'group-0-1');
    assert.equal(started.namespace, 'ns');
    assert.equal(started.node, 'real-node-0');
    assert.equal(started.port, server.port);
    assert.match(started.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/, 'RFC3339Nano, UTC');
    assert.equal(await get(server, '/healthz'), 200);
    if (!event(server, 'ready')) assert.equal(await get(server, '/readyz'), 503, 'not ready before its time');
    await waitFor('`ready`', async () => event(server, 'ready'), { timeoutMs: 30_000 });
    assert.ok(at(event(server, 'ready')) - at(started) >= 1000, 'ready no sooner than READY_AFTER_SECONDS');
    assert.equal(await get(server, '/readyz'), 200);
    server.child.kill('SIGTERM');
    assert.deepEqual(await server.exited, { code: 0, signal: null });
  });

  it('on SIGTERM logs `sigterm`, answers 503 on /readyz, drains DRAIN_SECONDS and logs `exit`, exiting 0', async () => {
    const server = await start({ DRAIN_SECONDS: '1' });
    await waitFor('`ready`', async () => event(server, 'ready'), { timeoutMs: 30_000 });
    assert.equal(await get(server, '/readyz'), 200);
    server.child.kill('SIGTERM');
    await waitFor('`sigterm`', async () => event(server, 'sigterm'), { timeoutMs: 10_000 });
    assert.equal(await get(server, '/readyz'), 503, 'not ready while draining');
    assert.equal(await get(server, '/healthz'), 200, 'still alive while draining');
    // A second SIGTERM neither ends the drain nor starts another.
    server.child.kill('SIGTERM');
    assert.deepEqual(await server.exited, { code: 0, signal: null });
    assert.deepEqual(
      server.lines.map((l) => l.event),
      ['started', 'ready', 'sigterm', 'exit'],
    );
    const drained = at(event(server, 'exit')) - at(event(server, 'sigterm'));
    assert.ok(drained >= 1000 && drained < 10_000, `exit came ${drained} ms after sigterm; DRAIN_SECONDS=1`);
    assert.ok(event(server, 'exit')!.drainedMs! >= 1000, 'drainedMs counts the drain');
    assert.ok(server.lines.every((l) => l.pod === 'group-0-1'));
  });

  it('exits at once with DRAIN_SECONDS unset', async () => {
    const server = await start();
    server.child.kill('SIGTERM');
    assert.deepEqual(await server.exited, { code: 0, signal: null });
    const drainedMs = event(server, 'exit')!.drainedMs;
    assert.ok(drainedMs !== undefined && drainedMs < 1000, `drainedMs ${drainedMs}`);
  });

  it('on POST /crash logs `crash` and exits 1; GET /crash is refused', async () => {
    const server = await start({ DRAIN_SECONDS: '30' });
    assert.equal(await get(server, '/crash'), 405);
    // The answer may be cut off by the exit; the exit code and the log line are what count.
    await get(server, '/crash', 'POST').catch(() => undefined);
    assert.deepEqual(await server.exited, { code: 1, signal: null });
    assert.deepEqual(
      server.lines.map((l) => l.event),
      ['started', 'ready', 'crash'],
    );
  });

  it('refuses a PORT or DRAIN_SECONDS that is no number, exiting 2', async () => {
    for (const env of [{ PORT: 'http' }, { DRAIN_SECONDS: '-1' }]) {
      const child = spawn(binary, [], { env: { ...env }, stdio: 'ignore' });
      const code = await new Promise((resolve) => child.on('exit', resolve));
      assert.equal(code, 2, JSON.stringify(env));
    }
  });
});

describe('buildStackImages (pause and model-server as OCI archives, by content)', function () {
  this.timeout(600_000);
  let cache: string;

  before(async () => {
    cache = await mkdtemp(join(tmpdir(), 'stack-images-test-'));
  });

  after(async () => {
    if (cache) await rm(cache, { recursive: true, force: true });
  });

  it('builds both images into the cache once, under content tags, and then only finds them', async () => {
    const env = { ...process.env, LWS_TEMPORAL_CACHE: cache };
    const first = await buildStackImages({ log: silentLogger, env });
    assert.equal(first.built, true);
    for (const [image, name] of [
      [first.pause, 'pause'],
      [first.modelServer, 'model-server'],
    ] as const) {
      assert.match(image.ref, new RegExp(`^${IMAGE_REGISTRY.replace('.', '\\.')}/${name}:[0-9a-f]{16}$`));
      assert.ok(image.archive.startsWith(join(cache, 'images')), image.archive);
      assert.ok((await stat(image.archive)).size > 100_000, `${image.archive} holds a binary`);
    }
    const second = await buildStackImages({ log: silentLogger, env });
    assert.deepEqual(second, {
      pause: { ...first.pause, built: false },
      modelServer: { ...first.modelServer, built: false },
      built: false,
    });
    assert.deepEqual(
      (await readdir(join(cache, 'images'))).sort(),
      [first.modelServer.archive, first.pause.archive].map((a) => basename(a)).sort(),
      'only the archives: no build folder or partial file is left behind',
    );
  });
});
