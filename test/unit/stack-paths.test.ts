import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { basename } from 'node:path';
import { kubernetesRelease, localClusterPaths } from '../../tools/stack/paths.js';

describe('stack/paths: which Kubernetes release the local cluster runs', () => {
  const rows: Array<[string | undefined, 'newest' | 'floor']> = [
    [undefined, 'newest'],
    ['', 'newest'],
    ['newest', 'newest'],
    ['floor', 'floor'],
  ];
  for (const [value, expected] of rows) {
    it(`LWS_KUBERNETES=${value ?? '(unset)'} runs ${expected}`, () => {
      assert.equal(kubernetesRelease(value === undefined ? {} : { LWS_KUBERNETES: value }), expected);
    });
  }

  it('refuses another value, naming the variable and what is allowed', () => {
    assert.throws(() => kubernetesRelease({ LWS_KUBERNETES: '1.30' }), /LWS_KUBERNETES=1\.30 .*newest .*floor/);
  });
});

describe('stack/paths: which local cluster, by release and LWS_LOCAL_CLUSTER', () => {
  const rows: Array<[NodeJS.ProcessEnv, string]> = [
    [{}, 'cluster'],
    [{ LWS_KUBERNETES: 'floor' }, 'cluster-floor'],
    [{ LWS_LOCAL_CLUSTER: 'lane-2' }, 'cluster-lane-2'],
    [{ LWS_KUBERNETES: 'floor', LWS_LOCAL_CLUSTER: 'b' }, 'cluster-floor-b'],
    [{ LWS_LOCAL_CLUSTER: '' }, 'cluster'],
  ];
  for (const [env, folder] of rows) {
    it(`${JSON.stringify(env)}: ${folder}, with a kubeconfig of its own`, () => {
      const paths = localClusterPaths(env);
      assert.equal(basename(paths.clusterDir), folder);
      assert.equal(basename(paths.kubeconfigPath), folder.replace(/^cluster/, 'kubeconfig'));
    });
  }

  it('refuses a name that is no folder name, naming the variable and what is allowed', () => {
    for (const value of ['../x', 'Lane', '-a', 'a'.repeat(33)]) {
      assert.throws(
        () => localClusterPaths({ LWS_LOCAL_CLUSTER: value }),
        /LWS_LOCAL_CLUSTER=.* lowercase letters, digits and '-'/,
      );
    }
  });
});
