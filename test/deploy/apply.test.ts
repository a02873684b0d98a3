// deploy/ on the local API server: the objects `kubectl kustomize deploy` renders are all accepted by a server-side
// dry-run apply (nothing is changed), and the RBAC really gives each ServiceAccount what it needs and no more.
//
// Only the namespace lws-temporal-system and its ServiceAccounts are created for real, and only when absent (and
// then deleted again); the roles and bindings are applied under test-only names and deleted. No controller
// runs against the cluster.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import yaml from 'js-yaml';
import { localKubeConfig } from '../../tools/stack/cluster.js';
import { installCrd } from '../../tools/stack/crd.js';
import { binPath, kubeconfigPath, repoRoot, stateDir } from '../../tools/stack/paths.js';
import { waitFor } from '../../src/dev-server/processes.js';
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

/** A permission to ask about: cluster-wide unless in a namespace, on every object unless on one by name. */
interface Check {
  permission: string;
  namespace?: string;
  name?: string;
}

const describeCheck = (c: Check) =>
  `${c.permission}${c.name ? ` on ${c.name}` : ''}${c.namespace ? ` in ${c.namespace}` : ''}`;

/** `kubectl auth can-i` as a ServiceAccount. */
async function canI(serviceAccount: string, check: Check | string): Promise<boolean> {
  const { permission, namespace, name } = typeof check === 'string' ? ({ permission: check } as Check) : check;
  const { group, resource, verb } = parsePermissionKey(permission);
  const [plural = '', subresource] = resource.split('/');
  const target = `${group ? `${plural}.${group}` : plural}${name ? `/${name}` : ''}`;
  const args = ['auth', 'can-i', verb, target, ...(namespace ? ['-n', namespace] : ['--all-namespaces'])];
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

/** The checks a role's rules allow: in the namespace of a Role, on the objects its resourceNames list. */
function expand(rules: PolicyRule[], namespace?: string): Check[] {
  return rules.flatMap((r) =>
    (r.apiGroups ?? []).flatMap((group) =>
      (r.resources ?? []).flatMap((resource) =>
        r.verbs.flatMap((verb) =>
          (r.resourceNames ?? [undefined]).map((name) => ({
            permission: permissionKey({ group, resource, verb }),
            namespace,
            name,
          })),
        ),
      ),
    ),
  );
}

/** What each ServiceAccount must not be able to do: neighbours of what it may. */
const DENIED: Record<string, (string | Check)[]> = {
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
    'leaderworkerset.x-k8s.io/leaderworkersets:delete',
    'leaderworkerset.x-k8s.io/leaderworkersets/status:update',
    // Only kube-system, for the cluster's name.
    { permission: 'core/namespaces:get', name: 'default' },
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
    { permission: 'core/namespaces:get', name: 'default' },
  ],
  'lws-temporal-admission': [
    { permission: 'core/secrets:get', namespace: NAMESPACE, name: 'another-secret' },
    { permission: 'core/secrets:update', namespace: NAMESPACE, name: 'another-secret' },
    { permission: 'core/secrets:delete', namespace: NAMESPACE, name: 'lws-temporal-admission-certs' },
    { permission: 'core/secrets:list', namespace: NAMESPACE },
    { permission: 'core/secrets:watch', namespace: NAMESPACE },
    { permission: 'core/secrets:create', namespace: 'default' },
    { permission: 'core/secrets:get', namespace: 'default', name: 'lws-temporal-admission-certs' },
    { permission: 'admissionregistration.k8s.io/mutatingwebhookconfigurations:patch', name: 'another-webhook' },
    { permission: 'admissionregistration.k8s.io/mutatingwebhookconfigurations:update', name: 'lws-temporal-pods' },
    { permission: 'admissionregistration.k8s.io/mutatingwebhookconfigurations:delete', name: 'lws-temporal-pods' },
    'admissionregistration.k8s.io/mutatingwebhookconfigurations:list',
    'admissionregistration.k8s.io/mutatingwebhookconfigurations:create',
    { permission: 'admissionregistration.k8s.io/validatingwebhookconfigurations:patch', name: 'lws-temporal-pods' },
    'core/pods:get',
    'core/configmaps:get',
  ],
};

