import { existsSync } from 'node:fs';
import * as k8s from '@kubernetes/client-node';
import { ConfigError } from './temporal.js';

/**
 * The Kubernetes client configuration: KUBECONFIG (or ~/.kube/config) when present, else the in-cluster service
 * account. A missing configuration is an error that says how to get a cluster.
 */
export function loadKubeConfig(env: NodeJS.ProcessEnv = process.env): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  const inCluster =
    Boolean(env.KUBERNETES_SERVICE_HOST) && existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token');
  if (env.KUBECONFIG) {
    for (const path of env.KUBECONFIG.split(':').filter(Boolean)) {
      if (!existsSync(path)) {
        throw new ConfigError(
          `KUBECONFIG=${env.KUBECONFIG}: ${path} does not exist. Start a local cluster with \`npm run cluster:up\` and export the KUBECONFIG it prints.`,
        );
      }
    }
    kc.loadFromDefault();
  } else if (inCluster) {
    kc.loadFromCluster();
  } else {
    kc.loadFromDefault();
    if (!kc.getCurrentCluster()) {
      throw new ConfigError(
        'no Kubernetes cluster configured: set KUBECONFIG, run in a pod, or start a local cluster with `npm run cluster:up`.',
      );
    }
  }
  return kc;
}
