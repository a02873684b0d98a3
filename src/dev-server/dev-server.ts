// A Temporal dev server (the Temporal CLI's `server start-dev`) with the Web UI, a SQLite file and this project's
// search attributes: what the demo, the benchmark and `npm start` without TEMPORAL_ADDRESS run.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { allSearchAttributes } from '../workflows/search-attributes.js';
import { binPath, stateDir } from './paths.js';
import { freePort, GiveUp, SERVER_PORTS, startRetrying, waitFor } from './processes.js';

/** Where `npm start` keeps the embedded dev server's SQLite file. */
export const devServerDbPath = join(stateDir, 'temporal', 'dev-server.sqlite');

export interface DevServer {
  address: string;
  uiUrl: string;
  /** Its Prometheus page, when started with `metrics`. */
  metricsUrl?: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

type DevServerOptions = {
  dbFilename?: string;
  port?: number;
  uiPort?: number;
  /** The codec server the Web UI decodes encrypted payloads with. */
  uiCodecEndpoint?: string;
  /** Serve the server's metrics (its `action` counter among them) on a free port. */
  metrics?: boolean;
  /** The address it listens on (default 127.0.0.1); 0.0.0.0 for clients in pods. Clients here use 127.0.0.1. */
  listenAddress?: string;
};

/**
 * Starts a dev server. Ports are picked free, but another process can take one before the server binds it (the
 * CLI also picks its HTTP API and metrics ports itself): a start that fails with "address already in use" is
 * tried again on fresh ports.
 */
export function startDevServer(opts: DevServerOptions = {}): Promise<DevServer> {
  const fixedPorts = opts.port !== undefined || opts.uiPort !== undefined;
  return startRetrying(
    () => startDevServerOnce(opts),
    (err) => !fixedPorts && /address already in use/.test(String(err)),
  );
}

async function startDevServerOnce(opts: DevServerOptions): Promise<DevServer> {
  const port = opts.port ?? (await freePort(SERVER_PORTS));
  const uiPort = opts.uiPort ?? (await freePort(SERVER_PORTS));
  const args = [
    'server',
    'start-dev',
    '--ip',
    opts.listenAddress ?? '127.0.0.1',
    '--port',
    String(port),
    '--ui-port',
    String(uiPort),
    '--log-level',
    'error',
  ];
  if (opts.uiCodecEndpoint) args.push('--ui-codec-endpoint', opts.uiCodecEndpoint);
  const metricsPort = opts.metrics ? await freePort(SERVER_PORTS) : undefined;
  if (metricsPort !== undefined) args.push('--metrics-port', String(metricsPort));
  if (opts.dbFilename) {
    mkdirSync(dirname(opts.dbFilename), { recursive: true });
    args.push('--db-filename', opts.dbFilename);
  }
  for (const key of allSearchAttributes) {
    args.push('--search-attribute', `${key.name}=${key.type === 'INT' ? 'Int' : 'Keyword'}`);
  }
  const child = spawn(binPath('temporal'), args, { stdio: ['ignore', 'ignore', 'pipe'] });
  // Never outlive the process that started it (a demo or test stopped mid-start, a Ctrl-C).
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.off('exit', killOnExit));
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitFor(
    `the Temporal dev server on 127.0.0.1:${port}`,
    async () => {
      if (child.exitCode !== null) throw new GiveUp(`temporal exited: ${stderr}`);
      return (await portOpen(port)) && (await portOpen(uiPort)) ? true : undefined;
    },
    { timeoutMs: 60_000, hint: 'run `npm run provision` if .lws-temporal/bin/temporal is missing' },
  );
  return {
    address: `127.0.0.1:${port}`,
    uiUrl: `http://127.0.0.1:${uiPort}`,
    ...(metricsPort !== undefined && { metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` }),
    child,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
