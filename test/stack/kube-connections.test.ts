import assert from 'node:assert/strict';
import type * as https from 'node:https';
import { rootCertificates } from 'node:tls';
import * as k8s from '@kubernetes/client-node';
import { reuseConnections } from '../../src/config/kubernetes.js';
import { podsJson } from '../../src/activities/kube-json.js';
import { kubeconfigPath } from '../../src/stack/paths.js';
import { ensureCluster } from '../fixtures/cluster.js';

/** The agent client-node would use for the next request of this KubeConfig. */
async function agentOf(kc: k8s.KubeConfig): Promise<https.Agent> {
  const options: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  return options.agent as https.Agent;
}

/** The local cluster's kubeconfig with the certificate authority replaced. */
function withCa(caPem: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const cluster = kc.getCurrentCluster()!;
  kc.clusters = kc.clusters.map((c) =>
    c.name === cluster.name ? { ...c, caData: Buffer.from(caPem).toString('base64'), caFile: undefined } : c,
  );
  return reuseConnections(kc);
}

describe('connections to the API server (reuseConnections)', function () {
  this.timeout(60_000);
  before(async function () {
    this.timeout(180_000);
    await ensureCluster();
  });

  it('calls share one keep-alive agent with one TLS context, and requests verify the cluster CA through it', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    reuseConnections(kc);
    const agent = await agentOf(kc);
    assert.equal(await agentOf(kc), agent, 'the same agent for the next call');
    const options = (agent as unknown as { options: https.AgentOptions }).options;
    assert.equal(options.keepAlive, true);
    assert.ok(options.secureContext, 'a TLS context built once, not per connection');
    const namespace = 'kube-system';
    const pods = await podsJson(kc).list({ namespace, labelSelector: 'no-such-label=1' });
    assert.deepEqual(pods.items, []);
  });

  it('another certificate authority gets its own agent, and the cluster is not trusted through it', async () => {
    const cluster = new k8s.KubeConfig();
    cluster.loadFromFile(kubeconfigPath);
    reuseConnections(cluster);
    const stranger = withCa(rootCertificates[0]!);
    assert.notEqual(await agentOf(stranger), await agentOf(cluster));
    await assert.rejects(
      podsJson(stranger).list({ namespace: 'kube-system', labelSelector: 'no-such-label=1' }),
      (err: { code?: string }) => /CERT|SIGNED|ISSUER/.test(String(err.code)),
    );
  });
});
