// The ClusterRoles of deploy/ grant exactly what the code asks the API server for: every verb a call needs, nothing
// else. The needs are derived from the source (kube-calls.ts): each client-node call of the worker (src/worker and
// src/activities, with what they import), of the trigger (src/trigger, likewise) and of the admission webhook
// (src/admission) maps to (group, resource, verb) through the tables there. A call no table knows fails here, so a
// new call forces an RBAC decision.
import assert from 'node:assert/strict';
import {
  API_GROUP,
  buildGroupService,
  buildControllerRevision,
  buildHeadlessService,
  buildLeaderStatefulSet,
  buildWorkerStatefulSet,
  KIND,
  leaderPodName,
  PLURAL,
  type LeaderWorkerSet,
} from '../../src/model/index.js';
import {
  deriveCalls,
  deriveProcessCalls,
  describeSites,
  fixtureFiles,
  parsePermissionKey,
  permissionKey,
  PROCESSES,
  type ProcessCalls,
  type ProcessName,
  type Site,
} from './kube-calls.js';
import { deployObjects, findObject, podSpec, type Manifest, type PolicyRule } from './manifests.js';

const NAMESPACE = 'lws-temporal-system';
const processes = Object.keys(PROCESSES) as ProcessName[];

/**
 * The objects a process reads and writes by name, so that its rules name them (resourceNames): `group/resource` ->
 * the name, and the variable of its Deployment that gives the process the same name.
 */
const NAMED_OBJECTS: Partial<Record<ProcessName, Record<string, { name: string; env: string }>>> = {
  admission: {
    'core/secrets': { name: 'lws-temporal-admission-certs', env: 'ADMISSION_CERT_SECRET' },
    // The certificate Secret's owner.
    'core/services': { name: 'lws-temporal-admission', env: 'ADMISSION_SERVICE' },
    'admissionregistration.k8s.io/mutatingwebhookconfigurations': {
      name: 'lws-temporal-pods',
      env: 'ADMISSION_WEBHOOK_CONFIGURATION',
    },
  },
};

/** Objects every process reads by a name the code fixes: `group/resource` -> the name. */
const FIXED_NAMES: Record<string, string> = {
  // config/cluster.ts: kube-system's uid is the cluster's default name.
  'core/namespaces': 'kube-system',
};

/** The ClusterRole and (for a process with namespaced objects of its own) the Role of a process. */
function rolesOf(objects: Manifest[], name: ProcessName): Manifest[] {
  const roles = objects.filter(
    (o) => (o.kind === 'ClusterRole' || o.kind === 'Role') && o.metadata.name === `lws-temporal-${name}`,
  );
  assert.ok(roles.length > 0, `no role lws-temporal-${name}`);
  return roles;
}

/** `group/resource:verb` of every rule, expanded. */
function granted(role: Manifest): string[] {
  const rules = (role as unknown as { rules: PolicyRule[] }).rules;
  return rules.flatMap((rule) =>
    (rule.apiGroups ?? []).flatMap((group) =>
      (rule.resources ?? []).flatMap((resource) => rule.verbs.map((verb) => permissionKey({ group, resource, verb }))),
    ),
  );
}

/** Owner kinds the controller's objects can point at -> their resource. */
const OWNER_RESOURCES: Record<string, { group: string; resource: string }> = {
  [KIND]: { group: API_GROUP, resource: PLURAL },
  Pod: { group: '', resource: 'pods' },
};

/** The objects the worker creates, as the model builds them (UniquePerReplica, so the group Service exists too). */
function builtObjects(): {
  group: string;
  resource: string;
  ownerReferences: { kind: string; blockOwnerDeletion?: boolean }[];
}[] {
  const lws: LeaderWorkerSet = {
    apiVersion: `${API_GROUP}/v1`,
    kind: KIND,
    metadata: { name: 'rbac', namespace: 'default', uid: 'lws-uid' },
    spec: {
      replicas: 1,
      networkConfig: { subdomainPolicy: 'UniquePerReplica' },
      leaderWorkerTemplate: {
        size: 2,
        workerTemplate: { spec: { containers: [{ name: 'main', image: 'example' }] } },
      },
    },
  };
  const leaderPod = { name: leaderPodName('rbac', 0), uid: 'leader-uid' };
  const objects = [
    { group: 'apps', resource: 'statefulsets', obj: buildLeaderStatefulSet(lws) },
    {
      group: 'apps',
      resource: 'statefulsets',
      obj: buildWorkerStatefulSet(lws, { groupIndex: 0, leaderPod, groupKey: 'k' }),
    },
    {
      group: '',
      resource: 'services',
      obj: buildHeadlessService({ ...lws, spec: { ...lws.spec, networkConfig: {} } }),
    },
    { group: 'apps', resource: 'controllerrevisions', obj: buildControllerRevision(lws, 1) },
    { group: '', resource: 'services', obj: buildGroupService(lws, 0, leaderPod) },
  ];
  return objects.map(({ group, resource, obj }) => {
    assert.ok(obj, `the model built no ${resource} for the sample LeaderWorkerSet`);
    return { group, resource, ownerReferences: obj.metadata?.ownerReferences ?? [] };
  });
}

