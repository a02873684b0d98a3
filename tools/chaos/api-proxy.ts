// A loopback proxy between the controller (worker and trigger) and the API server that injects API faults: 429 with
// Retry-After, 500/503, reset connections, watch streams cut mid-way and slow answers, each on a seeded share of the
// requests a rule matches (api-faults.ts), switchable at run time, and counted. It speaks TLS with HTTP/2 and
// HTTP/1.1, as the API server does, so the controller talks to it as it talks to a real one (HTTP/2 calls and
// watches, the informers' HTTP/1.1 watches), and forwards each request with the real credentials of the local
// kubeconfig, streaming the answer (watches are long chunked responses).
import { writeFile } from 'node:fs/promises';
import * as http from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import * as http2 from 'node:http2';
import * as https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type * as k8s from '@kubernetes/client-node';
import { createServingBundle } from '../../src/admission/certificates.js';
import type { Logger } from '../../src/log.js';
import {
  chooseFault,
  describeRequest,
  failureStatus,
  noFaults,
  type ApiRequest,
  type FaultAction,
  type FaultCounts,
  type FaultRule,
} from './api-faults.js';
import { SeededRandom } from './random.js';

export interface ApiProxyOptions {
  /** The real API server and the credentials to call it with. */
  upstream: k8s.KubeConfig;
  seed: number;
  log: Logger;
  /** Default 0: a free port. */
  port?: number;
}

type Request = http2.Http2ServerRequest | IncomingMessage;
type Response = http2.Http2ServerResponse | ServerResponse;

/** Headers of one hop only: never forwarded (HTTP/2 forbids them outright). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'host',
  'http2-settings',
]);

function forwardable(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name.startsWith(':') || HOP_BY_HOP.has(name)) continue;
    out[name] = value;
  }
  return out;
}

function isHttp2(res: Response): res is http2.Http2ServerResponse {
  return 'stream' in res;
}

/** The client is no longer there to answer (it went while a slow answer waited, or its connection broke). */
function gone(res: Response): boolean {
  return isHttp2(res) ? res.stream.destroyed || res.stream.closed : res.destroyed || res.writableEnded;
}

const ignore = () => undefined;

export class ApiProxy {
  /** Requests seen, and the faults injected into them, since the start. */
  requests = 0;
  readonly injected: FaultCounts = noFaults();
  private rules: readonly FaultRule[] = [];
  private readonly random: SeededRandom;
  private readonly sockets = new Set<TLSSocket>();
  /** Watches streaming now, each with how to cut it: a watch-cut also hits the long ones opened before it was set. */
  private readonly watches = new Map<Response, { request: ApiRequest; cutAfter: (ms: number) => void }>();
  /** The TCP sockets under the TLS ones, by the client's port: only these can send a reset (RST). */
  private readonly tcpByPort = new Map<number, Socket>();

