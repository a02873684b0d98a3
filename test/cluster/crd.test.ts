// The CRD on a real API server: it refuses invalid LeaderWorkerSets with messages that name the field and what is
// allowed, fills in the defaults, accepts the examples, and serves the scale and status subresources.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import yaml from 'js-yaml';
import {
  CEL_MESSAGES,
  API_GROUP,
  API_GROUP_VERSION,
  API_VERSION,
  applySpecDefaults,
  KIND,
  PLURAL,
  validateLeaderWorkerSet,
  type LeaderWorkerSet,
  type LeaderWorkerSetSpec,
} from '../../src/model/index.js';
import { binPath, kubeconfigPath } from '../../tools/stack/paths.js';
import { apiMessage, useCrdSuite } from '../fixtures/crd-suite.js';
import { installCrd } from '../../tools/stack/crd.js';

const run = promisify(execFile);
const lwsApi = { group: API_GROUP, version: API_VERSION, plural: PLURAL };
const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

/** An LWS as loose JSON data, to break in one place per case. */
interface LwsJson {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: { [field: string]: unknown; leaderWorkerTemplate: { [field: string]: unknown } };
}

/** A minimal valid LWS. */
function minimal(name: string): LwsJson {
  return {
    apiVersion: API_GROUP_VERSION,
    kind: KIND,
    metadata: { name },
    spec: { leaderWorkerTemplate: { workerTemplate: { spec: { containers: [{ name: 'main', image: 'example' }] } } } },
  };
}

