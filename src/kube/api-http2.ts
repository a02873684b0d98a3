// HTTP/2 to the API server, as client-go talks to it: calls and watches are streams on a few shared connections, not a
// TLS connection each (about 2 ms of client CPU per new connection). Where HTTP/2 is not on offer (a plain-http server,
// a proxy, a server that does not negotiate h2) the callers use HTTP/1.1.
import * as http2 from 'node:http2';
import type * as https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { agentKey } from '../config/kubernetes.js';

/** Until a connection's SETTINGS arrive; the API server offers 100 concurrent streams per connection. */
const DEFAULT_MAX_STREAMS = 100;
/**
 * A connection quiet for `idleMs` is closed if no stream is open on it, else pinged and dropped if the ping is not
 * answered within `pingTimeoutMs`, as client-go does. Read when a connection opens; tests shorten them.
 */
export const http2Timeouts = { idleMs: 30_000, pingTimeoutMs: 15_000 };

export interface Http2Target {
  server: string;
  headers: http2.OutgoingHttpHeaders;
  tls: http2.SecureClientSessionOptions;
  /** Server plus TLS identity: connections are shared only between calls that would present the same. */
  key: string;
}

/** The server answered a TLS handshake without agreeing to h2: use HTTP/1.1 for it from now on. */
class Http2Unsupported extends Error {}

interface Connection {
  session: http2.ClientHttp2Session;
  /** Streams open on it: never more than the server allows. */
  active: number;
  /** The server's limit, once its SETTINGS arrived (until then Node reports no limit at all). */
  maxStreams: number;
}

const pools = new Map<string, Connection[]>();
const http1Only = new Set<string>();

/** For options that `kc.applyToHTTPSOptions` filled in; undefined: use HTTP/1.1. */
export function http2Target(kc: KubeConfig, options: https.RequestOptions): Http2Target | undefined {
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server.startsWith('https:') || cluster.proxyUrl) return undefined;
  const { ca, cert, key: privateKey, pfx, passphrase, rejectUnauthorized, servername } = options;
  const key = agentKey(cluster.server, { ca, cert, key: privateKey, pfx, passphrase, rejectUnauthorized });
  if (http1Only.has(key)) return undefined;
  const headers: http2.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value !== undefined) headers[name.toLowerCase()] = value;
  }
  if (typeof options.auth === 'string') headers.authorization = `Basic ${Buffer.from(options.auth).toString('base64')}`;
  const tls: http2.SecureClientSessionOptions = { ca, cert, key: privateKey, pfx, passphrase, servername };
  if (rejectUnauthorized !== undefined) tls.rejectUnauthorized = rejectUnauthorized;
  return { server: cluster.server, headers, tls, key };
}

function drop(key: string, session: http2.ClientHttp2Session): void {
  const pool = pools.get(key);
  if (!pool) return;
  const left = pool.filter((c) => c.session !== session);
  if (left.length > 0) pools.set(key, left);
  else pools.delete(key);
}

function connect(target: Http2Target): Connection {
  const session = http2.connect(target.server, target.tls);
  const connection: Connection = { session, active: 0, maxStreams: DEFAULT_MAX_STREAMS };
  session.on('remoteSettings', (settings) => {
    connection.maxStreams = settings.maxConcurrentStreams ?? DEFAULT_MAX_STREAMS;
  });
  session.on('error', (err: NodeJS.ErrnoException) => {
    // Its streams fail with the error too; the callers see it there.
    if (err.code === 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL') http1Only.add(target.key);
    drop(target.key, session);
  });
  session.on('connect', () => {
    if (session.alpnProtocol !== 'h2') {
      http1Only.add(target.key);
      session.destroy(new Http2Unsupported(`${target.server} did not agree to HTTP/2`));
    }
  });
  session.on('goaway', () => drop(target.key, session));
  session.on('close', () => drop(target.key, session));
  const { idleMs, pingTimeoutMs } = http2Timeouts;
  session.on('timeout', () => {
    // Unused: close it (a pool whose credentials rotated would otherwise keep its connections for good).
    if (connection.active === 0) return session.close();
    // Streams open but quiet (watches): make sure the server is still there, and again after each quiet period (the
    // timeout fires once; an answered ping does not start it again).
    const deadline = setTimeout(
      () => session.destroy(new Error('the API server did not answer a ping')),
      pingTimeoutMs,
    );
    deadline.unref();
    const sent = session.ping((err) => {
      clearTimeout(deadline);
      if (err) {
        if (!session.destroyed) session.destroy(err);
      } else if (!session.destroyed) session.setTimeout(idleMs);
    });
    if (!sent) clearTimeout(deadline);
  });
  session.setTimeout(idleMs);
  // An idle connection must not keep a process (a CLI, a test) alive; open streams ref it (see stream()).
  session.unref();
  return connection;
}

/** A connection with room for one more stream, opening one if every connection is full. */
function acquire(target: Http2Target): Connection {
  const pool = pools.get(target.key) ?? [];
  pools.set(target.key, pool);
  let connection = pool.find((c) => !c.session.destroyed && !c.session.closed && c.active < c.maxStreams);
  if (!connection) {
    connection = connect(target);
    pool.push(connection);
  }
  return connection;
}

/** The connection is held (and the process kept alive) until the stream closes. */
export function stream(target: Http2Target, method: string, path: string, body?: Buffer): http2.ClientHttp2Stream {
  const connection = acquire(target);
  const request = connection.session.request(
    { ':method': method, ':path': path, ...target.headers },
    { endStream: body === undefined },
  );
  connection.active++;
  connection.session.ref();
  request.once('close', () => {
    connection.active--;
    if (connection.active === 0 && !connection.session.destroyed) connection.session.unref();
  });
  if (body !== undefined) request.end(body);
  return request;
}

/** Open HTTP/2 connections to each server and identity, for tests and diagnostics. */
export function openConnections(): number {
  let n = 0;
  for (const pool of pools.values()) n += pool.filter((c) => !c.session.destroyed).length;
  return n;
}

/** When the connection failed, Node cancels its streams (ERR_HTTP2_STREAM_CANCEL) with its error as the cause. */
export function streamError(err: unknown): unknown {
  const e = err as { code?: unknown; cause?: unknown };
  return e?.code === 'ERR_HTTP2_STREAM_CANCEL' && e.cause ? e.cause : err;
}
