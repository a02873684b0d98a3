// API objects as plain JSON over the shared connections (api-http2.ts), without client-node's typed decoding, which
// cost the worker's main thread about a tenth in a 100-group rebuild. Field names are the typed models'; timestamps
// stay RFC 3339 strings, so code reads them only through isoTime or as present/absent.
import * as http from 'node:http';
import * as https from 'node:https';
import {
  ApiException,
  type CoreV1Event,
  type KubeConfig,
  type V1ControllerRevision,
  type V1Namespace,
  type V1Node,
  type V1Pod,
  type V1Service,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import { API_GROUP, API_VERSION, PLURAL, type LeaderWorkerSet, type ObjectKey } from '../model/index.js';
import { http2Target, stream, streamError, type Http2Target } from './api-http2.js';
import { noteKubeRequest } from './requests.js';

// The collections the waits also watch (group-waits.ts), exported.
export const podsPath = (namespace: string) => `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`;
export const statefulSetsPath = (namespace: string) =>
  `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/statefulsets`;
// Collections only the JsonResources below call, not exported: test/deploy/kube-calls.ts counts these calls at each
// JsonResource method, and takes an exported path for one that is watched too.
const servicesPath = (namespace: string) => `/api/v1/namespaces/${encodeURIComponent(namespace)}/services`;
const eventsPath = (namespace: string) => `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;
const controllerRevisionsPath = (namespace: string) =>
  `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/controllerrevisions`;
const leaderWorkerSetsPath = (namespace: string) =>
  `/apis/${API_GROUP}/${API_VERSION}/namespaces/${encodeURIComponent(namespace)}/${PLURAL}`;
// The same collections across all namespaces: the trigger's first lists (it watches these paths too).
const allPods = '/api/v1/pods';
const allServices = '/api/v1/services';
const allEvents = '/api/v1/events';
const allStatefulSets = '/apis/apps/v1/statefulsets';
const allControllerRevisions = '/apis/apps/v1/controllerrevisions';
const allLeaderWorkerSets = `/apis/${API_GROUP}/${API_VERSION}/${PLURAL}`;
// Cluster-scoped: the trigger's first list of namespaces (it watches this path too).
const namespaces = '/api/v1/namespaces';
const nodes = '/api/v1/nodes';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

interface Call {
  method: Method;
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  contentType?: string;
}

interface Answer {
  code: number;
  headers: Record<string, string>;
  text: string;
}

/** A status outside 2xx rejects with client-node's ApiException, so kube-errors classifies it as a typed call's. */
export async function kubeCall<T>(kc: KubeConfig, call: Call): Promise<T> {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('the KubeConfig has no current cluster: set KUBECONFIG or its current-context');
  const url = new URL(server.replace(/\/+$/, '') + call.path);
  for (const [key, value] of Object.entries(call.query ?? {}))
    if (value !== undefined) url.searchParams.set(key, value);
  const payload = call.body === undefined ? undefined : Buffer.from(JSON.stringify(call.body));
  // Credentials (token header, client certificate), the TLS trust and, for HTTP/1.1, the shared keep-alive agent.
  const options: https.RequestOptions = { method: call.method, headers: { Accept: 'application/json' } };
  await kc.applyToHTTPSOptions(options);
  if (payload) {
    options.headers = {
      ...options.headers,
      'Content-Type': call.contentType ?? 'application/json',
      'Content-Length': payload.length,
    };
  }
  const target = http2Target(kc, options);
  let answer: Answer;
  try {
    answer = target ? await overHttp2(target, call.method, url, payload) : await overHttp1(url, options, payload);
  } catch (err) {
    // A server that turned HTTP/2 down is now marked for HTTP/1.1 (api-http2.ts): ask again that way.
    if (!target || http2Target(kc, options)) {
      noteKubeRequest(kc, call.method, call.path, 0, url.searchParams);
      throw err;
    }
    answer = await overHttp1(url, options, payload).catch((again: unknown) => {
      noteKubeRequest(kc, call.method, call.path, 0, url.searchParams);
      throw again;
    });
  }
  noteKubeRequest(kc, call.method, call.path, answer.code, url.searchParams);
  if (answer.code < 200 || answer.code > 299) {
    throw new ApiException(
      answer.code,
      `${call.method} ${call.path}: HTTP ${answer.code}`,
      answer.text,
      answer.headers,
    );
  }
  try {
    return (answer.text ? JSON.parse(answer.text) : undefined) as T;
  } catch (err) {
    throw new Error(`${call.method} ${call.path}: the API server's answer is not JSON`, { cause: err });
  }
}

function overHttp2(target: Http2Target, method: Method, url: URL, payload: Buffer | undefined): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const request = stream(target, method, url.pathname + url.search, payload);
    const chunks: Buffer[] = [];
    let code = 0;
    let headers: Record<string, string> = {};
    request.on('response', (h) => {
      code = Number(h[':status']);
      headers = Object.fromEntries(
        Object.entries(h)
          .filter(([k]) => !k.startsWith(':'))
          .map(([k, v]) => [k, String(v)]),
      );
    });
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('error', (err) => reject(streamError(err)));
    let ended = false;
    request.on('end', () => {
      ended = true;
      resolve({ code, headers, text: Buffer.concat(chunks).toString('utf8') });
    });
    // Reset by the server, or its connection lost, before the answer was complete.
    request.on('close', () => {
      if (!ended)
        reject(new Error(`${method} ${url.pathname}: the HTTP/2 stream closed early (code ${request.rstCode})`));
    });
  });
}

