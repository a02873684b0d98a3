// Every request this controller makes to the API server, for lws_kube_api_requests_total: operators see what the
// controller costs the API server, and the benchmark compares it with upstream's client-side count
// (controller-runtime's rest_client_requests_total). Observed per KubeConfig, so that worker and trigger in one
// process count apart.
import type { KubeConfig } from '@kubernetes/client-node';

/** The API server's own verbs (as in its audit log and its metrics). */
export type KubeVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export interface KubeRequest {
  verb: KubeVerb;
  /** The resource, with its subresource after a slash (`leaderworkersets/status`); `unknown` off the API's paths. */
  resource: string;
  /** The HTTP status; 0 when no answer came (the connection failed). */
  code: number;
}

// /api/v1[/namespaces/{ns}]/{resource}[/{name}[/{sub}]] and /apis/{group}/{version}[/namespaces/{ns}]/...
const API_PATH =
  /^\/(?:api\/[^/]+|apis\/[^/]+\/[^/]+)(?:\/namespaces\/[^/]+(?=\/))?\/([^/?]+)(?:\/([^/?]+)(?:\/([^/?]+))?)?/;

/**
 * What a call is, in the API server's terms: a GET of a collection is a list (a watch with `watch=true`), of a named
 * object a get; a DELETE of a collection is a deletecollection. `/api/v1/namespaces/{name}` names a namespace.
 */
export function kubeRequestOf(method: string, path: string, query?: URLSearchParams): Omit<KubeRequest, 'code'> {
  const [pathOnly = '', search = ''] = path.split('?', 2);
  const params = query ?? new URLSearchParams(search);
  const m = API_PATH.exec(pathOnly);
  const resource = m ? (m[3] ? `${m[1]}/${m[3]}` : (m[1] ?? 'unknown')) : 'unknown';
  const named = Boolean(m?.[2]);
  switch (method.toUpperCase()) {
    case 'GET':
      if (params.get('watch') === 'true' || params.get('watch') === '1') return { verb: 'watch', resource };
      return { verb: named ? 'get' : 'list', resource };
    case 'POST':
      return { verb: 'create', resource };
    case 'PUT':
      return { verb: 'update', resource };
    case 'PATCH':
      return { verb: 'patch', resource };
    default:
      return { verb: named ? 'delete' : 'deletecollection', resource };
  }
}

const observers = new WeakMap<KubeConfig, (request: KubeRequest) => void>();

/** Calls `observer` with each request made with `kc` from now on (one observer per KubeConfig). */
export function observeKubeRequests(kc: KubeConfig, observer: (request: KubeRequest) => void): void {
  observers.set(kc, observer);
}

/** Records one request made with `kc`: after its answer, or when a watch opens. */
export function noteKubeRequest(kc: KubeConfig, method: string, path: string, code: number, query?: URLSearchParams) {
  const observer = observers.get(kc);
  if (observer) observer({ ...kubeRequestOf(method, path, query), code });
}