describe('deploy/ on the local API server', function () {
  this.timeout(120_000);
  let kc: k8s.KubeConfig;
  let objects: Rendered[];
  const workDir = join(stateDir, 'deploy-test', `apply-${process.pid}`);
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

  it('renders the CRD, the namespace, RBAC, the ConfigMap, the Deployments and the admission webhook', () => {
    const kinds = objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
    assert.deepEqual(kinds, [
      'ClusterRole/lws-temporal-admission',
      'ClusterRole/lws-temporal-trigger',
      'ClusterRole/lws-temporal-worker',
      'ClusterRoleBinding/lws-temporal-admission',
      'ClusterRoleBinding/lws-temporal-trigger',
      'ClusterRoleBinding/lws-temporal-worker',
      'ConfigMap/lws-temporal-config',
      'CustomResourceDefinition/leaderworkersets.leaderworkerset.x-k8s.io',
      'Deployment/lws-temporal-admission',
      'Deployment/lws-temporal-trigger',
      'Deployment/lws-temporal-worker',
      'MutatingWebhookConfiguration/lws-temporal-pods',
      'Namespace/lws-temporal-system',
      'PodDisruptionBudget/lws-temporal-admission',
      'PodDisruptionBudget/lws-temporal-trigger',
      'PodDisruptionBudget/lws-temporal-worker',
      'Role/lws-temporal-admission',
      'RoleBinding/lws-temporal-admission',
      'Service/lws-temporal-admission',
      'ServiceAccount/lws-temporal-admission',
      'ServiceAccount/lws-temporal-trigger',
      'ServiceAccount/lws-temporal-worker',
      'ValidatingAdmissionPolicy/leaderworkersets.leaderworkerset.x-k8s.io',
      'ValidatingAdmissionPolicyBinding/leaderworkersets.leaderworkerset.x-k8s.io',
    ]);
    for (const o of objects) assert.equal(o.metadata.labels?.['app.kubernetes.io/part-of'], 'lws-temporal');
  });

  it("a user's server-side apply of deploy/crd over the stack's install meets no field manager's conflict", async () => {
    // The stack installs as `lws-temporal`, the field manager of every write this project makes (not `node-fetch`).
    const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
    const crd = await ext.readCustomResourceDefinition({ name: 'leaderworkersets.leaderworkerset.x-k8s.io' });
    const policies = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
    const policy = await policies.readValidatingAdmissionPolicy({ name: 'leaderworkersets.leaderworkerset.x-k8s.io' });
    for (const object of [crd, policy]) {
      // The API server manages the CRD's status under its own name (its binary's).
      const managers = object.metadata?.managedFields?.map((f) => f.manager) ?? [];
      assert.ok(managers.includes('lws-temporal'), `managers: ${managers.join(', ')}`);
      assert.ok(!managers.includes('node-fetch'), `managers: ${managers.join(', ')}`);
    }
    const { stdout } = await kubectl(['apply', '--server-side', '--dry-run=server', '-k', 'deploy/crd']);
    assert.match(stdout, /customresourcedefinition.* serverside-applied/);
    assert.match(stdout, /validatingadmissionpolicy.* serverside-applied/);
  });

  it('the API server accepts every object (server-side apply, dry run) without warnings', async () => {
    // The local stack has a configuration of this name of its own, calling its webhook by URL: applied over it, the
    // Service would sit beside the URL (another manager's field), which the API server refuses. So it goes under a
    // test-only name.
    const applied = objects.map((o) =>
      o.kind === 'MutatingWebhookConfiguration'
        ? { ...o, metadata: { ...o.metadata, name: `${o.metadata.name}-test` } }
        : o,
    );
    const appliedFile = join(workDir, 'applied.yaml');
    await writeFile(appliedFile, applied.map((o) => yaml.dump(o)).join('---\n'));
    const { stdout, stderr } = await kubectl([
      'apply',
      '--server-side',
      '--dry-run=server',
      '--force-conflicts',
      `--field-manager=${FIELD_MANAGER}`,
      '-f',
      appliedFile,
    ]);
    for (const o of applied) {
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
    const roles = new Map<string, Check[]>();

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
      for (const role of objects.filter((o) => o.kind === 'Role')) {
        const body = { ...(role as k8s.V1Role), metadata: { ...role.metadata, name: role.metadata.name + suffix } };
        await rbac.createNamespacedRole({ namespace: NAMESPACE, body });
        cleanup.push(() => rbac.deleteNamespacedRole({ namespace: NAMESPACE, name: body.metadata.name }));
      }
      for (const binding of objects.filter(
        (o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding',
      ) as (Rendered & k8s.V1ClusterRoleBinding)[]) {
        const body: k8s.V1ClusterRoleBinding = {
          ...binding,
          metadata: { ...binding.metadata, name: binding.metadata.name + suffix },
          roleRef: { ...binding.roleRef, name: binding.roleRef.name + suffix },
        };
        const name = body.metadata?.name ?? '';
        if (binding.kind === 'RoleBinding') {
          await rbac.createNamespacedRoleBinding({ namespace: NAMESPACE, body });
          cleanup.push(() => rbac.deleteNamespacedRoleBinding({ namespace: NAMESPACE, name }));
        } else {
          await rbac.createClusterRoleBinding({ body });
          cleanup.push(() => rbac.deleteClusterRoleBinding({ name }));
        }
        const serviceAccount = binding.subjects?.[0]?.name ?? '';
        const role = objects.find((o) => o.kind === binding.roleRef.kind && o.metadata.name === binding.roleRef.name);
        const rules = (role as unknown as { rules: PolicyRule[] }).rules;
        roles.set(serviceAccount, [...(roles.get(serviceAccount) ?? []), ...expand(rules, role?.metadata.namespace)]);
      }
      assert.deepEqual([...roles.keys()].sort(), [
        'lws-temporal-admission',
        'lws-temporal-trigger',
        'lws-temporal-worker',
      ]);
    });

    for (const serviceAccount of ['lws-temporal-worker', 'lws-temporal-trigger', 'lws-temporal-admission']) {
      it(`${serviceAccount} may do everything its roles list, where they list it`, async () => {
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
        for (const p of permissions) if (!(await canI(serviceAccount, p))) denied.push(describeCheck(p));
        assert.deepEqual(denied, [], `kubectl auth can-i says no for ${serviceAccount}`);
      });

      it(`${serviceAccount} may not do what its roles leave out`, async () => {
        const allowed: string[] = [];
        for (const p of DENIED[serviceAccount] ?? []) {
          if (await canI(serviceAccount, p)) allowed.push(typeof p === 'string' ? p : describeCheck(p));
        }
        assert.deepEqual(allowed, [], `kubectl auth can-i says yes for ${serviceAccount}`);
      });
    }
  });
});
