// Installs the LeaderWorkerSet ValidatingAdmissionPolicy and its binding (deploy/crd): create, or replace what is
// there. Idempotent, like installCrd, which calls it.
import { readFile } from 'node:fs/promises';
import * as k8s from '@kubernetes/client-node';

export const admissionPolicyPath = new URL('../../deploy/crd/leaderworkersets-admission-policy.yaml', import.meta.url);

function code(err: unknown): number | undefined {
  return err instanceof k8s.ApiException ? err.code : undefined;
}

async function createOrReplace<T extends { metadata?: k8s.V1ObjectMeta }>(
  body: T,
  create: (body: T) => Promise<T>,
  read: (name: string) => Promise<T>,
  replace: (name: string, body: T) => Promise<T>,
): Promise<void> {
  try {
    await create(body);
    return;
  } catch (err) {
    if (code(err) !== 409) throw err;
  }
  const name = body.metadata?.name ?? '';
  const live = await read(name);
  await replace(name, { ...body, metadata: { ...body.metadata, resourceVersion: live.metadata?.resourceVersion } });
}

export async function installAdmissionPolicy(kc: k8s.KubeConfig): Promise<void> {
  const api = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  const docs = k8s.loadAllYaml(await readFile(admissionPolicyPath, 'utf8')) as Array<{ kind?: string }>;
  for (const doc of docs) {
    if (doc.kind === 'ValidatingAdmissionPolicy') {
      await createOrReplace(
        doc as k8s.V1ValidatingAdmissionPolicy,
        (body) => api.createValidatingAdmissionPolicy({ body }),
        (name) => api.readValidatingAdmissionPolicy({ name }),
        (name, body) => api.replaceValidatingAdmissionPolicy({ name, body }),
      );
    } else if (doc.kind === 'ValidatingAdmissionPolicyBinding') {
      await createOrReplace(
        doc as k8s.V1ValidatingAdmissionPolicyBinding,
        (body) => api.createValidatingAdmissionPolicyBinding({ body }),
        (name) => api.readValidatingAdmissionPolicyBinding({ name }),
        (name, body) => api.replaceValidatingAdmissionPolicyBinding({ name, body }),
      );
    } else {
      throw new Error(`${admissionPolicyPath.pathname}: unexpected kind ${doc.kind}`);
    }
  }
}