describe('LeaderWorkerSet CRD on the API server', function () {
  this.timeout(60_000);
  const suite = useCrdSuite('crd-test');

  const create = (body: object) =>
    suite.custom.createNamespacedCustomObject({ ...lwsApi, namespace: suite.namespace, body });
  const get = (name: string) =>
    suite.custom.getNamespacedCustomObject({ ...lwsApi, namespace: suite.namespace, name }) as Promise<LeaderWorkerSet>;

  it('installCrd is idempotent (a second install replaces the CRD and it stays served)', async () => {
    await installCrd(suite.kc);
    const ext = suite.kc.makeApiClient(k8s.ApiextensionsV1Api);
    const crd = await ext.readCustomResourceDefinition({ name: `${PLURAL}.${API_GROUP}` });
    assert.ok(crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'));
  });

  describe('refuses invalid objects, naming the field and what is allowed', () => {
    const cases: Array<{ title: string; mutate: (o: LwsJson) => void; expected: string[] }> = [
      {
        title: 'podTerminationPolicy: Sideways',
        mutate: (o) => (o.spec.podTerminationPolicy = 'Sideways'),
        expected: [
          'spec.podTerminationPolicy: Unsupported value: "Sideways": supported values: "Default", "Sequential", "Parallel"',
        ],
      },
      {
        title: 'leaderWorkerTemplate.size: 0',
        mutate: (o) => (o.spec.leaderWorkerTemplate.size = 0),
        expected: [
          'spec.leaderWorkerTemplate.size: Invalid value: 0: spec.leaderWorkerTemplate.size in body should be greater than or equal to 1',
        ],
      },
      {
        title: 'replicas: -1',
        mutate: (o) => (o.spec.replicas = -1),
        expected: ['spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0'],
      },
      {
        title: 'no workerTemplate',
        mutate: (o) => delete o.spec.leaderWorkerTemplate.workerTemplate,
        expected: ['spec.leaderWorkerTemplate.workerTemplate: Required value'],
      },
      {
        title: 'restartPolicy: Always',
        mutate: (o) => (o.spec.leaderWorkerTemplate.restartPolicy = 'Always'),
        expected: [
          'spec.leaderWorkerTemplate.restartPolicy: Unsupported value: "Always": supported values: "RecreateGroupOnPodRestart", "None", "RecreateGroupAfterStart"',
        ],
      },
      {
        title: 'maxUnavailable 0 with maxSurge 0',
        mutate: (o) => (o.spec.rolloutStrategy = { rollingUpdateConfiguration: { maxUnavailable: 0, maxSurge: 0 } }),
        expected: [
          'spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable',
          CEL_MESSAGES.maxUnavailableAndMaxSurgeZero,
        ],
      },
      {
        title: "maxSurge: '150%'",
        mutate: (o) => (o.spec.rolloutStrategy = { rollingUpdateConfiguration: { maxSurge: '150%' } }),
        expected: ["maxSurge must be a non-negative integer or a percentage from 0% to 100% (e.g. 1 or '25%')"],
      },
      {
        title: 'maxGroupRestarts with restartPolicy None',
        mutate: (o) => Object.assign(o.spec.leaderWorkerTemplate, { restartPolicy: 'None', maxGroupRestarts: 3 }),
        expected: ['spec.leaderWorkerTemplate.maxGroupRestarts', CEL_MESSAGES.maxGroupRestartsPolicy],
      },
      {
        title: 'maxGroupRestarts 0 with restartPolicy Default (the deprecated name of None)',
        mutate: (o) => Object.assign(o.spec.leaderWorkerTemplate, { restartPolicy: 'Default', maxGroupRestarts: 0 }),
        expected: ['spec.leaderWorkerTemplate.maxGroupRestarts', CEL_MESSAGES.maxGroupRestartsPolicy],
      },
      {
        title: 'groupRestartBackoff with maximumIntervalSeconds below initialIntervalSeconds',
        mutate: (o) =>
          (o.spec.leaderWorkerTemplate.groupRestartBackoff = {
            initialIntervalSeconds: 60,
            maximumIntervalSeconds: 30,
          }),
        expected: [
          'spec.leaderWorkerTemplate.groupRestartBackoff.maximumIntervalSeconds',
          CEL_MESSAGES.backoffMaximumBelowInitial,
        ],
      },
      {
        title: 'maxGroupRestarts: -1',
        mutate: (o) => (o.spec.leaderWorkerTemplate.maxGroupRestarts = -1),
        expected: [
          'spec.leaderWorkerTemplate.maxGroupRestarts: Invalid value: -1: spec.leaderWorkerTemplate.maxGroupRestarts in body should be greater than or equal to 0',
        ],
      },
      {
        title: 'forceDeleteOnNodeNotReadySeconds (ours): -1',
        mutate: (o) => (o.spec.forceDeleteOnNodeNotReadySeconds = -1),
        expected: [
          'spec.forceDeleteOnNodeNotReadySeconds: Invalid value: -1: spec.forceDeleteOnNodeNotReadySeconds in body should be greater than or equal to 0',
        ],
      },
      {
        title: "publishNotReadyAddresses: 'yes'",
        mutate: (o) => (o.spec.networkConfig = { publishNotReadyAddresses: 'yes' }),
        expected: [
          'spec.networkConfig.publishNotReadyAddresses: Invalid value: "string": spec.networkConfig.publishNotReadyAddresses in body must be of type boolean: "string"',
        ],
      },
    ];
    for (const { title, mutate, expected } of cases) {
      it(title, async () => {
        const obj = minimal('invalid');
        mutate(obj);
        const err = await create(obj).then(
          () => assert.fail('the API server accepted an invalid LeaderWorkerSet'),
          (e: unknown) => e,
        );
        assert.equal((err as k8s.ApiException<unknown>).code, 422);
        const message = apiMessage(err);
        for (const text of expected) assert.ok(message.includes(text), `"${message}" should contain "${text}"`);
        // The model's validation (for objects that bypass the API server) says the same, in the same words.
        const modelMessages = validateLeaderWorkerSet(obj).map((e) => e.message);
        assert.ok(modelMessages.length > 0, 'the model must refuse it too');
        for (const text of expected) {
          assert.ok(
            modelMessages.some((m) => m.includes(text)),
            `model messages ${JSON.stringify(modelMessages)} should contain "${text}"`,
          );
        }
      });
    }
  });

  describe("accepts KEP-820's fields and stores them as written (no default: unset stays unset)", () => {
    const cases: Array<{ title: string; name: string; mutate: (o: LwsJson) => void; stored: object }> = [
      {
        title: 'maxGroupRestarts 0 with restartPolicy unset (RecreateGroupOnPodRestart)',
        name: 'budget-default-policy',
        mutate: (o) => (o.spec.leaderWorkerTemplate.maxGroupRestarts = 0),
        stored: { leaderWorkerTemplate: { restartPolicy: 'RecreateGroupOnPodRestart', maxGroupRestarts: 0 } },
      },
      {
        title: 'groupRestartBackoff (ours) with one field',
        name: 'backoff-one-field',
        mutate: (o) => (o.spec.leaderWorkerTemplate.groupRestartBackoff = { initialIntervalSeconds: 2 }),
        stored: { leaderWorkerTemplate: { groupRestartBackoff: { initialIntervalSeconds: 2 } } },
      },
      {
        title: 'maxGroupRestarts 3 with RecreateGroupAfterStart',
        name: 'budget-after-start',
        mutate: (o) =>
          Object.assign(o.spec.leaderWorkerTemplate, { restartPolicy: 'RecreateGroupAfterStart', maxGroupRestarts: 3 }),
        stored: { leaderWorkerTemplate: { restartPolicy: 'RecreateGroupAfterStart', maxGroupRestarts: 3 } },
      },
      {
        title: 'forceDeleteOnNodeNotReadySeconds (ours) 0',
        name: 'force-delete-not-ready',
        mutate: (o) => (o.spec.forceDeleteOnNodeNotReadySeconds = 0),
        stored: {},
      },
      {
        title: 'publishNotReadyAddresses false',
        name: 'publish-false',
        mutate: (o) => (o.spec.networkConfig = { publishNotReadyAddresses: false }),
        stored: { networkConfig: { subdomainPolicy: 'Shared', publishNotReadyAddresses: false } },
      },
      {
        title: 'publishNotReadyAddresses true under UniquePerReplica',
        name: 'publish-true',
        mutate: (o) => (o.spec.networkConfig = { subdomainPolicy: 'UniquePerReplica', publishNotReadyAddresses: true }),
        stored: { networkConfig: { subdomainPolicy: 'UniquePerReplica', publishNotReadyAddresses: true } },
      },
    ];
    for (const { title, name, mutate, stored } of cases) {
      it(title, async () => {
        const obj = minimal(name);
        mutate(obj);
        assert.deepEqual(validateLeaderWorkerSet(obj), [], 'the model accepts it too');
        await create(obj);
        const got = await get(name);
        const spec = got.spec as unknown as Record<string, Record<string, unknown>>;
        for (const [part, fields] of Object.entries(stored)) {
          for (const [field, value] of Object.entries(fields as Record<string, unknown>)) {
            assert.deepEqual(spec[part]?.[field], value, `spec.${part}.${field}`);
          }
        }
        assert.deepEqual(got.spec, applySpecDefaults(obj.spec as unknown as LeaderWorkerSetSpec));
      });
    }

    it('refuses a later switch to restartPolicy None while maxGroupRestarts is set', async () => {
      const obj = minimal('budget-switch');
      obj.spec.leaderWorkerTemplate.maxGroupRestarts = 2;
      await create(obj);
      const err = await suite.custom
        .patchNamespacedCustomObject(
          {
            ...lwsApi,
            namespace: suite.namespace,
            name: 'budget-switch',
            body: { spec: { leaderWorkerTemplate: { restartPolicy: 'None' } } },
          },
          mergePatch,
        )
        .then(
          () => assert.fail('the API server accepted maxGroupRestarts with restartPolicy None'),
          (e: unknown) => e,
        );
      const message = apiMessage(err);
      for (const text of ['spec.leaderWorkerTemplate.maxGroupRestarts', CEL_MESSAGES.maxGroupRestartsPolicy]) {
        assert.ok(message.includes(text), `"${message}" should contain "${text}"`);
      }
      // Dropping the budget in the same patch is taken.
      await suite.custom.patchNamespacedCustomObject(
        {
          ...lwsApi,
          namespace: suite.namespace,
          name: 'budget-switch',
          body: { spec: { leaderWorkerTemplate: { restartPolicy: 'None', maxGroupRestarts: null } } },
        },
        mergePatch,
      );
      const after = (await get('budget-switch')).spec.leaderWorkerTemplate;
      assert.deepEqual([after.restartPolicy, after.maxGroupRestarts], ['None', undefined]);
    });
  });

  it('fills in the defaults, the same as the model', async () => {
    const obj = minimal('defaults');
    await create(obj);
    const stored = await get('defaults');
    assert.deepEqual(stored.spec, {
      replicas: 1,
      leaderWorkerTemplate: {
        size: 1,
        restartPolicy: 'RecreateGroupOnPodRestart',
        workerTemplate: obj.spec.leaderWorkerTemplate.workerTemplate,
      },
      startupPolicy: 'LeaderCreated',
      podTerminationPolicy: 'Default',
      rolloutStrategy: {
        type: 'RollingUpdate',
        rollingUpdateConfiguration: { partition: 0, maxUnavailable: 1, maxSurge: 0 },
      },
      networkConfig: { subdomainPolicy: 'Shared' },
    });
    assert.deepEqual(stored.spec, applySpecDefaults(obj.spec as unknown as LeaderWorkerSetSpec));
  });

  it("stores upstream's podTerminationPolicy Default as written, and takes a change from any value to any other", async () => {
    const obj = minimal('kep-956');
    obj.spec.podTerminationPolicy = 'Default';
    await create(obj);
    assert.equal((await get('kep-956')).spec.podTerminationPolicy, 'Default');
    for (const value of ['Parallel', 'Sequential', 'Default', 'Parallel', 'Default', 'Sequential', 'Parallel']) {
      await suite.custom.patchNamespacedCustomObject(
        { ...lwsApi, namespace: suite.namespace, name: 'kep-956', body: { spec: { podTerminationPolicy: value } } },
        mergePatch,
      );
      assert.equal((await get('kep-956')).spec.podTerminationPolicy, value);
    }
  });

  for (const file of ['leaderworkerset-parallel-termination.yaml', 'leaderworkerset-sequential-termination.yaml']) {
    it(`applies examples/${file} unchanged`, async () => {
      const manifest = yaml.load(await readFile(new URL(`../../examples/${file}`, import.meta.url), 'utf8')) as {
        metadata: { name: string };
        spec: LeaderWorkerSet['spec'];
      };
      await create(manifest);
      const stored = await get(manifest.metadata.name);
      assert.equal(stored.spec.podTerminationPolicy, manifest.spec.podTerminationPolicy);
      assert.equal(stored.spec.replicas, 2);
      assert.equal(stored.spec.leaderWorkerTemplate.size, 4);
      assert.deepEqual(
        stored.spec.leaderWorkerTemplate.leaderTemplate,
        manifest.spec.leaderWorkerTemplate.leaderTemplate,
      );
      assert.deepEqual(
        stored.spec.leaderWorkerTemplate.workerTemplate,
        manifest.spec.leaderWorkerTemplate.workerTemplate,
      );
    });
  }

  it('serves the status subresource: status goes through /status only', async () => {
    // Status sent with the object itself is dropped: only the /status endpoint writes it.
    await create({ ...minimal('with-status'), status: { replicas: 7 } });
    assert.equal((await get('with-status')).status?.replicas, undefined);
    await suite.custom.patchNamespacedCustomObjectStatus(
      {
        ...lwsApi,
        namespace: suite.namespace,
        name: 'with-status',
        body: { status: { replicas: 1, readyReplicas: 1 } },
      },
      mergePatch,
    );
    const stored = await get('with-status');
    assert.deepEqual(stored.status, { replicas: 1, readyReplicas: 1 });
    // ... and a spec change sent to /status is ignored.
    await suite.custom.patchNamespacedCustomObjectStatus(
      { ...lwsApi, namespace: suite.namespace, name: 'with-status', body: { spec: { replicas: 5 } } },
      mergePatch,
    );
    assert.equal((await get('with-status')).spec.replicas, 1);
  });

  it('serves the scale subresource: replicas from spec.replicas, selector from status.hpaPodSelector', async () => {
    await create(minimal('scalable'));
    const selector = 'leaderworkerset.sigs.k8s.io/name=scalable,leaderworkerset.sigs.k8s.io/worker-index=0';
    await suite.custom.patchNamespacedCustomObjectStatus(
      {
        ...lwsApi,
        namespace: suite.namespace,
        name: 'scalable',
        body: { status: { replicas: 1, hpaPodSelector: selector } },
      },
      mergePatch,
    );
    const scale = (await suite.custom.getNamespacedCustomObjectScale({
      ...lwsApi,
      namespace: suite.namespace,
      name: 'scalable',
    })) as {
      spec: { replicas: number };
      status: { replicas: number; selector: string };
    };
    assert.equal(scale.spec.replicas, 1);
    assert.deepEqual(scale.status, { replicas: 1, selector });

    await suite.custom.patchNamespacedCustomObjectScale(
      { ...lwsApi, namespace: suite.namespace, name: 'scalable', body: { spec: { replicas: 3 } } },
      mergePatch,
    );
    assert.equal((await get('scalable')).spec.replicas, 3);

    // What `kubectl scale` does, with the real kubectl.
    await run(binPath('kubectl'), [
      `--kubeconfig=${kubeconfigPath}`,
      '-n',
      suite.namespace,
      'scale',
      'lws/scalable',
      '--replicas=2',
    ]);
    assert.equal((await get('scalable')).spec.replicas, 2);

    // The scale subresource enforces the same minimum.
    const err = await suite.custom
      .patchNamespacedCustomObjectScale(
        { ...lwsApi, namespace: suite.namespace, name: 'scalable', body: { spec: { replicas: -1 } } },
        mergePatch,
      )
      .then(
        () => assert.fail('scaled to -1'),
        (e: unknown) => e,
      );
    assert.match(apiMessage(err), /spec\.replicas.*-1/);
  });
});
