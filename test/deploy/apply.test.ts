// deploy/ on the local API server: the objects `kubectl kustomize deploy` renders are all accepted by a server-side
// dry-run apply (nothing is changed), and the RBAC really gives each ServiceAccount what it needs and no more.
//
// Only the namespace lws-temporal-system and its ServiceAccounts are created for real, and only when absent (and
// then deleted again); the ClusterRoles and bindings are applied under test-only names and deleted. No controller
// runs against the cluster.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import yaml from 'js-yaml';
import { localKubeConfig } from '../../src/stack/cluster.js';
import { installCrd } from '../../src/stack/crd.js';
import { binPath, kubeconfigPath, repoRoot, stateDir } from '../../src/stack/paths.js';
import { waitFor } from '../../src/stack/processes.js';
import { ensureCluster } from '../fixtures/cluster.js';
import { parsePermissionKey, permissionKey } from './kube-calls.js';
import type { PolicyRule } from './manifests.js';

const run = promisify(execFile);
const NAMESPACE = 'lws-temporal-system';
const FIELD_MANAGER = 'lws-temporal-deploy-test';

interface Rendered {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

function kubectl(args: string[]) {
  return run(binPath('kubectl'), ['--kubeconfig', kubeconfigPath, ...args], { cwd: repoRoot, maxBuffer: 16 << 20 });
}

/** `kubectl auth can-i` as a ServiceAccount, cluster-wide. */
async function canI(serviceAccount: string, permission: string): Promise<boolean> {
  const { group, resource, verb } = parsePermissionKey(permission);
  const [plural = '', subresource] = resource.split('/');
  const args = ['auth', 'can-i', verb, group ? `${plural}.${group}` : plural, '--all-namespaces'];
  if (subresource) args.push(`--subresource=${subresource}`);
  args.push(`--as=system:serviceaccount:${NAMESPACE}:${serviceAccount}`);
  try {
    const { stdout } = await kubectl(args);
    return stdout.trim() === 'yes';
  } catch (err) {
    const out = (err as { stdout?: string }).stdout?.trim();
    if (out === 'no') return false;
    throw err;
  }
}

function expand(rules: PolicyRule[]): string[] {
  return rules.flatMap((r) =>
    (r.apiGroups ?? []).flatMap((group) =>
      (r.resources ?? []).flatMap((resource) => r.verbs.map((verb) => permissionKey({ group, resource, verb }))),
    ),
  );
}

/** What each ServiceAccount must not be able to do: neighbours of what it may. */
const DENIED: Record<string, string[]> = {
  'lws-temporal-worker': [
    'core/pods:create',
    'core/pods:update',
    'core/secrets:get',
    'core/secrets:list',
    'core/configmaps:get',
    'core/services:delete',
    'core/events:update',
    'apps/statefulsets:deletecollection',
    'apps/deployments:create',
    'leaderworkerset.x-k8s.io/leaderworkersets:update',
    'leaderworkerset.x-k8s.io/leaderworkersets:patch',
    'leaderworkerset.x-k8s.io/leaderworkersets:delete',
    'leaderworkerset.x-k8s.io/leaderworkersets/status:update',
  ],
  'lws-temporal-trigger': [
    'core/pods:get',
    'core/pods:delete',
    'core/pods:patch',
    'core/events:create',
    'core/secrets:list',
    'apps/statefulsets:create',
    'apps/statefulsets:delete',
    'leaderworkerset.x-k8s.io/leaderworkersets:get',
    'leaderworkerset.x-k8s.io/leaderworkersets/status:patch',
  ],
};

describe('deploy/ on the local API server', function () {
  this.timeout(120_000);
  let kc: k8s.KubeConfig;
  let objects: Rendered[];
  const workDir = join(stateDir, 'deploy-test', `apply-${process.pid}`);
  const renderedFile = join(workDir, 'rendered.yaml');
  const cleanup: (() => Promise<unknown>)[] = [];

  before(async function () {
    this.timeout(240_000);
    await ensureCluster();
    kc = localKubeConfig();
    // `kubectl auth can-i` maps a resource through discovery: without the CRD it answers no for every LWS permission
    // (on a fresh cluster, when no test before this one installed it).
    await installCrd(kc);
    await mkdir(workDir, { recursive: true });
    const { stdout } = await kubectl(['kustomize', 'deploy']);
    await writeFile(renderedFile, stdout);
    objects = yaml.loadAll(stdout).filter(Boolean) as Rendered[];
    // The namespace must exist for a dry-run of what goes into it: create it (as rendered) unless it exists.
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const namespace = objects.find((o) => o.kind === 'Namespace' && o.metadata.name === NAMESPACE);
    assert.ok(namespace, `deploy/ renders the Namespace ${NAMESPACE}`);
    // A namespace this test deleted a moment ago may still be terminating: wait until it is gone.
    const existing = await waitFor(
      `namespace ${NAMESPACE} to be usable`,
      async () => {
        const ns = await core.readNamespace({ name: NAMESPACE }).catch(() => null);
        return ns?.metadata?.deletionTimestamp ? undefined : ns;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    if (!existing) {
      await core.createNamespace({ body: namespace as k8s.V1Namespace });
      cleanup.push(() => core.deleteNamespace({ name: NAMESPACE }));
    }
  });

  after(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
    await rm(workDir, { recursive: true, force: true });
  });

  it('renders the CRD, the namespace, RBAC, the ConfigMap and both Deployments', () => {
    const kinds = objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
    assert.deepEqual(kinds, [
      'ClusterRole/lws-temporal-trigger',
      'ClusterRole/lws-temporal-worker',
      'ClusterRoleBinding/lws-temporal-trigger',
      'ClusterRoleBinding/lws-temporal-worker',
      'ConfigMap/lws-temporal-config',
      'CustomResourceDefinition/leaderworkersets.leaderworkerset.x-k8s.io',
      'Deployment/lws-temporal-trigger',
      'Deployment/lws-temporal-worker',
      'Namespace/lws-temporal-system',
      'ServiceAccount/lws-temporal-trigger',
      'ServiceAccount/lws-temporal-worker',
    ]);
    for (const o of objects) assert.equal(o.metadata.labels?.['app.kubernetes.io/part-of'], 'lws-temporal');
  });

  it('the API server accepts every object (server-side apply, dry run) without warnings', async () => {
    const { stdout, stderr } = await kubectl([
      'apply',
      '--server-side',
      '--dry-run=server',
      '--force-conflicts',
      `--field-manager=${FIELD_MANAGER}`,
      '-f',
      renderedFile,
    ]);
    for (const o of objects) {
      const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : '';
      const ref = `${o.kind.toLowerCase()}${group ? `.${group}` : ''}/${o.metadata.name}`;
      assert.ok(stdout.includes(`${ref} serverside-applied (server dry run)`), `${ref} not applied:\n${stdout}`);
    }
    // Pod Security admission (the namespace enforces "restricted") warns about a pod template it would refuse.
    assert.equal(stderr.trim(), '', 'warnings from the API server');
  });

  it('Pod Security admission is active here, so the absence of warnings above means something', async () => {
    const worker = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'lws-temporal-worker');
    const privileged = JSON.parse(JSON.stringify(worker)) as {
      spec: { template: { spec: { containers: { securityContext: Record<string, unknown> }[] } } };
    };
    const container = privileged.spec.template.spec.containers[0];
    assert.ok(container);
    container.securityContext = { privileged: true };
    const file = join(workDir, 'privileged.yaml');
    await writeFile(file, yaml.dump(privileged));
    const { stderr } = await kubectl(['apply', '--server-side', '--dry-run=server', '-f', file]);
    assert.match(stderr, /violate PodSecurity/);
  });

  describe('RBAC, applied for real under test-only names', () => {
    const suffix = `-test-${randomBytes(3).toString('hex')}`;
    const roles = new Map<string, string[]>();

    before(async () => {
      const core = kc.makeApiClient(k8s.CoreV1Api);
      const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
      for (const sa of objects.filter((o) => o.kind === 'ServiceAccount')) {
        const { name } = sa.metadata;
        const existing = await core.readNamespacedServiceAccount({ namespace: NAMESPACE, name }).catch(() => undefined);
        if (!existing) {
          await core.createNamespacedServiceAccount({ namespace: NAMESPACE, body: sa as k8s.V1ServiceAccount });
          cleanup.push(() => core.deleteNamespacedServiceAccount({ namespace: NAMESPACE, name }));
        }
      }
      for (const role of objects.filter((o) => o.kind === 'ClusterRole')) {
        const body = {
          ...(role as k8s.V1ClusterRole),
          metadata: { ...role.metadata, name: role.metadata.name + suffix },
        };
        await rbac.createClusterRole({ body });
        cleanup.push(() => rbac.deleteClusterRole({ name: body.metadata.name }));
      }
      for (const binding of objects.filter((o) => o.kind === 'ClusterRoleBinding') as (Rendered &
        k8s.V1ClusterRoleBinding)[]) {
        const body: k8s.V1ClusterRoleBinding = {
          ...binding,
          metadata: { ...binding.metadata, name: binding.metadata.name + suffix },
          roleRef: { ...binding.roleRef, name: binding.roleRef.name + suffix },
        };
        await rbac.createClusterRoleBinding({ body });
        cleanup.push(() => rbac.deleteClusterRoleBinding({ name: body.metadata?.name ?? '' }));
        const serviceAccount = binding.subjects?.[0]?.name ?? '';
        const role = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === binding.roleRef.name);
        roles.set(serviceAccount, expand((role as unknown as { rules: PolicyRule[] }).rules));
      }
      assert.deepEqual([...roles.keys()].sort(), ['lws-temporal-trigger', 'lws-temporal-worker']);
    });

    for (const serviceAccount of ['lws-temporal-worker', 'lws-temporal-trigger']) {
      it(`${serviceAccount} may do everything its ClusterRole lists, in every namespace`, async () => {
        const permissions = roles.get(serviceAccount) ?? [];
        assert.ok(permissions.length > 0);
        // The authorizer sees new bindings within moments.
        await waitFor(
          'the binding to take effect',
          async () => (await canI(serviceAccount, permissions[0] ?? '')) || undefined,
          {
            timeoutMs: 15_000,
            intervalMs: 250,
          },
        );
        const denied: string[] = [];
        for (const p of permissions) if (!(await canI(serviceAccount, p))) denied.push(p);
        assert.deepEqual(denied, [], `kubectl auth can-i says no for ${serviceAccount}`);
      });

      it(`${serviceAccount} may not do what its ClusterRole leaves out`, async () => {
        const allowed: string[] = [];
        for (const p of DENIED[serviceAccount] ?? []) if (await canI(serviceAccount, p)) allowed.push(p);
        assert.deepEqual(allowed, [], `kubectl auth can-i says yes for ${serviceAccount}`);
      });
    }
  });
});
