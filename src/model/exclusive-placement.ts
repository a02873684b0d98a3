// Exclusive placement as upstream's pod webhook writes it: the pods carrying one value of a key label share a single
// domain of a topology key, and no pod carrying another value of that label may enter it.
import type { V1PodAffinityTerm, V1PodSpec } from '@kubernetes/client-node';
import { cloneJson } from './json.js';

export interface ExclusivePlacement {
  /** The label that tells the sets apart: group-key or subgroup-key. */
  labelKey: string;
  /** This set's value of that label. */
  value: string;
  /** A node label key, e.g. cloud.google.com/gke-nodepool. */
  topologyKey: string;
}

/** Required pod affinity: this pod goes where the rest of its set is. */
export function exclusiveAffinityTerm(p: ExclusivePlacement): V1PodAffinityTerm {
  return {
    labelSelector: { matchExpressions: [{ key: p.labelKey, operator: 'In', values: [p.value] }] },
    topologyKey: p.topologyKey,
  };
}

/** Required pod anti-affinity: this pod stays out of any domain holding another set's pod. */
export function exclusiveAntiAffinityTerm(p: ExclusivePlacement): V1PodAffinityTerm {
  return {
    labelSelector: {
      matchExpressions: [
        { key: p.labelKey, operator: 'Exists' },
        { key: p.labelKey, operator: 'NotIn', values: [p.value] },
      ],
    },
    topologyKey: p.topologyKey,
  };
}

/** Upstream's test: both required lists already hold a term on this topology key, whatever its selector. */
export function exclusiveAffinityApplied(spec: V1PodSpec, topologyKey: string): boolean {
  const onKey = (terms: V1PodAffinityTerm[] | undefined) => (terms ?? []).some((t) => t.topologyKey === topologyKey);
  const affinity = spec.affinity;
  return (
    onKey(affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution) &&
    onKey(affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution)
  );
}

/** A copy of `spec` with both terms appended to the user's own, or an unchanged copy when they are applied already. */
export function withExclusiveAffinity(spec: V1PodSpec, p: ExclusivePlacement): V1PodSpec {
  const out = cloneJson(spec);
  if (exclusiveAffinityApplied(out, p.topologyKey)) return out;
  const affinity = (out.affinity ??= {});
  const podAffinity = (affinity.podAffinity ??= {});
  const podAntiAffinity = (affinity.podAntiAffinity ??= {});
  (podAffinity.requiredDuringSchedulingIgnoredDuringExecution ??= []).push(exclusiveAffinityTerm(p));
  (podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution ??= []).push(exclusiveAntiAffinityTerm(p));
  return out;
}
