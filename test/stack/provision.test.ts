import assert from 'node:assert/strict';
import { silentLogger } from '../../src/log.js';
import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { binDir, cacheDir } from '../../tools/stack/paths.js';
import { allBinaries, overrideVariable, provision } from '../../tools/stack/provision.js';
import { StepError } from '../../tools/stack/run.js';
import { versions } from '../../tools/stack/versions.js';

describe('npm run provision (with the cache filled by the run before the tests)', function () {
  this.timeout(60_000);

  it('builds nothing a second time and links every binary from the cache', async () => {
    const started = Date.now();
    const result = await provision({ log: silentLogger });
    assert.deepEqual(result.built, []);
    assert.ok(Date.now() - started < 5000, `a cached provision took ${Date.now() - started} ms`);
    for (const binary of allBinaries) {
      assert.ok(readlinkSync(join(binDir, binary)).startsWith(cacheDir()), `${binary} links into the cache`);
    }
  });

  const versionChecks: [string, string[], string][] = [
    ['kube-apiserver', ['--version'], `Kubernetes v${versions.kubernetes}`],
    ['kube-controller-manager', ['--version'], `Kubernetes v${versions.kubernetes}`],
    ['kube-scheduler', ['--version'], `Kubernetes v${versions.kubernetes}`],
    ['kube-apiserver-floor', ['--version'], `Kubernetes v${versions.kubernetesFloor}`],
    ['kube-controller-manager-floor', ['--version'], `Kubernetes v${versions.kubernetesFloor}`],
    ['kube-scheduler-floor', ['--version'], `Kubernetes v${versions.kubernetesFloor}`],
    ['kubectl', ['version', '--client'], `Client Version: v${versions.kubernetes}`],
    ['etcd', ['--version'], `etcd Version: ${versions.etcd}`],
    ['kwok', ['--version'], `kwok version v${versions.kwok}`],
    ['temporal', ['--version'], `temporal version ${versions.temporalCli}`],
    ['temporal-server', ['--version'], `temporal version ${versions.temporalServer}`],
    ['temporal-sql-tool', ['--version'], `temporal-sql-tool version ${versions.temporalServer}`],
    ['temporal-ui-server', ['--version'], `Temporal UI version ${versions.temporalUi}`],
    ['lws-controller-manager', ['--version'], `Version: v${versions.lwsUpstream}`],
  ];
  for (const [binary, args, expected] of versionChecks) {
    it(`${binary} reports the pinned version`, () => {
      const out = execFileSync(join(binDir, binary), args, { encoding: 'utf8' });
      assert.ok(out.includes(expected), `${binary} ${args.join(' ')} printed: ${out}`);
    });
  }

  it('rejects an override that is not an executable, naming the variable', async () => {
    assert.equal(overrideVariable('kube-apiserver'), 'LWS_BIN_KUBE_APISERVER');
    await assert.rejects(
      provision({ env: { ...process.env, LWS_BIN_ETCD: '/nonexistent/etcd' } }),
      (err: unknown) => err instanceof StepError && err.message.includes('LWS_BIN_ETCD=/nonexistent/etcd'),
    );
  });
});