/**
 * Admission needs on top of the calls: with the OwnerReferencesPermissionEnforcement plugin (OpenShift, hardened
 * clusters), creating an object whose owner reference sets blockOwnerDeletion needs `update` on the owner's
 * `finalizers` subresource.
 */
function ownerFinalizerNeeds(calls: ProcessCalls): Map<string, Site[]> {
  const needs = new Map<string, Site[]>();
  for (const built of builtObjects()) {
    const creates = calls.permissions.get(
      permissionKey({ group: built.group, resource: built.resource, verb: 'create' }),
    );
    if (!creates) continue;
    for (const ref of built.ownerReferences.filter((r) => r.blockOwnerDeletion)) {
      const owner = OWNER_RESOURCES[ref.kind];
      assert.ok(owner, `owner kind ${ref.kind} has no entry in OWNER_RESOURCES`);
      const key = permissionKey({ ...owner, resource: `${owner.resource}/finalizers`, verb: 'update' });
      const site: Site = { file: 'src/model/templates.ts', line: 0, api: `blockOwnerDeletion on ${built.resource}` };
      needs.set(key, [...(needs.get(key) ?? []), ...creates.map((c) => ({ ...c, api: `${c.api} + ${site.api}` }))]);
    }
  }
  return needs;
}

describe('RBAC in deploy/ matches the Kubernetes calls in src/', function () {
  // Building the TypeScript program with client-node's declarations takes a while.
  this.timeout(180_000);
  const calls = {} as Record<ProcessName, ProcessCalls>;
  let objects: Manifest[];

  before(function () {
    objects = deployObjects();
    for (const name of processes) calls[name] = deriveProcessCalls(name);
  });

  it('the scanner knows every client-node call of each process', () => {
    for (const name of processes) {
      const { unmapped, unresolved } = calls[name];
      assert.deepEqual(
        unmapped.map((s) => describeSites([s])),
        [],
        `${name}: client-node functions missing from the tables in test/deploy/kube-calls.ts; add each with the ` +
          'request it makes, then grant it in deploy/controller/rbac.yaml',
      );
      assert.deepEqual(
        unresolved.map((s) => `${describeSites([s])}: ${s.reason}`),
        [],
        `${name}: calls whose resource cannot be told from the source`,
      );
    }
  });

  it('the scanner covers each process with its entry point and directories', () => {
    for (const name of processes) {
      const files = calls[name].files;
      assert.ok(files.includes(PROCESSES[name].entry), `${name}: ${PROCESSES[name].entry} not scanned`);
      for (const dir of PROCESSES[name].dirs) {
        assert.ok(
          files.some((f) => f.startsWith(`${dir}/`)),
          `${name}: nothing under ${dir} scanned`,
        );
      }
    }
    // The trigger writes nothing: it must not pull in the activities.
    assert.ok(!calls.trigger.files.some((f) => f.startsWith('src/activities/')), 'the trigger imports src/activities');
  });

  for (const name of processes) {
    it(`the roles lws-temporal-${name} grant exactly what the ${name} needs`, () => {
      const needs = new Map(calls[name].permissions);
      if (name === 'worker') for (const [key, sites] of ownerFinalizerNeeds(calls[name])) needs.set(key, sites);
      const grants = rolesOf(objects, name).flatMap(granted);
      const duplicates = grants.filter((g, i) => grants.indexOf(g) !== i);
      assert.deepEqual(duplicates, [], `lws-temporal-${name} grants these more than once`);
      const missing = [...needs.keys()].filter((k) => !grants.includes(k)).sort();
      const extra = grants.filter((k) => !needs.has(k)).sort();
      assert.deepEqual(
        missing.map((k) => `${k} <- ${describeSites(needs.get(k) ?? [])}`),
        [],
        `lws-temporal-${name} lacks permissions the code needs`,
      );
      assert.deepEqual(extra, [], `lws-temporal-${name} grants permissions no call needs`);
    });
  }

  it('the worker needs the calls the install guide describes (a sanity check of the scanner)', () => {
    const worker = [...calls.worker.permissions.keys()];
    for (const key of [
      'core/pods:delete',
      'core/pods:watch',
      'apps/statefulsets:create',
      'apps/statefulsets:delete',
      `${API_GROUP}/${PLURAL}/status:patch`,
      'core/events:create',
    ]) {
      assert.ok(worker.includes(key), `worker: ${key} not derived`);
    }
    const admission = [...calls.admission.permissions.keys()].sort();
    assert.deepEqual(admission, [
      'admissionregistration.k8s.io/mutatingwebhookconfigurations:get',
      'admissionregistration.k8s.io/mutatingwebhookconfigurations:patch',
      'apps/statefulsets:get',
      'core/secrets:create',
      'core/secrets:get',
      'core/secrets:update',
      'core/services:get',
    ]);
    // Besides kube-system, read once for the cluster's name.
    const trigger = [...calls.trigger.permissions.keys()].filter((k) => k !== 'core/namespaces:get').sort();
    assert.deepEqual(
      trigger.map((k) => parsePermissionKey(k).verb).filter((v) => v !== 'list' && v !== 'watch'),
      [],
      'the trigger only lists and watches',
    );
  });

  it('roles name their resources and verbs: no wildcards or nonResourceURLs; resourceNames only for named objects', () => {
    for (const role of objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role')) {
      const process = role.metadata.name.replace(/^lws-temporal-/, '') as ProcessName;
      for (const rule of (role as unknown as { rules: PolicyRule[] }).rules) {
        const all = [...(rule.apiGroups ?? []), ...(rule.resources ?? []), ...rule.verbs];
        assert.ok(!all.includes('*'), `${role.metadata.name}: wildcard in ${JSON.stringify(rule)}`);
        assert.equal(rule.nonResourceURLs, undefined, `${role.metadata.name}: nonResourceURLs`);
        if (rule.resourceNames === undefined) continue;
        for (const group of rule.apiGroups ?? []) {
          for (const resource of rule.resources ?? []) {
            const key = `${group === '' ? 'core' : group}/${resource}`;
            const named = NAMED_OBJECTS[process]?.[key]?.name ?? FIXED_NAMES[key];
            assert.ok(named, `${role.metadata.name}: resourceNames on ${key}, which the process does not name`);
            assert.deepEqual(rule.resourceNames, [named], `${role.metadata.name}: ${key}`);
          }
        }
        // The authorizer sees no name for a create (and a list or watch names none unless asked to).
        const unnamable = rule.verbs.filter((v) => ['create', 'list', 'watch', 'deletecollection'].includes(v));
        assert.deepEqual(unnamable, [], `${role.metadata.name}: verbs that resourceNames cannot limit`);
      }
    }
  });

  it('a named object has the name its process is given, and an unnamed create only within the namespace', () => {
    for (const [process, named] of Object.entries(NAMED_OBJECTS)) {
      const container = podSpec(findObject(objects, 'Deployment', `lws-temporal-${process}`)).containers[0];
      for (const [key, { name, env }] of Object.entries(named)) {
        assert.equal(container?.env?.find((e) => e.name === env)?.value, name, `${process}: ${env}`);
        for (const role of rolesOf(objects, process as ProcessName)) {
          for (const rule of (role as unknown as { rules: PolicyRule[] }).rules) {
            const covers = (rule.apiGroups ?? []).some((g) =>
              (rule.resources ?? []).some((r) => `${g === '' ? 'core' : g}/${r}` === key),
            );
            if (covers && rule.resourceNames === undefined) {
              assert.equal(role.kind, 'Role', `${role.metadata.name}: an unnamed rule on ${key} cluster-wide`);
              assert.deepEqual(rule.verbs, ['create'], `${role.metadata.name}: an unnamed rule on ${key}`);
            }
          }
        }
      }
    }
    const configuration = NAMED_OBJECTS.admission?.['admissionregistration.k8s.io/mutatingwebhookconfigurations'];
    findObject(objects, 'MutatingWebhookConfiguration', configuration?.name ?? '(none)');
  });

  it('each role is bound to its own ServiceAccount, which its Deployment runs as', () => {
    let roles = 0;
    for (const name of processes) {
      for (const role of rolesOf(objects, name)) {
        roles++;
        const binding = findObject(objects, `${role.kind}Binding`, `lws-temporal-${name}`) as unknown as {
          metadata: { namespace?: string };
          roleRef: { apiGroup: string; kind: string; name: string };
          subjects: { kind: string; name: string; namespace: string }[];
        };
        assert.equal(binding.metadata.namespace, role.metadata.namespace, `${role.kind}Binding lws-temporal-${name}`);
        assert.deepEqual(binding.roleRef, {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: role.kind,
          name: `lws-temporal-${name}`,
        });
        assert.deepEqual(binding.subjects, [
          { kind: 'ServiceAccount', name: `lws-temporal-${name}`, namespace: NAMESPACE },
        ]);
      }
      const sa = findObject(objects, 'ServiceAccount', `lws-temporal-${name}`);
      assert.equal(sa.metadata.namespace, NAMESPACE);
      assert.equal(
        podSpec(findObject(objects, 'Deployment', `lws-temporal-${name}`)).serviceAccountName,
        sa.metadata.name,
      );
    }
    const bindings = objects.filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding');
    assert.equal(bindings.length, roles, 'one binding per role, no others');
  });

  it('the scanner reports calls missing from its tables and resources it cannot resolve (fixture)', () => {
    const fixture = deriveCalls(fixtureFiles());
    assert.deepEqual([...fixture.permissions.keys()].sort(), [
      'apps/statefulsets:delete',
      'core/pods:get',
      'example.com/gadgets:watch',
      'example.com/widgets/status:patch',
    ]);
    assert.deepEqual(
      fixture.unmapped.map((s) => s.api),
      ['CoreV1Api.createNamespacedConfigMap'],
    );
    assert.deepEqual(
      fixture.unresolved.map((s) => s.api),
      ['CustomObjectsApi.listClusterCustomObject', 'kubeCall'],
    );
  });
});
