// The worker-index label on worker pods. A StatefulSet's pod template is shared by all its pods, so the per-pod index
// (which upstream sets with a webhook) is patched on once the pods exist: the ordinal of `<lws>-<i>-<j>` is j.
import { controllerUid, LABEL_WORKER_INDEX, parsePodName, selectors, type ObjectIdentity } from '../model/index.js';
import type { KubeClients } from './clients.js';
import { classify, kube, statusCode } from './kube-errors.js';

export async function labelWorkerPods(
  c: KubeClients,
  input: { lwsName: string; statefulSet: ObjectIdentity },
): Promise<number> {
  const { namespace, uid, name } = input.statefulSet;
  // The group's pods only, not the whole LWS's (docs/profiling.md): the worker StatefulSet is named after its leader.
  const groupIndex = parsePodName(input.lwsName, name)?.groupIndex;
  const labelSelector =
    groupIndex === undefined ? selectors.ofLws(input.lwsName) : selectors.groupPods(input.lwsName, groupIndex);
  const pods = await kube(() => c.pods.list({ namespace, labelSelector }));
  let patched = 0;
  for (const pod of pods.items) {
    const m = pod.metadata;
    if (!m?.name || !m.uid || controllerUid(m) !== uid) continue;
    const index = parsePodName(input.lwsName, m.name)?.workerIndex;
    if (index === undefined || m.labels?.[LABEL_WORKER_INDEX] === String(index)) continue;
    try {
      // The uid in the body makes the API server refuse a newer pod of the same name (uid is immutable).
      await c.pods.mergePatch(
        { namespace, name: m.name },
        { metadata: { uid: m.uid, labels: { [LABEL_WORKER_INDEX]: String(index) } } },
      );
      patched++;
    } catch (err) {
      const code = statusCode(err);
      if (code === 404 || code === 422) continue; // gone or replaced meanwhile: its successor gets labelled next time
      throw classify(err);
    }
  }
  return patched;
}
