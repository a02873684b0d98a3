// The mutating admission webhooks: the API server POSTs an admission.k8s.io/v1 AdmissionReview
// - to /mutate-pod for each pod CREATE that the MutatingWebhookConfiguration selects (the pods with the LWS name
//   label); the answer carries a JSONPatch that gives the pod its per-pod labels, affinity and env (mutatePod) before
//   it is stored, so no pod is ever seen without them;
// - to /mutate-leaderworkerset for each LWS CREATE and UPDATE: the two value rewrites of upstream's defaulting webhook
//   (rewriteLwsValues), which no API of the oldest supported Kubernetes can make without a webhook.
// GET /healthz answers 200 while the server serves.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { V1Pod } from '@kubernetes/client-node';
import { silentLogger, type Logger } from '../log.js';
import { API_GROUP, API_VERSION, KIND, rewriteLwsValues } from '../model/index.js';
import { diffObjects } from './json-patch.js';
import { mutatePod } from './pod-mutation.js';
import type { OwnerCheck } from './owner-check.js';
import type { AdmissionMetrics } from '../observability/metrics.js';

export const MUTATE_POD_PATH = '/mutate-pod';
export const MUTATE_LWS_PATH = '/mutate-leaderworkerset';
export const HEALTHZ_PATH = '/healthz';
const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

/**
 * The API server's own limit for a request body is 3 MiB and an AdmissionReview of a CREATE carries the object once
 * (plus the request's metadata); controller-runtime allows 7 MiB. A pod is a few KiB.
 */
export const DEFAULT_MAX_BODY_BYTES = 7 * 1024 * 1024;

export type PodMutation = (pod: V1Pod) => V1Pod | { error: string };

/** The parts of an admission.k8s.io/v1 AdmissionRequest this webhook reads. */
export interface AdmissionRequest {
  uid: string;
  kind?: { group?: string; version?: string; kind?: string };
  resource?: { group?: string; version?: string; resource?: string };
  subResource?: string;
  name?: string;
  namespace?: string;
  operation?: string;
  object?: unknown;
  dryRun?: boolean;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  patchType?: 'JSONPatch';
  /** base64 of the JSON text of the patch. */
  patch?: string;
  status?: { code: number; reason?: string; message: string };
}

export interface AdmissionReview {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: 'AdmissionReview';
  response: AdmissionResponse;
}

/** What the handler did with one request, for its log line. */
export interface ReviewOutcome {
  review: AdmissionReview;
  /** The patched paths; empty when the object stays as it is. */
  paths: string[];
  denied?: string;
}

