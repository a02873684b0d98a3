// spec.podTerminationPolicy. Sequential (or Default, upstream's name for it): the controller only observes; the garbage collector deletes the workers once
// the leader is gone (about 2 x grace period). Parallel: at the leader's deletionTimestamp the controller deletes the
// workers too, so both terminate together (about 1 x grace period). Either way new workers wait for the old names.
import { ANNOTATION_POD_TERMINATION_POLICY } from './labels.js';
import { DEFAULT_POD_TERMINATION_POLICY } from './defaults.js';
import { predatesLws } from './lifecycle.js';
import type { PodFacts } from './objects.js';
import { POD_TERMINATION_POLICY_VALUES, type PodTerminationPolicy, type PodTerminationPolicyValue } from './types.js';

export function isPodTerminationPolicyValue(value: unknown): value is PodTerminationPolicyValue {
  return typeof value === 'string' && (POD_TERMINATION_POLICY_VALUES as readonly string[]).includes(value);
}

/** The field as written, else its default (`Default`): the value the leader pods are annotated with. */
export function podTerminationPolicyOf(spec: {
  podTerminationPolicy?: PodTerminationPolicyValue;
}): PodTerminationPolicyValue {
  return spec.podTerminationPolicy ?? DEFAULT_POD_TERMINATION_POLICY;
}

/** What a teardown does for a value of the field: only Parallel deletes the workers with their leader. */
export function terminationOrderOf(value: PodTerminationPolicyValue): PodTerminationPolicy {
  return value === 'Parallel' ? 'Parallel' : 'Sequential';
}

export interface ResolvedPolicy {
  policy: PodTerminationPolicy;
  /** Where it came from, for logs: the LWS spec, the leader pod's annotation, or the default. */
  source: 'spec' | 'annotation' | 'default';
}

/**
 * Pass the LWS while it exists, even being deleted. Unknown values give Sequential, under which the controller deletes
 * nothing itself. A leader created before the LWS of its name is an older LWS's: the new one's spec is not its.
 */
export function resolvePodTerminationPolicy(sources: {
  lws?: { metadata?: { creationTimestamp?: string | Date }; spec?: { podTerminationPolicy?: unknown } } | null;
  leaderPod?: Pick<PodFacts, 'annotations' | 'createdAt'> | null;
}): ResolvedPolicy {
  const { lws, leaderPod } = sources;
  if (lws && !predatesLws(lws, leaderPod?.createdAt)) {
    const fromSpec = lws.spec?.podTerminationPolicy;
    return isPodTerminationPolicyValue(fromSpec)
      ? { policy: terminationOrderOf(fromSpec), source: 'spec' }
      : { policy: terminationOrderOf(DEFAULT_POD_TERMINATION_POLICY), source: 'default' };
  }
  const fromAnnotation = leaderPod?.annotations[ANNOTATION_POD_TERMINATION_POLICY];
  return isPodTerminationPolicyValue(fromAnnotation)
    ? { policy: terminationOrderOf(fromAnnotation), source: 'annotation' }
    : { policy: terminationOrderOf(DEFAULT_POD_TERMINATION_POLICY), source: 'default' };
}
