// The LWS status subresource. A JSON merge patch of just the fields given: a field the caller leaves out keeps its
// value, and writes go to /status, so they never race the user's spec edits.
import { API_GROUP, API_VERSION, PLURAL, type LeaderWorkerSetStatus, type LwsRef } from '../model/index.js';
import { mergePatch, type KubeClients } from './clients.js';
import { kube } from './kube-errors.js';

export async function updateLeaderWorkerSetStatus(
  c: KubeClients,
  input: { ref: LwsRef; status: LeaderWorkerSetStatus },
): Promise<void> {
  const { namespace, name } = input.ref;
  await kube(() =>
    c.custom.patchNamespacedCustomObjectStatus(
      { group: API_GROUP, version: API_VERSION, plural: PLURAL, namespace, name, body: { status: input.status } },
      mergePatch,
    ),
  );
}
