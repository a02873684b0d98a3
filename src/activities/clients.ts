// The API clients every activity shares, made once per worker: plain JSON over shared connections (kube-json.ts).
import type * as k8s from '@kubernetes/client-node';
import type { LeaderWorkerSet } from '../model/index.js';
import type { WorkerMetrics } from '../observability/metrics.js';
import type { KubeRetryReason } from '../kube/retry-reasons.js';
import { RecentLeaderWorkerSets } from './recent-lws.js';
import {
  controllerRevisionsJson,
  eventsJson,
  leaderWorkerSetsJson,
  nodesJson,
  podsJson,
  servicesJson,
  statefulSetsJson,
  type EventJson,
  type JsonResource,
} from '../kube/kube-json.js';

export interface KubeClients {
  kc: k8s.KubeConfig;
  pods: JsonResource<k8s.V1Pod>;
  statefulSets: JsonResource<k8s.V1StatefulSet>;
  services: JsonResource<k8s.V1Service>;
  events: JsonResource<EventJson>;
  leaderWorkerSets: JsonResource<LeaderWorkerSet>;
  nodes: JsonResource<k8s.V1Node>;
  controllerRevisions: JsonResource<k8s.V1ControllerRevision>;
  /** The LWSs read lately: a build from the templates reuses the read its workflow decided on (recent-lws.ts). */
  recentLws?: RecentLeaderWorkerSets;
  /** A call made again within an activity (a wait's broken watch), for lws_kube_api_retries_total; unset in tests. */
  retried?: (reason: KubeRetryReason) => void;
  /** How often a replacement wait looks whether the LWS still wants the group (default REPLACEMENT_CHECK_MS). */
  replacementCheckMs?: number;
}

export function makeClients(
  kc: k8s.KubeConfig,
  metrics?: Pick<WorkerMetrics, 'kubeApiRetries'>,
  opts: Pick<KubeClients, 'replacementCheckMs'> = {},
): KubeClients {
  return {
    ...opts,
    ...(metrics && { retried: (reason) => metrics.kubeApiRetries.inc({ component: 'worker', reason }) }),
    kc,
    pods: podsJson(kc),
    statefulSets: statefulSetsJson(kc),
    services: servicesJson(kc),
    events: eventsJson(kc),
    leaderWorkerSets: leaderWorkerSetsJson(kc),
    nodes: nodesJson(kc),
    controllerRevisions: controllerRevisionsJson(kc),
    recentLws: new RecentLeaderWorkerSets(),
  };
}
