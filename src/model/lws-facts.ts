// What the workflows decide an LWS on (issue 28): who it is, its generation, the spec's numbers and policies with
// their defaults, the hash of its templates, whether the CRD's rules allow it, its status. Temporal records every
// activity result, and its histories are readable by people who may not read the cluster's Secrets: never a pod
// template (env values are inline there), a claim template, managedFields or an annotation the controller does not
// read. An activity that builds from the templates takes an LwsTarget and reads the LWS itself.
import { applyDefaults } from './defaults.js';
import { ANNOTATION_RECREATE_GROUP_AFTER_START } from './labels.js';
import { isoTime, type ObjectKey } from './objects.js';
import { revisionKey } from './revision.js';
import { exclusiveTopologyKey } from './templates.js';
import {
  POD_TERMINATION_POLICY_VALUES,
  type DefaultedLeaderWorkerSetSpec,
  type LeaderWorkerSet,
  type LeaderWorkerSetStatus,
  type PodTerminationPolicyValue,
} from './types.js';
import { validateLeaderWorkerSet } from './validate.js';

/** Shaped as the LWS itself, so that the rules which read an LWS's metadata, spec or status read these too. */
export interface LwsFacts {
  metadata: {
    namespace: string;
    name: string;
    uid: string;
    generation: number;
    /** RFC 3339. */
    creationTimestamp?: string;
    deletionTimestamp?: string;
  };
  /** The defaulted spec without what pods are made of. */
  spec: Pick<DefaultedLeaderWorkerSetSpec, 'replicas' | 'startupPolicy' | 'rolloutStrategy'> & {
    leaderWorkerTemplate: Pick<
      DefaultedLeaderWorkerSetSpec['leaderWorkerTemplate'],
      'size' | 'restartPolicy' | 'maxGroupRestarts' | 'groupRestartBackoff'
    >;
    /** As written, and only a known one: unset, the teardown names the default as its source (policy.ts). */
    podTerminationPolicy?: PodTerminationPolicyValue;
    /** Ours, as written when valid (no default: unset means never on NotReady alone, dead-node.ts). */
    forceDeleteOnNodeNotReadySeconds?: number;
  };
  status?: LeaderWorkerSetStatus;
  /** revisionKey of the LWS: the template-revision-hash of the groups built from its spec. */
  revision: string;
  /** Upstream's experimental annotation: RecreateGroupOnPodRestart then recreates only a group that has started. */
  recreateGroupAfterStart: boolean;
  /** Exclusive placement: the node label key each group gets a domain of to itself (the LWS annotation). */
  exclusiveTopologyKey?: string;
  /** What the CRD's rules refuse (validate.ts), as messages: the reconcile applies nothing of such a spec. */
  invalid?: string[];
}

export function lwsFacts(lws: LeaderWorkerSet): LwsFacts {
  const { metadata: m, spec } = applyDefaults(lws);
  const creationTimestamp = isoTime(m.creationTimestamp);
  const deletionTimestamp = isoTime(m.deletionTimestamp);
  const policy = lws.spec.podTerminationPolicy;
  const notReadySeconds = lws.spec.forceDeleteOnNodeNotReadySeconds;
  const topologyKey = exclusiveTopologyKey(lws);
  const errors = validateLeaderWorkerSet(lws);
  return {
    metadata: {
      namespace: m.namespace ?? '',
      name: m.name ?? '',
      uid: m.uid ?? '',
      generation: m.generation ?? 0,
      ...(creationTimestamp !== undefined && { creationTimestamp }),
      ...(deletionTimestamp !== undefined && { deletionTimestamp }),
    },
    spec: {
      replicas: spec.replicas,
      leaderWorkerTemplate: {
        size: spec.leaderWorkerTemplate.size,
        restartPolicy: spec.leaderWorkerTemplate.restartPolicy,
        ...(spec.leaderWorkerTemplate.maxGroupRestarts !== undefined && {
          maxGroupRestarts: spec.leaderWorkerTemplate.maxGroupRestarts,
        }),
        ...(spec.leaderWorkerTemplate.groupRestartBackoff !== undefined && {
          groupRestartBackoff: spec.leaderWorkerTemplate.groupRestartBackoff,
        }),
      },
      startupPolicy: spec.startupPolicy,
      rolloutStrategy: spec.rolloutStrategy,
      ...(policy !== undefined && POD_TERMINATION_POLICY_VALUES.includes(policy) && { podTerminationPolicy: policy }),
      ...(typeof notReadySeconds === 'number' &&
        notReadySeconds >= 0 && { forceDeleteOnNodeNotReadySeconds: notReadySeconds }),
    },
    ...(lws.status !== undefined && { status: lws.status }),
    revision: revisionKey(lws),
    recreateGroupAfterStart: Boolean(m.annotations?.[ANNOTATION_RECREATE_GROUP_AFTER_START]),
    ...(topologyKey !== undefined && { exclusiveTopologyKey: topologyKey }),
    ...(errors.length > 0 && { invalid: errors.map((e) => e.message) }),
  };
}

/** The workers wait for their leader: until it is Ready (LeaderReady), or scheduled (exclusive placement). */
export function workersWaitForLeader(lws: LwsFacts): boolean {
  return lws.spec.startupPolicy === 'LeaderReady' || lws.exclusiveTopologyKey !== undefined;
}

/**
 * The LWS a decision was made on, for an activity that builds from its templates: it reads the LWS again and acts
 * only on that one, at that generation. Any other (deleted, created again, changed since) is `stale`: the workflow
 * reads it again and decides again.
 */
export interface LwsTarget {
  ref: ObjectKey;
  uid: string;
  generation: number;
}

export function targetOf(facts: LwsFacts): LwsTarget {
  const { namespace, name, uid, generation } = facts.metadata;
  return { ref: { namespace, name }, uid, generation };
}

/** The LWS as read now is the one decided on. */
export function isTarget(lws: LeaderWorkerSet | null, target: LwsTarget): lws is LeaderWorkerSet {
  return (
    lws !== null &&
    (lws.metadata.uid ?? '') === target.uid &&
    (lws.metadata.generation ?? 0) === target.generation &&
    lws.metadata.namespace === target.ref.namespace &&
    lws.metadata.name === target.ref.name
  );
}
