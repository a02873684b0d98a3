import { existsSync } from 'node:fs';
import * as https from 'node:https';
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
  return reuseConnections(kc);
}

/**
 * client-node 1.x builds a new HTTPS agent, and so a new TLS handshake, for every request. One keep-alive agent per
 * API server makes a call 4-5x cheaper (11 ms -> 2.5 ms here, more on a busy machine), which is teardown time under
 * Parallel. Authentication travels in headers, so sharing the agent between calls is safe.
 */
export function reuseConnections(kc: k8s.KubeConfig): k8s.KubeConfig {
  const agents = new Map<string, https.Agent>();
  const target = kc as unknown as { createAgent(cluster: k8s.Cluster | null, options: https.AgentOptions): unknown };
  const original = target.createAgent.bind(kc);
  target.createAgent = (cluster, options) => {
    if (!cluster?.server.startsWith('https:') || cluster.proxyUrl) return original(cluster, options);
    let agent = agents.get(cluster.server);
    if (!agent) {
      agent = new https.Agent({ ...options, keepAlive: true });
      agents.set(cluster.server, agent);
    }
    return agent;
  };
  return kc;
}
