// Every well-known name the controller reads or writes. Labels, annotations and env vars are upstream LWS's, so that
// manifests, dashboards and tools that select on them keep working; names upstream does not have are marked "ours".

export const API_GROUP = 'leaderworkerset.x-k8s.io';
export const API_VERSION = 'v1';
export const API_GROUP_VERSION = `${API_GROUP}/${API_VERSION}`;
export const KIND = 'LeaderWorkerSet';
export const LIST_KIND = 'LeaderWorkerSetList';
export const PLURAL = 'leaderworkersets';
export const SINGULAR = 'leaderworkerset';
export const SHORT_NAME = 'lws';
export const CRD_NAME = `${PLURAL}.${API_GROUP}`;

const PREFIX = 'leaderworkerset.sigs.k8s.io/';

/**
 * Only this controller's labels or annotations of `all`: decisions read no other, and a user's own (copied from the
 * pod templates) may say what only those who read the cluster should know.
 */
export function controllerKeysOf(all: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(all ?? {}).filter(([key]) => key.startsWith(PREFIX)));
}

/** Label on every object and pod of an LWS: the LWS name. */
export const LABEL_NAME = `${PREFIX}name`;
/** Label: index of the group (replica) a pod or worker StatefulSet belongs to. */
export const LABEL_GROUP_INDEX = `${PREFIX}group-index`;
/** Label: index of a pod inside its group; 0 is the leader. */
export const LABEL_WORKER_INDEX = `${PREFIX}worker-index`;
/** Label: sha1 of `<namespace>/<leaderPodName>`, unique per group incarnation (see names.groupKeyInput). */
export const LABEL_GROUP_KEY = `${PREFIX}group-key`;
/** Label: hash of the templates a pod was built from (see revision.templateRevisionHash). */
export const LABEL_TEMPLATE_REVISION_HASH = `${PREFIX}template-revision-hash`;

/** Pod annotation: group size (leader included), as a decimal string. */
export const ANNOTATION_SIZE = `${PREFIX}size`;
/** Worker pod annotation: name of the group's leader pod. */
export const ANNOTATION_LEADER_NAME = `${PREFIX}leader-name`;
/** Leader pod annotation set when spec.networkConfig.subdomainPolicy is UniquePerReplica (as upstream does). */
export const ANNOTATION_SUBDOMAIN_POLICY = `${PREFIX}subdomainPolicy`;
/** Ours. Leader pod annotation: spec.podTerminationPolicy, still readable once the LWS is gone (deletion cascades). */
export const ANNOTATION_POD_TERMINATION_POLICY = `${PREFIX}pod-termination-policy`;

/** Label: index of a pod's subgroup inside its group (spec.leaderWorkerTemplate.subGroupPolicy). */
export const LABEL_SUBGROUP_INDEX = `${PREFIX}subgroup-index`;
/** Label: sha1 of `<leaderPodName>/<subgroupIndex>`, unique per subgroup incarnation. */
export const LABEL_SUBGROUP_KEY = `${PREFIX}subgroup-key`;
/** Pod annotation: subGroupPolicy.subGroupSize, as a decimal string. */
export const ANNOTATION_SUBGROUP_SIZE = `${PREFIX}subgroup-size`;
/** Pod annotation: subGroupPolicy.subGroupPolicyType (LeaderWorker or LeaderExcluded). */
export const ANNOTATION_SUBGROUP_POLICY_TYPE = `${PREFIX}subgroup-policy-type`;
/** LWS and pod annotation: a node label key; each group gets one topology domain of it to itself. */
export const ANNOTATION_EXCLUSIVE_TOPOLOGY = `${PREFIX}exclusive-topology`;
/** LWS and pod annotation: as exclusive-topology, per subgroup. */
export const ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY = `${PREFIX}subgroup-exclusive-topology`;
/** Leader StatefulSet annotation: spec.replicas of the LWS when the StatefulSet was last written. */
export const ANNOTATION_REPLICAS = `${PREFIX}replicas`;
/** Worker pod annotation "true" when the leader's containers request TPUs (the TPU env then counts the leader). */
export const ANNOTATION_LEADER_REQUESTS_TPUS = `${PREFIX}leader-requests-tpus`;

/** LWS annotation (upstream's, experimental): RecreateGroupOnPodRestart then skips a group with a pod Pending. */
export const ANNOTATION_RECREATE_GROUP_AFTER_START = `${PREFIX}experimental-recreate-group-after-start`;

/**
 * Ours. Leader pod annotation: why the API server refused the group's worker StatefulSet (model/refusals.ts), written
 * by its provisioning and read by the reconcile, which tells it on the status.
 */
export const ANNOTATION_WORKERS_REFUSED = `${PREFIX}workers-refused`;

/**
 * Upstream's (KEP-820). Leader StatefulSet annotation: JSON `{"<revision>/<group index>": n}`, how many times each group
 * was recreated after a pod of it failed (spec.leaderWorkerTemplate.maxGroupRestarts). Per template revision, as
 * upstream's PR #877 counts: a rolling update to a new template starts every group's count again.
 */
export const ANNOTATION_GROUP_RESTART_COUNT = `${PREFIX}group-restart-count`;

/**
 * Ours. Leader StatefulSet annotation: JSON `{"<revision>/<group index>": {"at": "<RFC 3339>", "streak": n}}`, when each
 * group was last recreated (or will be, once its backoff ends) and how many recreations in a row that was
 * (model/recreate-backoff.ts). Kept per revision, as the restart count.
 */
