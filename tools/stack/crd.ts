// Installs the LeaderWorkerSet CRD (deploy/crd) into a cluster: create, or replace what is there, then wait until
// the API server serves the resource; then its admission policy. Idempotent, so every suite that needs the CRD can call it.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import * as k8s from '@kubernetes/client-node';
import { API_GROUP, API_VERSION, KIND, PLURAL } from '../../src/model/index.js';
import { installAdmissionPolicy } from './admission-policy.js';
import { waitFor } from '../../src/dev-server/processes.js';

export const crdPath = new URL('../../deploy/crd/leaderworkersets.leaderworkerset.x-k8s.io.yaml', import.meta.url);

/**
 * The CRD as a typed client object: loadYaml maps JSON names to client-node's property names (x-kubernetes-int-or-string
 * is x_kubernetes_int_or_string there), which the typed API needs, or it silently drops those fields.
 */
async function loadCrd(): Promise<k8s.V1CustomResourceDefinition> {
  return k8s.loadYaml<k8s.V1CustomResourceDefinition>(await readFile(crdPath, 'utf8'));
}

/** Ours, on the installed CRD: the digest of the file it was installed from. */
const CRD_DIGEST_ANNOTATION = 'lws-temporal.dev/installed-from-digest';

function code(err: unknown): number | undefined {
  return err instanceof k8s.ApiException ? err.code : undefined;
}

/**
 * Creates `crd`, or replaces what is there under its name unless `current` says it is already this one; then waits
 * until it is Established. Another suite may be installing it at the same moment: a conflict means read again.
 */
export async function createOrReplaceCrd(
  ext: k8s.ApiextensionsV1Api,
  crd: k8s.V1CustomResourceDefinition,
  current: (live: k8s.V1CustomResourceDefinition) => boolean = () => false,
): Promise<void> {
  const name = crd.metadata!.name!;
  await waitFor(
    `CRD ${name} created or replaced`,
    async () => {
      try {
        await ext.createCustomResourceDefinition({ body: crd });
        return true;
      } catch (err) {
        if (code(err) !== 409) throw err;
      }
      const live = await ext.readCustomResourceDefinition({ name });
      if (current(live)) return true;
      const body = { ...crd, metadata: { ...crd.metadata, resourceVersion: live.metadata?.resourceVersion } };
      await ext.replaceCustomResourceDefinition({ name, body });
      return true;
    },
    { timeoutMs: 30_000 },
  );
  await waitFor(
    `CRD ${name} Established`,
    async () => {
      const live = await ext.readCustomResourceDefinition({ name });
      return live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
    },
    { timeoutMs: 30_000 },
  );
}

export async function installCrd(kc: k8s.KubeConfig): Promise<void> {
  const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const crd = await loadCrd();
  // What was installed, by content: a replace with nothing new would still make the API server swap the resource's
  // handler, and requests in that moment fail with 503 ("Resource kind ... not found").
  const digest = createHash('sha256')
    .update(await readFile(crdPath))
    .digest('hex')
    .slice(0, 16);
  crd.metadata = { ...crd.metadata, annotations: { ...crd.metadata?.annotations, [CRD_DIGEST_ANNOTATION]: digest } };
  await createOrReplaceCrd(ext, crd, (live) => live.metadata?.annotations?.[CRD_DIGEST_ANNOTATION] === digest);
  // Established can come a moment before the resource is served, and a list before a create: a dry-run create (which
  // stores nothing) is the real proof. Until then the API server answers 503.
  const probe = {
    apiVersion: `${API_GROUP}/${API_VERSION}`,
    kind: KIND,
    metadata: { name: 'crd-served-probe' },
    spec: { leaderWorkerTemplate: { workerTemplate: { spec: { containers: [{ name: 'probe', image: 'probe' }] } } } },
  };
  await waitFor(
    `${PLURAL}.${API_GROUP} served`,
    async () => {
      try {
        await custom.createNamespacedCustomObject({
          group: API_GROUP,
          version: API_VERSION,
          plural: PLURAL,
          namespace: 'default',
          body: probe,
          dryRun: 'All',
        });
        return true;
      } catch (err) {
        if (code(err) === 503 || code(err) === 404) return undefined;
        throw err;
      }
    },
    { timeoutMs: 30_000 },
  );
  await installAdmissionPolicy(kc);
}
