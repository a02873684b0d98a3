import * as k8s from '@kubernetes/client-node';
import { ConfigError } from './temporal.js';

/**
 * The name of the Kubernetes cluster a controller serves: in every workflow ID, the default task queue and the
 * LwsCluster search attribute, so that clusters can share one Temporal namespace. LWS_CLUSTER_NAME sets it; the default
 * is the uid of the cluster's `kube-system` namespace, which lives as long as the cluster and is the same for every
 * process that reads it.
 */
export const CLUSTER_NAME_VAR = 'LWS_CLUSTER_NAME';

/** Letters, digits, '-' and '_', as cloud providers name clusters; no '/' or '.' (workflow IDs, deployment names). */
const CLUSTER_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?$/;

export function checkClusterName(value: string, from = CLUSTER_NAME_VAR): string {
  if (!CLUSTER_NAME.test(value)) {
    throw new ConfigError(
      `${from}=${JSON.stringify(value)}: expected 1 to 63 letters, digits, '-' or '_', starting and ending with a letter or digit`,
    );
  }
  return value;
}

/** LWS_CLUSTER_NAME when set, else the uid of `kube-system` on the cluster of `kc`. */
export async function resolveClusterName(kc: k8s.KubeConfig, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const named = env[CLUSTER_NAME_VAR];
  if (named) return checkClusterName(named);
  try {
    const ns = await kc.makeApiClient(k8s.CoreV1Api).readNamespace({ name: 'kube-system' });
    return checkClusterName(ns.metadata?.uid ?? '', "the kube-system namespace's uid");
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(
      `cannot read the kube-system namespace for the cluster's name (${(err as Error).message}): set ${CLUSTER_NAME_VAR}, or grant get on namespaces/kube-system`,
      { cause: err },
    );
  }
}
