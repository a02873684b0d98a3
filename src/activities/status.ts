// The LWS status subresource. A JSON merge patch of just the fields given: a field the caller leaves out keeps its
// value, and writes go to /status, so they never race the user's spec edits.
import type { LeaderWorkerSetStatus, ObjectKey } from '../model/index.js';
import type { KubeClients } from './clients.js';
import { apiCall } from './kube-errors.js';

export async function updateLeaderWorkerSetStatus(
  c: KubeClients,
  input: { ref: ObjectKey; status: LeaderWorkerSetStatus },
): Promise<void> {
  await apiCall(() => c.leaderWorkerSets.mergePatch(input.ref, { status: input.status }, 'status'));
}
