import { existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import * as https from 'node:https';
import * as tls from 'node:tls';
import * as k8s from '@kubernetes/client-node';
import { ConfigError } from './temporal.js';

/**
 * The Kubernetes client configuration: KUBECONFIG (or ~/.kube/config) when present, else the in-cluster service
 * account. A missing configuration is an error that says how to get a cluster.
 */
export function loadKubeConfig(env: NodeJS.ProcessEnv = process.env, component = 'cli'): k8s.KubeConfig {
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
  return identifyAs(reuseConnections(kc), userAgent(component));
}

/** Keep in step with package.json (test/unit/config-kubernetes.test.ts checks). */
export const VERSION = '0.1.0';

/** How this project's processes name themselves to the API server, as client-go's `<binary>/<version>` does. */
export function userAgent(component: string): string {
  return `lws-temporal/${VERSION} (${component})`;
}

/**
 * Sends `agent` as the User-Agent of every request made through `kc`: typed calls, watches and the JSON calls. The API
 * server's audit log then tells the worker's and the trigger's requests apart from each other and from other clients
 * (client-node's own is node-fetch's, and plain requests send none).
 */
export function identifyAs(kc: k8s.KubeConfig, agent: string): k8s.KubeConfig {
  const toHttps = kc.applyToHTTPSOptions.bind(kc);
  // Watches come through here too (applyToFetchOptions calls it).
  kc.applyToHTTPSOptions = async (opts) => {
    await toHttps(opts);
    opts.headers = { ...opts.headers, 'User-Agent': agent };
  };
  const toContext = kc.applySecurityAuthentication.bind(kc);
  kc.applySecurityAuthentication = async (context) => {
    await toContext(context);
    context.setHeaderParam('User-Agent', agent);
  };
  return kc;
}

/**
 * client-node 1.x builds a new HTTPS agent, and so a new TLS handshake, for every request. One keep-alive agent per
 * API server and client identity makes a call 4-5x cheaper (11 ms -> 2.5 ms here, more on a busy machine), which is
 * teardown time under Parallel. Tokens travel in headers, so calls share the agent; a client certificate is part of
 * the TLS connection, so a rotated one (from an exec plugin) gets an agent of its own.
 *
 * Each watch still needs a connection of its own, and Node builds a TLS context (parsing the CA bundle) for every
 * new connection unless it is handed one: the agent gets a single context, built once.
 */
export function reuseConnections(kc: k8s.KubeConfig): k8s.KubeConfig {
  const agents = new Map<string, https.Agent>();
  const target = kc as unknown as { createAgent(cluster: k8s.Cluster | null, options: https.AgentOptions): unknown };
  const original = target.createAgent.bind(kc);
  target.createAgent = (cluster, options) => {
    if (!cluster?.server.startsWith('https:') || cluster.proxyUrl) return original(cluster, options);
    const key = agentKey(cluster.server, options);
    let agent = agents.get(key);
    if (!agent) {
      const { ca, cert, key: privateKey, pfx, passphrase } = options;
      const secureContext = tls.createSecureContext({ ca, cert, key: privateKey, pfx, passphrase });
      agent = new https.Agent({ ...options, keepAlive: true, secureContext });
      agents.set(key, agent);
    }
    return agent;
  };
  return kc;
}

/** The server and what identifies the client and its trust on the TLS connection. */
export function agentKey(server: string, options: https.AgentOptions): string {
  const hash = createHash('sha256');
  for (const part of [options.ca, options.cert, options.key, options.pfx, options.passphrase]) {
    hash.update(part === undefined ? '-' : Buffer.isBuffer(part) ? part : JSON.stringify(part));
    hash.update('\0');
  }
  return `${server} ${options.rejectUnauthorized === false ? 'insecure' : 'verified'} ${hash.digest('hex')}`;
}