/** An HTTP-level refusal: the body was no AdmissionReview. The API server then applies the failurePolicy. */
export class BadReview extends Error {
  override name = 'BadReview';
  constructor(
    message: string,
    readonly statusCode = 400,
  ) {
    super(message);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks the outer AdmissionReview and returns its request. */
export function parseReview(body: unknown): AdmissionRequest {
  if (!isObject(body)) throw new BadReview('expected a JSON object');
  if (body.kind !== 'AdmissionReview' || body.apiVersion !== ADMISSION_API_VERSION) {
    throw new BadReview(
      `expected kind AdmissionReview of apiVersion ${ADMISSION_API_VERSION}, got ${String(body.kind)} of ${String(body.apiVersion)} ` +
        '(the MutatingWebhookConfiguration must list admissionReviewVersions [v1])',
    );
  }
  const request = body.request;
  if (!isObject(request) || typeof request.uid !== 'string' || request.uid === '') {
    throw new BadReview('the AdmissionReview has no request.uid');
  }
  return request as unknown as AdmissionRequest;
}

function answer(response: AdmissionResponse): AdmissionReview {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response };
}

function deny(uid: string, code: number, reason: string, message: string): AdmissionReview {
  return answer({ uid, allowed: false, status: { code, reason, message } });
}

function isPodCreate(request: AdmissionRequest): boolean {
  const isPod = (request.kind?.group ?? '') === '' && request.kind?.kind === 'Pod' && !request.subResource;
  return isPod && request.operation === 'CREATE';
}

function isLwsWrite(request: AdmissionRequest): boolean {
  const { kind } = request;
  const isLws = kind?.group === API_GROUP && kind.version === API_VERSION && kind.kind === KIND && !request.subResource;
  return isLws && (request.operation === 'CREATE' || request.operation === 'UPDATE');
}

/** The answer to one request: the object as `mutate` returns it, as a JSONPatch against the object that came in. */
function review<T>(
  request: AdmissionRequest,
  object: T,
  mutate: (object: T) => T | { error: string },
  noun: string,
): ReviewOutcome {
  const { uid } = request;
  let mutated: T | { error: string };
  try {
    mutated = mutate(structuredClone(object));
  } catch (err) {
    const message = `internal error mutating the ${noun}: ${(err as Error).message}`;
    return { review: deny(uid, 500, 'InternalError', message), paths: [], denied: message };
  }
  if (typeof mutated === 'object' && mutated !== null && 'error' in mutated && typeof mutated.error === 'string') {
    return { review: deny(uid, 403, 'Forbidden', mutated.error), paths: [], denied: mutated.error };
  }
  const ops = diffObjects(object, mutated);
  if (ops.length === 0) return { review: answer({ uid, allowed: true }), paths: [] };
  const patch = Buffer.from(JSON.stringify(ops)).toString('base64');
  return {
    review: answer({ uid, allowed: true, patchType: 'JSONPatch', patch }),
    paths: ops.map((o) => o.path),
  };
}

/**
 * The answer to one AdmissionRequest: the pod as mutatePod returns it, as a JSONPatch against the pod that came in.
 * Anything but a pod CREATE is allowed unchanged (the configuration selects none). A mutation error denies the
 * pod with its message, as upstream's webhook does (403, which the API server shows as "admission webhook ... denied
 * the request: <message>").
 */
export function reviewPod(request: AdmissionRequest, mutate: PodMutation): ReviewOutcome {
  const { uid } = request;
  if (!isPodCreate(request)) {
    return { review: answer({ uid, allowed: true }), paths: [] };
  }
  if (!isObject(request.object)) {
    const message = 'the AdmissionReview of a pod CREATE carries no object';
    return { review: deny(uid, 400, 'BadRequest', message), paths: [], denied: message };
  }
  let pod = request.object as V1Pod;
  // The API server puts the request's namespace on the object before admission; a pod without one still gets
  // its group key from the right namespace (and the patch leaves the namespace alone).
  if (!pod.metadata?.namespace && request.namespace) {
    pod = { ...pod, metadata: { ...pod.metadata, namespace: request.namespace } };
  }
  return review(request, pod, mutate, 'pod');
}

/** The answer to an LWS CREATE or UPDATE: upstream's value rewrites. Anything else is allowed unchanged. */
export function reviewLeaderWorkerSet(request: AdmissionRequest): ReviewOutcome {
  const { uid } = request;
  if (!isLwsWrite(request)) return { review: answer({ uid, allowed: true }), paths: [] };
  if (!isObject(request.object)) {
    const message = `the AdmissionReview of a LeaderWorkerSet ${request.operation ?? 'write'} carries no object`;
    return { review: deny(uid, 400, 'BadRequest', message), paths: [], denied: message };
  }
  return review(request, request.object, rewriteLwsValues, 'LeaderWorkerSet');
}

/** A pod CREATE's owner check; anything else passes. */
async function checkOwnerOf(request: AdmissionRequest, check: OwnerCheck): Promise<string | undefined> {
  if (!isPodCreate(request) || !isObject(request.object)) return undefined;
  const pod = request.object as V1Pod;
  const namespace = pod.metadata?.namespace || request.namespace;
  return namespace ? check(namespace, pod) : undefined;
}

/** The body as text, refused (413) beyond `limit` bytes without reading the rest. */
function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      reject(new BadReview(`the request body (${declared} bytes) exceeds ${limit} bytes`, 413));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // Nothing more is read; the connection goes once the 413 is sent.
        req.pause();
        req.removeAllListeners('data');
        reject(new BadReview(`the request body exceeds ${limit} bytes`, 413));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export interface AdmissionServerOptions {
  /** The serving certificate (PEM, its chain after it) and its key. */
  tls: { cert: string | Buffer; key: string | Buffer };
  mutate?: PodMutation;
  /** Refuses a pod whose StatefulSet is gone or being deleted (owner-check.ts); none: not checked. */
  ownerCheck?: OwnerCheck;
  log?: Logger;
  maxBodyBytes?: number;
  metrics?: AdmissionMetrics;
}

export interface AdmissionServer {
  server: Server;
  /** Listens; resolves with the port (0 picks a free one). */
  listen(port: number, host?: string): Promise<number>;
  /** Serves new connections with another certificate (a renewed one); open connections keep theirs. */
  setCertificate(tls: { cert: string | Buffer; key: string | Buffer }): void;
  /** /healthz answers 503 from now on (a process about to stop). */
  markUnhealthy(): void;
  close(): Promise<void>;
}

export function createAdmissionServer(opts: AdmissionServerOptions): AdmissionServer {
  const log = opts.log ?? silentLogger;
  const mutate = opts.mutate ?? mutatePod;
  const limit = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  let healthy = true;

  const handleReview = async (req: IncomingMessage, res: ServerResponse, path: string, started: number) => {
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json') {
      throw new BadReview(`expected Content-Type application/json, got ${type || 'none'}`, 415);
    }
    let body: unknown;
    const text = await readBody(req, limit);
    try {
      body = JSON.parse(text);
    } catch (err) {
      throw new BadReview(`the body is no JSON: ${(err as Error).message}`);
    }
    const request = parseReview(body);
    const forPods = path === MUTATE_POD_PATH;
    const refused = forPods && opts.ownerCheck && (await checkOwnerOf(request, opts.ownerCheck));
    const { review, paths, denied } = refused
      ? { review: deny(request.uid, 403, 'Forbidden', refused), paths: [], denied: refused }
      : forPods
        ? reviewPod(request, mutate)
        : reviewLeaderWorkerSet(request);
    const json = JSON.stringify(review);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) }).end(json);
    const outcome =
      denied !== undefined || !review.response.allowed ? 'denied' : paths.length > 0 ? 'patched' : 'unchanged';
    opts.metrics?.observe(forPods ? 'pod' : 'leaderworkerset', outcome, Date.now() - started);
    const object = isObject(request.object) ? (request.object as V1Pod) : undefined;
    const noun = forPods ? 'pod' : 'LeaderWorkerSet';
    const fields = {
      uid: request.uid,
      namespace: request.namespace ?? object?.metadata?.namespace,
      [forPods ? 'pod' : 'lws']: request.name || object?.metadata?.name || object?.metadata?.generateName,
      dryRun: request.dryRun === true ? true : undefined,
      ms: Date.now() - started,
    };
    if (denied !== undefined) log.info(`${noun} denied`, { ...fields, reason: denied });
    else log.debug(`${noun} ${paths.length > 0 ? 'patched' : 'unchanged'}`, { ...fields, paths: paths.join(',') });
  };

  const server = createServer(
    {
      cert: opts.tls.cert,
      key: opts.tls.key,
      // The API server waits timeoutSeconds (10 here) for an answer; a client that sends nothing is let go sooner.
      requestTimeout: 15_000,
      headersTimeout: 10_000,
    },
    (req, res) => {
      const started = Date.now();
      const path = (req.url ?? '').split('?')[0];
      if (path === HEALTHZ_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
        res.writeHead(healthy ? 200 : 503, { 'content-type': 'text/plain' }).end(healthy ? 'ok\n' : 'stopping\n');
        return;
      }
      if (path !== MUTATE_POD_PATH && path !== MUTATE_LWS_PATH) {
        const paths = `${MUTATE_POD_PATH} or ${MUTATE_LWS_PATH}`;
        res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found; the webhooks are POST ${paths}\n`);
        return;
      }
      if (req.method !== 'POST') {
        res.writeHead(405, { allow: 'POST', 'content-type': 'text/plain' }).end('POST an AdmissionReview\n');
        return;
      }
      handleReview(req, res, path, started).catch((err: unknown) => {
        const status = err instanceof BadReview ? err.statusCode : 500;
        const message = (err as Error).message;
        opts.metrics?.observe(path === MUTATE_POD_PATH ? 'pod' : 'leaderworkerset', 'error', Date.now() - started);
        (status === 500 ? log.error : log.warn)('refused a webhook request', { status, error: message });
        if (!res.headersSent) {
          // 413: the rest of the body is not read; close the connection instead of draining it.
          const close = status === 413;
          res.writeHead(status, { 'content-type': 'text/plain', ...(close ? { connection: 'close' } : {}) });
          res.end(message + '\n', () => {
            if (close) req.socket.destroy();
          });
        }
      });
    },
  );
  server.on('tlsClientError', (err) => log.debug('TLS handshake failed', { error: err.message }));

  return {
    server,
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve((server.address() as AddressInfo).port);
        });
      }),
    setCertificate: (tls) => server.setSecureContext({ cert: tls.cert, key: tls.key }),
    markUnhealthy: () => {
      healthy = false;
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
