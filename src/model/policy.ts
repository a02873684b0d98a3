// spec.podTerminationPolicy: which policy applies to a terminating group.
//
// Sequential: the controller only observes. The leader terminates, and when it is gone from the API the garbage
// collector deletes the worker StatefulSet it owns (about 2 x grace period in all).
// Parallel: as soon as the leader has a deletionTimestamp, the controller foreground-deletes the worker StatefulSet,
// so leader and workers terminate together (about 1 x grace period).
// Both: a new group's worker StatefulSet is only created once the old one is gone, because the names collide.
import { ANNOTATION_POD_TERMINATION_POLICY } from './labels.js';
import { DEFAULT_POD_TERMINATION_POLICY } from './defaults.js';
import { predatesLws } from './lifecycle.js';
import type { PodFacts } from './objects.js';
import { POD_TERMINATION_POLICIES, type PodTerminationPolicy } from './types.js';

export function isPodTerminationPolicy(value: unknown): value is PodTerminationPolicy {
  return typeof value === 'string' && (POD_TERMINATION_POLICIES as readonly string[]).includes(value);
}

export interface ResolvedPolicy {
  policy: PodTerminationPolicy;
  /** Where it came from, for logs: the LWS spec, the leader pod's annotation, or the default. */
  source: 'spec' | 'annotation' | 'default';
}

/**
 * The termination policy of a group: the LWS spec's while the LWS exists (pass it, even when it is being deleted);
 * else the annotation recorded on the terminating leader pod; else Sequential. An unknown value also gives
 * Sequential, the policy under which the controller deletes nothing itself. A leader created before the LWS of its
 * name is an older LWS's, deleted and created again: the new one's spec is not its.
 */
export function resolvePodTerminationPolicy(sources: {
  lws?: { metadata?: { creationTimestamp?: string | Date }; spec?: { podTerminationPolicy?: unknown } } | null;
  leaderPod?: Pick<PodFacts, 'annotations' | 'createdAt'> | null;
}): ResolvedPolicy {
  const { lws, leaderPod } = sources;
  if (lws && !predatesLws(lws, leaderPod?.createdAt)) {
    const fromSpec = lws.spec?.podTerminationPolicy;
    return isPodTerminationPolicy(fromSpec)
      ? { policy: fromSpec, source: 'spec' }
      : { policy: DEFAULT_POD_TERMINATION_POLICY, source: 'default' };
  }
  const fromAnnotation = leaderPod?.annotations[ANNOTATION_POD_TERMINATION_POLICY];
  return isPodTerminationPolicy(fromAnnotation)
    ? { policy: fromAnnotation, source: 'annotation' }
    : { policy: DEFAULT_POD_TERMINATION_POLICY, source: 'default' };
}
