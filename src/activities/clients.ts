// The API clients every activity shares, made once per worker from one KubeConfig.
import * as k8s from '@kubernetes/client-node';

export interface KubeClients {
  kc: k8s.KubeConfig;
  core: k8s.CoreV1Api;
  apps: k8s.AppsV1Api;
  custom: k8s.CustomObjectsApi;
}

export function makeClients(kc: k8s.KubeConfig): KubeClients {
  return {
    kc,
    core: kc.makeApiClient(k8s.CoreV1Api),
    apps: kc.makeApiClient(k8s.AppsV1Api),
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
  };
}

/** Request options that send a body as a JSON merge patch (client-node 1.x otherwise picks JSON Patch). */
export const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

const APPS_STATEFULSETS = { group: 'apps', version: 'v1', plural: 'statefulsets' } as const;

/**
 * StatefulSets as plain JSON, through the generic object endpoints (`/apis/apps/v1/namespaces/<ns>/statefulsets`).
 * The typed AppsV1Api serializes through client-node's model, which silently drops every field it does not know: a
 * pod template field newer than the client would vanish from the user's template. These calls send the built
 * object byte for byte and hand back what the API server said, in JSON names (timestamps as strings).
 */
export function rawStatefulSets(c: KubeClients) {
  return {
    create: (namespace: string, body: k8s.V1StatefulSet): Promise<k8s.V1StatefulSet> =>
      c.custom.createNamespacedCustomObject({ ...APPS_STATEFULSETS, namespace, body }),
    read: (namespace: string, name: string): Promise<k8s.V1StatefulSet> =>
      c.custom.getNamespacedCustomObject({ ...APPS_STATEFULSETS, namespace, name }),
    replace: (namespace: string, name: string, body: k8s.V1StatefulSet): Promise<k8s.V1StatefulSet> =>
      c.custom.replaceNamespacedCustomObject({ ...APPS_STATEFULSETS, namespace, name, body }),
  };
}