  private constructor(
    private readonly server: http2.Http2SecureServer,
    private readonly agent: http.Agent,
    private readonly target: URL,
    private readonly authorization: string | undefined,
    readonly caPem: string,
    private readonly log: Logger,
    seed: number,
  ) {
    this.random = new SeededRandom(seed);
    server.on('connection', (socket: Socket) => {
      const port = socket.remotePort;
      if (port === undefined) return;
      this.tcpByPort.set(port, socket);
      socket.once('close', () => this.tcpByPort.delete(port));
    });
    server.on('secureConnection', (socket: TLSSocket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  static async start(opts: ApiProxyOptions): Promise<ApiProxy> {
    const cluster = opts.upstream.getCurrentCluster();
    if (!cluster) throw new Error('the upstream KubeConfig has no current cluster');
    const credentials: https.RequestOptions = {};
    await opts.upstream.applyToHTTPSOptions(credentials);
    const headers = (credentials.headers ?? {}) as Record<string, string | undefined>;
    // Plain HTTP upstream for tests with a tiny local server; the real API server is HTTPS.
    const agent = cluster.server.startsWith('http:')
      ? new http.Agent({ keepAlive: true })
      : new https.Agent({
          keepAlive: true,
          ca: credentials.ca,
          cert: credentials.cert,
          key: credentials.key,
          ...(credentials.rejectUnauthorized === undefined
            ? {}
            : { rejectUnauthorized: credentials.rejectUnauthorized }),
        });
    const bundle = await createServingBundle({ hosts: ['127.0.0.1', 'localhost'] });
    const server = http2.createSecureServer({ cert: bundle.cert, key: bundle.key, allowHTTP1: true });
    const proxy = new ApiProxy(
      server,
      agent,
      new URL(cluster.server),
      headers.Authorization ?? headers.authorization,
      bundle.ca.cert,
      opts.log,
      opts.seed,
    );
    server.on('request', (req: Request, res: Response) => {
      // A client or the API server going mid-request is what this proxy is for: never an unhandled error event.
      req.on('error', ignore);
      res.on('error', ignore);
      try {
        proxy.handle(req, res);
      } catch (err) {
        opts.log.warn('request failed in the proxy', { path: req.url, error: String(err) });
        proxy.cut(res);
      }
    });
    server.on('sessionError', ignore);
    server.on('tlsClientError', ignore);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
    });
    opts.log.info('API proxy listening', { url: proxy.url, upstream: cluster.server });
    return proxy;
  }

  get url(): string {
    return `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /**
   * From now on, requests meet these rules (none: every request passes untouched). Watch-cut rules also draw for each
   * watch open now: the trigger's watches last for many minutes, a lifecycle for seconds.
   */
  setFaults(rules: readonly FaultRule[]): void {
    this.rules = rules;
    const cuts = rules.filter((r) => r.kind === 'watch-cut');
    for (const watch of cuts.length ? this.watches.values() : []) {
      const action = chooseFault(cuts, watch.request, this.random);
      if (action?.kind !== 'watch-cut') continue;
      this.injected['watch-cut']++;
      watch.cutAfter(action.afterMs);
    }
    this.log.info('faults set', { rules: rules.map((r) => `${r.kind}@${r.fraction}`).join(' ') || 'none' });
  }

  clearFaults(): void {
    this.setFaults([]);
  }

  /** A kubeconfig for the controller: the proxy, its CA, and no credentials of value (the proxy holds those). */
  kubeconfig(): string {
    return `apiVersion: v1
kind: Config
clusters:
- name: api-proxy
  cluster:
    server: ${this.url}
    certificate-authority-data: ${Buffer.from(this.caPem).toString('base64')}
users:
- name: via-proxy
  user:
    token: via-proxy
contexts:
- name: api-proxy
  context:
    cluster: api-proxy
    user: via-proxy
current-context: api-proxy
`;
  }

  writeKubeconfig(path: string): Promise<void> {
    return writeFile(path, this.kubeconfig(), { mode: 0o600 });
  }

  /**
   * Every client connection closed at once (FIN, as the kernel closes a killed process's sockets): what the controller
   * sees when the API server it talks to dies.
   */
  dropConnections(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.dropConnections();
    await closed;
    this.agent.destroy();
  }

  private handle(req: Request, res: Response): void {
    this.requests++;
    const request = describeRequest(req.method ?? 'GET', req.url ?? '/');
    const action = chooseFault(this.rules, request, this.random);
    if (action) {
      this.injected[action.kind]++;
      this.log.debug('fault', { ...action, verb: request.verb, path: request.path });
    }
    switch (action?.kind) {
      case '429':
        return this.answer(req, res, 429, 'Too many requests, please try again later.', action.retryAfterSeconds);
      case '5xx':
        return this.answer(req, res, action.status, `the API proxy injected a ${action.status}`);
      case 'reset':
        if (action.when === 'before-upstream') return this.resetConnection(req, res);
        return this.forward(req, res, request, action);
      case 'slow': {
        const timer = setTimeout(() => this.forward(req, res, request), action.delayMs);
        res.once('close', () => clearTimeout(timer));
        return;
      }
      default:
        return this.forward(req, res, request, action);
    }
  }

  private answer(req: Request, res: Response, code: number, message: string, retryAfterSeconds?: number): void {
    req.resume();
    const body = JSON.stringify(failureStatus(code, message, retryAfterSeconds));
    res.writeHead(code, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      ...(retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) }),
    });
    res.end(body);
  }

  private forward(req: Request, res: Response, request: ApiRequest, action?: FaultAction): void {
    if (gone(res)) return;
    const headers = forwardable(req.headers);
    if (this.authorization) headers.authorization = this.authorization;
    const send = this.target.protocol === 'http:' ? http.request : https.request;
    const upstream = send(
      {
        protocol: this.target.protocol,
        hostname: this.target.hostname,
        port: this.target.port,
        method: req.method,
        path: req.url,
        headers,
        agent: this.agent,
      },
      (answer) => {
        answer.on('error', ignore);
        if (gone(res)) return void answer.destroy();
        if (action?.kind === 'reset') {
          // The API server did it; the client never hears.
          answer.destroy();
          return this.resetConnection(req, res);
        }
        res.writeHead(answer.statusCode ?? 502, forwardable(answer.headers));
        // A watch may say nothing for a while: the client learns it is open now.
        if (!isHttp2(res)) res.flushHeaders();
        answer.pipe(res as NodeJS.WritableStream);
        // The API server's side broke mid-answer: so does the client's, rather than a clean (and wrong) end.
        answer.once('close', () => {
          if (!answer.complete) this.cut(res);
        });
        if (request.verb !== 'watch') return;
        let timer: NodeJS.Timeout | undefined;
        const cutAfter = (ms: number) => {
          clearTimeout(timer);
          timer = setTimeout(() => {
            answer.destroy();
            this.cut(res);
          }, ms);
        };
        this.watches.set(res, { request, cutAfter });
        res.once('close', () => {
          clearTimeout(timer);
          this.watches.delete(res);
        });
        if (action?.kind === 'watch-cut') cutAfter(action.afterMs);
      },
    );
    upstream.on('error', (err) => {
      this.log.debug('upstream failed', { path: req.url, error: err.message });
      // Refused or reset on the API server's side (a restart): the client's stream breaks as its connection would.
      this.cut(res);
    });
    // The client gave up (a watch it no longer needs): so does the upstream request.
    res.once('close', () => {
      if (!upstream.destroyed && !(upstream.writableFinished && res.writableFinished)) upstream.destroy();
    });
    req.pipe(upstream);
  }

  /** This request's stream broken: an HTTP/2 stream reset, or an HTTP/1.1 connection closed mid-answer. */
  private cut(res: Response): void {
    if (isHttp2(res)) {
      if (!res.stream.destroyed && !res.stream.closed) res.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    } else {
      res.destroy();
    }
  }

  /** The client's connection reset (RST): with HTTP/2, every stream on it fails too. */
  private resetConnection(req: Request, res: Response): void {
    const port = isHttp2(res) ? res.stream.session?.socket.remotePort : req.socket.remotePort;
    const tcp = port === undefined ? undefined : this.tcpByPort.get(port);
    if (tcp && !tcp.destroyed) tcp.resetAndDestroy();
    else if (isHttp2(res)) res.stream.session?.destroy();
    else req.socket.destroy();
  }
}
