// What the trigger's informers keep of each pod and StatefulSet. client-node's informer caches every object it
// delivers; at 1,000 groups that is 4,000 full pods (spec, managedFields) the trigger never reads again. Trimming the
// delivered object in place trims the cache to what the facts (objects.ts) are built from.
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';

/** Metadata without managedFields: what ownership, labels, annotations and deletion are read from. */
function trimMetadata(o: { metadata?: { managedFields?: unknown } }): void {
  if (o.metadata) delete o.metadata.managedFields;
}

/** Keeps what podFacts reads: metadata, phase, conditions and restart counts. */
export function trimPod<P extends V1Pod>(pod: P): P {
  trimMetadata(pod);
  delete pod.spec;
  const s = pod.status;
  if (s) {
    const restarts = (xs?: { restartCount: number }[]) => xs?.map((x) => ({ restartCount: x.restartCount }));
    pod.status = {
      ...(s.phase !== undefined && { phase: s.phase }),
      ...(s.conditions && { conditions: s.conditions.map((c) => ({ type: c.type, status: c.status })) }),
      ...(s.containerStatuses && { containerStatuses: restarts(s.containerStatuses) as typeof s.containerStatuses }),
      ...(s.initContainerStatuses && {
        initContainerStatuses: restarts(s.initContainerStatuses) as typeof s.initContainerStatuses,
      }),
    };
  }
  return pod;
}

/** Keeps what statefulSetFacts reads: metadata, spec.replicas and the status. */
export function trimStatefulSet<S extends V1StatefulSet>(sts: S): S {
  trimMetadata(sts);
  if (sts.spec) sts.spec = { replicas: sts.spec.replicas } as typeof sts.spec;
  return sts;
}