export const ANNOTATION_GROUP_RECREATIONS = `${PREFIX}group-recreations`;

/**
 * Ours. Leader pod annotation: why the restart policy recreates its group (and the backoff it waited), written just
 * before the leader is deleted, so that the teardown that follows tells it.
 */
export const ANNOTATION_RECREATE_REASON = `${PREFIX}recreate-reason`;

/** Ours. Leader pod annotation: why its group is no longer recreated (its restart budget is spent); read by the status. */
export const ANNOTATION_GROUP_FAILED = `${PREFIX}group-failed`;

/**
 * Upstream's proposal (PR #877). Leader pod annotation a user sets to `true` on a failed group's leader: the group is
 * rebuilt and its count starts again.
 */
export const ANNOTATION_RECOVER = `${PREFIX}recover`;

/**
 * Ours. Worker StatefulSet annotation: when the older incarnation's pods that held its pod names were seen gone.
 * Writing it makes the StatefulSet controller sync at once, not after the backoff it grew while the names were held.
 */
export const ANNOTATION_OLD_PODS_GONE = `${PREFIX}old-pods-gone-at`;

/**
 * Ours. LWS annotation `<own hash>:<key>`: the revision key another controller (upstream's) gave the templates this
 * spec has, kept instead of our own hash while the spec has that hash, so that a switch rolls no group.
 */
export const ANNOTATION_ADOPTED_REVISION = `${PREFIX}adopted-revision`;

/** Ours. Leader StatefulSet annotation: sha1 of the pod template and update strategy as last written. */
export const ANNOTATION_APPLIED_HASH = `${PREFIX}applied-template-hash`;

/** Env var: DNS name of the group's leader pod. */
export const ENV_LEADER_ADDRESS = 'LWS_LEADER_ADDRESS';
/** Env var: group size (leader included). */
export const ENV_GROUP_SIZE = 'LWS_GROUP_SIZE';
/** Env var: index of the pod inside its group; 0 is the leader. */
export const ENV_WORKER_INDEX = 'LWS_WORKER_INDEX';
/** Ours. Env var: index of the group; with no webhook, a leader reads it from the pod-index label (env.ts). */
export const ENV_GROUP_INDEX = 'LWS_GROUP_INDEX';

/** The extended resource whose request makes a container a TPU worker (upstream's TPU env applies to it). */
export const RESOURCE_TPU = 'google.com/tpu';
/** TPU env vars, as upstream and the TPU runtime name them. */
export const ENV_TPU_WORKER_HOSTNAMES = 'TPU_WORKER_HOSTNAMES';
export const ENV_TPU_PROCESS_ADDRESSES = 'TPU_PROCESS_ADDRESSES';
export const ENV_TPU_PROCESS_PORT = 'TPU_PROCESS_PORT';
export const ENV_TPU_WORKER_ID = 'TPU_WORKER_ID';
export const ENV_TPU_NAME = 'TPU_NAME';
/** TPU_PROCESS_PORT of the first TPU container when the user sets none; the next containers count up from it. */
export const DEFAULT_TPU_PROCESS_PORT = 8476;

/** Label the StatefulSet controller puts on each pod: its ordinal (Kubernetes >= 1.28, GA in 1.32). */
export const LABEL_STATEFULSET_POD_INDEX = 'apps.kubernetes.io/pod-index';

export const EVENT_REASONS = {
  /** A spec the API server's schema would refuse, written around it: nothing is applied. */
  invalidSpec: 'InvalidSpec',
  /** The API server refused the leader StatefulSet built from the templates (model/refusals.ts); also the condition's. */
  invalidLeaderTemplate: 'InvalidLeaderTemplate',
  /** The API server refused a group's worker StatefulSet built from the worker template; also the condition's. */
  invalidWorkerTemplate: 'InvalidWorkerTemplate',
  /** Another LWS's StatefulSet holds a name this one needs (model/name-conflicts.ts). */
  nameConflict: 'NameConflict',
  leaderStatefulSetCreated: 'LeaderStatefulSetCreated',
  leaderStatefulSetUpdated: 'LeaderStatefulSetUpdated',
  rollingUpdateStep: 'RollingUpdateStep',
  groupProvisioned: 'GroupProvisioned',
  groupRecreated: 'GroupRecreated',
  /** A group whose restart budget is spent is left as it is (Warning). */
  maxGroupRestartsExceeded: 'MaxGroupRestartsExceeded',
  /** A group failing again soon after its last recreation waits before it is recreated (Warning, as the kubelet's). */
  groupRecreateBackOff: 'GroupRecreateBackOff',
  /** A failed group rebuilt on the user's recover annotation. */
  groupRecovered: 'GroupRecovered',
  groupLeaderTerminating: 'GroupLeaderTerminating',
  groupWorkersTerminating: 'GroupWorkersTerminating',
  groupLeaderGone: 'GroupLeaderGone',
  groupWorkersGone: 'GroupWorkersGone',
  groupOldStatefulSetGone: 'GroupOldStatefulSetGone',
  /** A teardown force-deleted a pod stuck Terminating on a dead node (Warning; model/dead-node.ts). */
  podForceDeleted: 'PodForceDeleted',
  groupNewLeader: 'GroupNewLeader',
  groupNewGroupReady: 'GroupNewGroupReady',
  /** A ControllerRevision made for a new template, or one reused by a rollback (upstream's reason). */
  creatingRevision: 'CreatingRevision',
} as const;