function overHttp1(url: URL, options: https.RequestOptions, payload: Buffer | undefined): Promise<Answer> {
  const send = url.protocol === 'https:' ? https.request : http.request;
  return new Promise<Answer>((resolve, reject) => {
    const request = send(url, options, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const headers = Object.fromEntries(Object.entries(response.headers).map(([k, v]) => [k, String(v)]));
        resolve({ code: response.statusCode ?? 0, headers, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    request.on('error', reject);
    request.end(payload);
  });
}

/** What a DELETE sends: a uid precondition, for a StatefulSet how its pods go, for a kubelet's last delete 0 s. */
export interface DeleteBody {
  preconditions?: { uid: string };
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  gracePeriodSeconds?: number;
}

/** One operation of a JSON patch; `path` is a JSON pointer (RFC 6901: `/` in a key is `~1`, `~` is `~0`). */
export interface JsonPatchOperation {
  op: 'test' | 'replace' | 'add' | 'remove';
  path: string;
  value?: unknown;
}

/** A JSON pointer to `keys` (a label or annotation key may hold `/`). */
export function jsonPointer(...keys: string[]): string {
  return keys.map((k) => `/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

/** A list as the API server sends it; its resourceVersion is where a watch of the same collection starts. */
export interface JsonList<T> {
  metadata?: { resourceVersion?: string };
  items: T[];
}

export interface JsonResource<T> {
  read(ref: ObjectKey): Promise<T>;
  list(query: { namespace: string; labelSelector: string }): Promise<JsonList<T>>;
  listAll(query?: { labelSelector?: string }): Promise<JsonList<T>>;
  create(namespace: string, body: T): Promise<T>;
  replace(ref: ObjectKey, body: T): Promise<T>;
  /** A JSON merge patch (RFC 7386), of the object or of its status subresource. */
  mergePatch(ref: ObjectKey, body: object, subresource?: 'status'): Promise<T>;
  /** A JSON patch (RFC 6902): its `test` operations make the whole patch fail unless the object is as they say. */
  jsonPatch(ref: ObjectKey, operations: JsonPatchOperation[]): Promise<T>;
  delete(ref: ObjectKey, body: DeleteBody): Promise<unknown>;
}

function resource<T>(
  kc: KubeConfig,
  collection: (namespace: string) => string,
  allNamespaces: string,
): JsonResource<T> {
  const item = (ref: ObjectKey) => `${collection(ref.namespace)}/${encodeURIComponent(ref.name)}`;
  return {
    read: (ref) => kubeCall(kc, { method: 'GET', path: item(ref) }),
    list: ({ namespace, labelSelector }) =>
      kubeCall(kc, { method: 'GET', path: collection(namespace), query: { labelSelector } }),
    listAll: (query) =>
      kubeCall(kc, { method: 'GET', path: allNamespaces, query: { labelSelector: query?.labelSelector } }),
    create: (namespace, body) => kubeCall(kc, { method: 'POST', path: collection(namespace), body }),
    replace: (ref, body) => kubeCall(kc, { method: 'PUT', path: item(ref), body }),
    mergePatch: (ref, body, subresource) =>
      kubeCall(kc, {
        method: 'PATCH',
        path: subresource ? `${item(ref)}/${subresource}` : item(ref),
        body,
        contentType: 'application/merge-patch+json',
      }),
    jsonPatch: (ref, operations) =>
      kubeCall(kc, { method: 'PATCH', path: item(ref), body: operations, contentType: 'application/json-patch+json' }),
    delete: (ref, body) => kubeCall(kc, { method: 'DELETE', path: item(ref), body }),
  };
}

export function podsJson(kc: KubeConfig): JsonResource<V1Pod> {
  return resource<V1Pod>(kc, podsPath, allPods);
}

export function servicesJson(kc: KubeConfig): JsonResource<V1Service> {
  return resource<V1Service>(kc, servicesPath, allServices);
}

/** An Event as sent and received: its times are RFC 3339 strings, where client-node's model has Dates. */
export type EventJson = Omit<CoreV1Event, 'firstTimestamp' | 'lastTimestamp' | 'eventTime'> & {
  firstTimestamp?: string;
  lastTimestamp?: string;
  eventTime?: string;
};

export function eventsJson(kc: KubeConfig): JsonResource<EventJson> {
  return resource<EventJson>(kc, eventsPath, allEvents);
}

export function leaderWorkerSetsJson(kc: KubeConfig): JsonResource<LeaderWorkerSet> {
  return resource<LeaderWorkerSet>(kc, leaderWorkerSetsPath, allLeaderWorkerSets);
}

/** Namespaces are cluster-scoped: a ref's namespace is ignored, its name is the namespace's. */
export function namespacesJson(kc: KubeConfig): JsonResource<V1Namespace> {
  return resource<V1Namespace>(kc, () => namespaces, namespaces);
}

/** Nodes are cluster-scoped: a ref's namespace is ignored. */
export function nodesJson(kc: KubeConfig): JsonResource<V1Node> {
  return resource<V1Node>(kc, () => nodes, nodes);
}

/** As JSON, pod template fields newer than the client survive; a typed model would silently drop them. */
export function statefulSetsJson(kc: KubeConfig): JsonResource<V1StatefulSet> {
  return resource<V1StatefulSet>(kc, statefulSetsPath, allStatefulSets);
}

/** An LWS's template revisions (model/controller-revisions.ts). */
export function controllerRevisionsJson(kc: KubeConfig): JsonResource<V1ControllerRevision> {
  return resource<V1ControllerRevision>(kc, controllerRevisionsPath, allControllerRevisions);
}
