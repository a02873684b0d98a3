// What the API-fault proxy (api-proxy.ts) does to one request: which Kubernetes verb and resource the request is, the
// rules that say which requests a fault may hit and how often, and the seeded draw that picks the fault. Pure: the
// proxy acts on the answer, the campaign (api-campaign.ts) writes the rules.
import type { SeededRandom } from './random.js';

/** Faults the proxy injects itself; restarts of the API server and etcd are the campaign's (api-campaign.ts). */
export const PROXY_FAULT_KINDS = ['429', '5xx', 'reset', 'watch-cut', 'slow'] as const;
export type ProxyFaultKind = (typeof PROXY_FAULT_KINDS)[number];

export const KUBE_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'] as const;
export type KubeVerb = (typeof KUBE_VERBS)[number];
export const READ_VERBS: readonly KubeVerb[] = ['get', 'list', 'watch'];
export const WRITE_VERBS: readonly KubeVerb[] = ['create', 'update', 'patch', 'delete', 'deletecollection'];

/** A request as the API server's authorizer sees it; no verb for what is no resource (discovery, /healthz). */
export interface ApiRequest {
  method: string;
  path: string;
  verb?: KubeVerb;
  resource?: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

/** Subresources of a namespace: /api/v1/namespaces/<name>/status is the namespace's, not a resource "status". */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

export function describeRequest(method: string, url: string): ApiRequest {
  const parsed = new URL(url, 'http://proxy.invalid');
  const segments = parsed.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const request: ApiRequest = { method: method.toUpperCase(), path: parsed.pathname };
  const prefix = segments[0] === 'api' ? 2 : segments[0] === 'apis' ? 3 : 0;
  if (prefix === 0 || segments.length <= prefix) return request;
  let rest = segments.slice(prefix);
  // The deprecated /api/v1/watch/... form.
  const watchPrefix = rest[0] === 'watch';
  if (watchPrefix) rest = rest.slice(1);
  let resource: string | undefined;
  let name: string | undefined;
  let subresource: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3 && !(rest.length === 3 && NAMESPACE_SUBRESOURCES.has(rest[2]!))) {
    request.namespace = rest[1];
    [resource, name, subresource] = rest.slice(2);
  } else {
    [resource, name, subresource] = rest;
  }
  if (!resource) return request;
  request.resource = resource;
  if (name !== undefined) request.name = name;
  if (subresource !== undefined) request.subresource = subresource;
  const watch = watchPrefix || ['true', '1'].includes(parsed.searchParams.get('watch') ?? '');
  const verb = verbOf(request.method, name !== undefined, watch);
  if (verb) request.verb = verb;
  return request;
}

function verbOf(method: string, named: boolean, watch: boolean): KubeVerb | undefined {
  switch (method) {
    case 'GET':
      return watch ? 'watch' : named ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return named ? 'delete' : 'deletecollection';
    default:
      return undefined;
  }
}

/** Which requests a fault may hit, and how. Only resource requests are hit; a watch-cut only hits watches. */
export interface FaultRule {
  kind: ProxyFaultKind;
  /** Of the requests the rule matches, the share it hits: 0 to 1. */
  fraction: number;
  /** Only these verbs (all by default): e.g. WRITE_VERBS, or ['watch']. */
  verbs?: readonly KubeVerb[];
  /** Only paths this matches (without the query). */
  path?: RegExp;
  /** 429: the Retry-After header, in seconds (default 1). */
  retryAfterSeconds?: number;
  /** 5xx: the codes drawn from (default 500 and 503). */
  statuses?: readonly number[];
  /** slow: the added latency, drawn from [min, max] ms (default 100 to 500). */
  latencyMs?: readonly [number, number];
  /** watch-cut: how long the stream runs before it is cut, [min, max] ms (default 200 to 3000). */
  cutAfterMs?: readonly [number, number];
  /** reset: only before the API server sees the request, or only after it answered (default: either, half each). */
  when?: 'before-upstream' | 'after-upstream';
}

/**
 * What the proxy does to one request. A reset destroys the client's connection either before the request reaches the
 * API server (nothing happened) or once its answer came (it happened, and the client never learns): the retry after
 * the second must be idempotent.
 */
export type FaultAction =
  | { kind: '429'; retryAfterSeconds: number }
  | { kind: '5xx'; status: number }
  | { kind: 'reset'; when: 'before-upstream' | 'after-upstream' }
  | { kind: 'watch-cut'; afterMs: number }
  | { kind: 'slow'; delayMs: number };

export function ruleMatches(rule: FaultRule, request: ApiRequest): boolean {
  if (request.verb === undefined) return false;
  if (rule.kind === 'watch-cut' && request.verb !== 'watch') return false;
  if (rule.verbs && !rule.verbs.includes(request.verb)) return false;
  return !rule.path || rule.path.test(request.path);
}

/**
 * The first matching rule whose draw hits decides; none: the request passes untouched. Each matching rule draws once,
 * so one seed gives one sequence of decisions for one sequence of requests (concurrent requests arrive in any order,
 * so a campaign replays the mix of faults, not each one).
 */
export function chooseFault(
  rules: readonly FaultRule[],
  request: ApiRequest,
  random: SeededRandom,
): FaultAction | undefined {
  for (const rule of rules) {
    if (!ruleMatches(rule, request)) continue;
    if (random.next() >= rule.fraction) continue;
    return actionOf(rule, random);
  }
  return undefined;
}

function actionOf(rule: FaultRule, random: SeededRandom): FaultAction {
  const within = ([min, max]: readonly [number, number]) => random.int(min, max);
  switch (rule.kind) {
    case '429':
      return { kind: '429', retryAfterSeconds: rule.retryAfterSeconds ?? 1 };
    case '5xx': {
      const statuses = rule.statuses ?? [500, 503];
      return { kind: '5xx', status: statuses[random.int(0, statuses.length - 1)]! };
    }
    case 'reset':
      return { kind: 'reset', when: rule.when ?? (random.next() < 0.5 ? 'before-upstream' : 'after-upstream') };
    case 'watch-cut':
      return { kind: 'watch-cut', afterMs: within(rule.cutAfterMs ?? [200, 3000]) };
    case 'slow':
      return { kind: 'slow', delayMs: within(rule.latencyMs ?? [100, 500]) };
  }
}

const REASONS: Record<number, string> = {
  429: 'TooManyRequests',
  500: 'InternalError',
  502: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** A metav1.Status as the API server sends it with a failure (client-node and kube/api-errors.ts read these fields). */
export function failureStatus(code: number, message: string, retryAfterSeconds?: number): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: REASONS[code] ?? 'InternalError',
    ...(retryAfterSeconds === undefined ? {} : { details: { retryAfterSeconds } }),
    code,
  };
}

export type FaultCounts = Record<ProxyFaultKind, number>;

export function noFaults(): FaultCounts {
  return Object.fromEntries(PROXY_FAULT_KINDS.map((k) => [k, 0])) as FaultCounts;
}
