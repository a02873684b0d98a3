// The groups' restart counts (spec.leaderWorkerTemplate.maxGroupRestarts) and last recreations (groupRestartBackoff)
// on the leader StatefulSet: the one object of the LWS that outlives every group incarnation. Read with its
// resourceVersion and written only at that version, so two groups recreated at once never lose each other's record.
import { ANNOTATION_GROUP_RECREATIONS, ANNOTATION_GROUP_RESTART_COUNT, type ObjectKey } from '../model/index.js';
import type { KubeClients } from './clients.js';
import { apiExceptionCode, isHttpNotFound } from '../kube/api-errors.js';
import { classify } from './kube-errors.js';
import type { GroupRestarts } from './types.js';

/** Null when the leader StatefulSet is gone. */
export async function readGroupRestarts(c: KubeClients, leaderStatefulSet: ObjectKey): Promise<GroupRestarts | null> {
  try {
    const sts = await c.statefulSets.read(leaderStatefulSet);
    const counts = sts.metadata?.annotations?.[ANNOTATION_GROUP_RESTART_COUNT];
    const recreations = sts.metadata?.annotations?.[ANNOTATION_GROUP_RECREATIONS];
    return {
      ...(counts !== undefined && { counts }),
      ...(recreations !== undefined && { recreations }),
      resourceVersion: sts.metadata?.resourceVersion ?? '',
    };
  } catch (err) {
    if (isHttpNotFound(err)) return null;
    throw classify(err);
  }
}

/** `conflict`: the StatefulSet changed since it was read; read it again and decide again. */
export async function writeGroupRestarts(
  c: KubeClients,
  input: { leaderStatefulSet: ObjectKey; counts?: string; recreations?: string; resourceVersion: string },
): Promise<'written' | 'conflict' | 'gone'> {
  const annotations = {
    ...(input.counts !== undefined && { [ANNOTATION_GROUP_RESTART_COUNT]: input.counts }),
    ...(input.recreations !== undefined && { [ANNOTATION_GROUP_RECREATIONS]: input.recreations }),
  };
  try {
    await c.statefulSets.mergePatch(input.leaderStatefulSet, {
      metadata: { resourceVersion: input.resourceVersion, annotations },
    });
    return 'written';
  } catch (err) {
    const code = apiExceptionCode(err);
    if (code === 409) return 'conflict';
    if (code === 404) return 'gone';
    throw classify(err);
  }
}
