// Installs the LeaderWorkerSet admission policy and its binding (deploy/crd): create, or replace what is there.
// Idempotent, like installCrd, which calls it.
import { readFile } from 'node:fs/promises';
import * as k8s from '@kubernetes/client-node';

export const admissionPolicyPath = new URL('../../deploy/crd/leaderworkersets-admission-policy.yaml', import.meta.url);

function code(err: unknown): number | undefined {
  return err instanceof k8s.ApiException ? err.code : undefined;
}

export async function installAdmissionPolicy(kc: k8s.KubeConfig): Promise<void> {
  const api = k8s.KubernetesObjectApi.makeApiClient(kc);
  const docs = k8s.loadAllYaml(await readFile(admissionPolicyPath, 'utf8')) as k8s.KubernetesObject[];
  for (const doc of docs) {
    try {
      await api.create(doc);
      continue;
    } catch (err) {
      if (code(err) !== 409) throw err;
    }
    const live = await api.read({
      apiVersion: doc.apiVersion,
      kind: doc.kind,
      metadata: { name: doc.metadata?.name ?? '' },
    });
    await api.replace({ ...doc, metadata: { ...doc.metadata, resourceVersion: live.metadata?.resourceVersion } });
  }
}
