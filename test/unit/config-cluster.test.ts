import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { describe, it } from 'mocha';
import { checkClusterName, resolveClusterName } from '../../src/config/cluster.js';
import { ConfigError } from '../../src/config/temporal.js';

/** A kubeconfig whose server refuses connections: nothing must be read from it when LWS_CLUSTER_NAME is set. */
function unreachable(): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

describe('config/cluster', () => {
  for (const name of ['prod-us-east-1', 'a', 'EKS_cluster-2', '0f1e2d3c-aaaa-bbbb-cccc-0123456789ab', 'x'.repeat(63)]) {
    it(`accepts the cluster name ${name.length > 40 ? `${name.slice(0, 10)}... (${name.length})` : name}`, () => {
      assert.equal(checkClusterName(name), name);
    });
  }

  for (const name of ['', 'a/b', 'prod.eu', '-a', 'a-', 'with space', 'x'.repeat(64)]) {
    it(`refuses the cluster name ${JSON.stringify(name.length > 40 ? `${name.slice(0, 10)}...` : name)}, naming the variable`, () => {
      assert.throws(
        () => checkClusterName(name),
        (err: unknown) =>
          err instanceof ConfigError &&
          /^LWS_CLUSTER_NAME=.*expected 1 to 63 letters, digits, '-' or '_'/.test(err.message),
      );
    });
  }

  it('takes LWS_CLUSTER_NAME without asking the API server', async () => {
    assert.equal(await resolveClusterName(unreachable(), { LWS_CLUSTER_NAME: 'prod-1' }), 'prod-1');
  });

  it('refuses a bad LWS_CLUSTER_NAME at start', async () => {
    await assert.rejects(resolveClusterName(unreachable(), { LWS_CLUSTER_NAME: 'a/b' }), ConfigError);
  });

  it('says what to set when kube-system cannot be read', async () => {
    await assert.rejects(resolveClusterName(unreachable(), {}), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /cannot read the kube-system namespace/);
      assert.match(err.message, /set LWS_CLUSTER_NAME, or grant get on namespaces\/kube-system/);
      return true;
    });
  });
});
