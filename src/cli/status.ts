// `lws-temporal status <ns>/<name>`: the LWS as stored, and each group's phase from its leader pod, worker
// StatefulSet and worker pods (everything labelled `leaderworkerset.sigs.k8s.io/name=<name>`).
import * as k8s from '@kubernetes/client-node';
import {
  ANNOTATION_GROUP_RECREATIONS,
  ANNOTATION_GROUP_RESTART_COUNT,
  API_GROUP,
  API_VERSION,
  applyDefaults,
  LABEL_WORKER_INDEX,
  leaderStatefulSetName,
  PLURAL,
  podFacts,
  selectors,
  statefulSetFacts,
  revisionKey,
  type LeaderWorkerSet,
  type ObjectKey,
  type PodFacts,
} from '../model/index.js';
import { apiStatusOf, isHttpNotFound } from '../kube/api-errors.js';
import { loadKubeConfig } from '../config/kubernetes.js';
import { CliError, type StatusReport } from './format.js';
import { groupRows } from './phase.js';

/** The report from what the API returned: pure. */
export function statusReport(
  ref: ObjectKey,
  lws: LeaderWorkerSet,
  pods: k8s.V1Pod[],
  statefulSets: k8s.V1StatefulSet[],
  now: number,
): StatusReport {
  const leaderSet = statefulSets.find((s) => s.metadata?.name === leaderStatefulSetName(ref.name));
  const d = applyDefaults(lws);
  const size = d.spec.leaderWorkerTemplate.size;
  const facts = pods.flatMap((p) => podFacts(p) ?? []);
  const isLeader = (p: PodFacts) => p.labels[LABEL_WORKER_INDEX] === '0';
  const groups = groupRows({
    name: ref.name,
    replicas: d.spec.replicas,
    size,
    revision: revisionKey(d),
    leaders: facts.filter(isLeader),
    workers: facts.filter((p) => !isLeader(p)),
    workerSets: statefulSets
      .flatMap((s) => statefulSetFacts(s) ?? [])
      .filter((s) => s.name !== leaderStatefulSetName(ref.name)),
    records: { ...recordsOf(leaderSet), maxGroupRestarts: d.spec.leaderWorkerTemplate.maxGroupRestarts, now },
  });
  return {
    lws: {
      namespace: ref.namespace,
      name: ref.name,
      policy: d.spec.podTerminationPolicy,
      replicas: d.spec.replicas,
      size,
      readyReplicas: lws.status?.readyReplicas ?? 0,
      updatedReplicas: lws.status?.updatedReplicas ?? 0,
      conditions: (lws.status?.conditions ?? []).map((c) => ({
        type: c.type,
        status: c.status,
        reason: c.reason,
        message: c.message,
      })),
    },
    groups,
  };
}

function recordsOf(leaderSet: k8s.V1StatefulSet | undefined): { counts?: string; recreations?: string } {
  const annotations = leaderSet?.metadata?.annotations ?? {};
  const counts = annotations[ANNOTATION_GROUP_RESTART_COUNT];
  const recreations = annotations[ANNOTATION_GROUP_RECREATIONS];
  return { ...(counts !== undefined && { counts }), ...(recreations !== undefined && { recreations }) };
}

/** An API failure in a sentence: the API server's own message, or the network error. */
function kubeMessage(err: unknown): string {
  if (err instanceof k8s.ApiException) return `HTTP ${err.code}: ${apiStatusOf(err).message}`;
  return err instanceof Error ? err.message : String(err);
}

/** The status of one LWS on the cluster of KUBECONFIG (see loadKubeConfig). */
export async function readStatus(ref: ObjectKey, kc: k8s.KubeConfig = loadKubeConfig()): Promise<StatusReport> {
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const { namespace, name } = ref;
  const labelSelector = selectors.ofLws(name);
  const server = kc.getCurrentCluster()?.server ?? '(no server)';
  try {
    const [lws, pods, statefulSets] = await Promise.all([
      custom.getNamespacedCustomObject({ group: API_GROUP, version: API_VERSION, plural: PLURAL, namespace, name }),
      core.listNamespacedPod({ namespace, labelSelector }),
      apps.listNamespacedStatefulSet({ namespace, labelSelector }),
    ]);
    return statusReport(ref, lws as LeaderWorkerSet, pods.items, statefulSets.items, Date.now());
  } catch (err) {
    if (isHttpNotFound(err)) {
      throw new CliError(`leaderworkerset ${namespace}/${name} not found (Kubernetes API at ${server})`);
    }
    throw new CliError(`cannot read ${namespace}/${name} from the Kubernetes API at ${server}: ${kubeMessage(err)}`, {
      cause: err,
    });
  }
}
