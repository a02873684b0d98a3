// The pod and claim templates of the CRD on a real API server: their schemas, generated from the Kubernetes
// OpenAPI, refuse bad templates at apply time naming the field, and keep good ones as they were sent.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import yaml from 'js-yaml';
import { API_GROUP, API_GROUP_VERSION, API_VERSION, CRD_NAME, KIND, PLURAL } from '../../src/model/index.js';
import { crdPath } from '../../tools/stack/crd.js';
import { binPath, kubeconfigPath } from '../../tools/stack/paths.js';
import { apiMessage, useCrdSuite } from '../fixtures/crd-suite.js';

const run = promisify(execFile);
const lwsApi = { group: API_GROUP, version: API_VERSION, plural: PLURAL };
const serverSideApply = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply);

type Json = { [key: string]: unknown };

function lws(name: string, leaderWorkerTemplate: Json): Json {
  return { apiVersion: API_GROUP_VERSION, kind: KIND, metadata: { name }, spec: { leaderWorkerTemplate } };
}

const container = (extra: Json = {}): Json => ({ name: 'main', image: 'example', ...extra });

/** What an upstream LeaderWorkerSet for inference looks like, touching the int-or-string and list-map fields. */
function upstreamLike(): Json {
  const podSpec = (role: string): Json => ({
    containers: [
      container({
        image: 'vllm/vllm-openai:latest',
        command: ['sh', '-c', `exec serve --role=${role}`],
        ports: [
          { containerPort: 8080, name: 'http' },
          { containerPort: 9090, protocol: 'UDP' },
        ],
        env: [
          { name: 'MODEL', value: 'llama' },
          { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'hf', key: 'token', optional: true } } },
          {
            name: 'GROUP',
            valueFrom: { fieldRef: { fieldPath: "metadata.labels['leaderworkerset.sigs.k8s.io/group-index']" } },
          },
        ],
        resources: {
          limits: { 'nvidia.com/gpu': '8', cpu: '500m', memory: '1Gi' },
          requests: { 'nvidia.com/gpu': '8', cpu: 2, 'ephemeral-storage': '10G' },
        },
        readinessProbe: { httpGet: { path: '/health', port: 'http' }, initialDelaySeconds: 15, periodSeconds: 10 },
        livenessProbe: { tcpSocket: { port: 8080 }, failureThreshold: 3 },
        volumeMounts: [
          { name: 'dshm', mountPath: '/dev/shm' },
          { name: 'config', mountPath: '/etc/config', readOnly: true },
          { name: 'cache', mountPath: '/cache' },
        ],
        securityContext: { capabilities: { add: ['IPC_LOCK'] } },
      }),
    ],
    volumes: [
      { name: 'dshm', emptyDir: { medium: 'Memory', sizeLimit: '15Gi' } },
      { name: 'config', configMap: { name: 'serve-config', items: [{ key: 'a', path: 'a.yaml' }] } },
    ],
    tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
    nodeSelector: { 'cloud.google.com/gke-accelerator': 'nvidia-h100-80gb' },
  });
  return {
    size: 2,
    leaderTemplate: {
      metadata: { labels: { role: 'leader' }, annotations: { 'example.com/note': 'x' } },
      spec: podSpec('leader'),
    },
    workerTemplate: { metadata: { labels: { role: 'worker' } }, spec: podSpec('worker') },
    volumeClaimTemplates: [
      {
        metadata: { name: 'cache' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '100Gi' } } },
        // What a StatefulSet read back carries; meaningless here, and kept.
        status: { phase: 'Pending' },
      },
    ],
    persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
  };
}

/** The node at a path of keys (array indexes too). */
function dig(node: unknown, ...keys: string[]): unknown {
  return keys.reduce<unknown>((n, key) => (n as Json | undefined)?.[key], node);
}

describe('LeaderWorkerSet CRD: pod and claim templates on the API server', function () {
  this.timeout(60_000);
  const suite = useCrdSuite('crd-templates');

  const create = (body: Json, fieldValidation = 'Strict') =>
    suite.custom.createNamespacedCustomObject({ ...lwsApi, namespace: suite.namespace, body, fieldValidation });
  const apply = (body: Json) =>
    suite.custom.patchNamespacedCustomObject(
      {
        ...lwsApi,
        namespace: suite.namespace,
        name: (body.metadata as { name: string }).name,
        body,
        fieldManager: 'crd-templates-test',
        fieldValidation: 'Strict',
        force: true,
      },
      serverSideApply,
    );
  const get = async (name: string) =>
    ((await suite.custom.getNamespacedCustomObject({ ...lwsApi, namespace: suite.namespace, name })) as { spec: Json })
      .spec;

  it('installCrd serves the schema as the file has it (the typed client keeps list-map keys and map types)', async () => {
    const file = yaml.load(await readFile(crdPath, 'utf8'));
    const kubectl = [`--kubeconfig=${kubeconfigPath}`, 'get', 'crd', CRD_NAME, '-o', 'json'];
    const served = JSON.parse((await run(binPath('kubectl'), kubectl, { maxBuffer: 64 << 20 })).stdout) as unknown;
    const schema = ['spec', 'versions', '0', 'schema'];
    const podSpec = [
      ...schema,
      'openAPIV3Schema',
      ...['spec', 'leaderWorkerTemplate', 'workerTemplate', 'spec'].flatMap((p) => ['properties', p]),
      'properties',
    ];
    // A list-map right below a typed node, one inside `items` (untyped in client-node), and an atomic map.
    assert.deepEqual(dig(served, ...podSpec, 'containers', 'x-kubernetes-list-map-keys'), ['name']);
    const ports = [...podSpec, 'containers', 'items', 'properties', 'ports'];
    assert.deepEqual(dig(served, ...ports, 'x-kubernetes-list-map-keys'), ['containerPort', 'protocol']);
    assert.deepEqual(dig(served, ...ports), dig(file, ...ports));
    assert.equal(dig(served, ...podSpec, 'imagePullSecrets', 'items', 'x-kubernetes-map-type'), 'atomic');
    assert.deepEqual(dig(served, ...schema), dig(file, ...schema));
  });

  describe('refuses bad templates, naming the field', () => {
    /** code undefined: not checked. */
    const cases: Array<{ title: string; send: (name: string) => Promise<unknown>; code?: number; expected: string }> = [
      {
        title: 'a worker limit cpu: banana',
        send: (name) =>
          create(
            lws(name, {
              workerTemplate: { spec: { containers: [container({ resources: { limits: { cpu: 'banana' } } })] } },
            }),
          ),
        code: 422,
        expected:
          'spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].resources.limits.cpu: Invalid value: "banana"',
      },
      {
        title: 'a leader template without containers',
        send: (name) =>
          create(
            lws(name, {
              leaderTemplate: { spec: { restartPolicy: 'Always' } },
              workerTemplate: { spec: { containers: [container()] } },
            }),
          ),
        code: 422,
        expected: 'spec.leaderWorkerTemplate.leaderTemplate.spec.containers: Required value',
      },
      {
        title: 'an unknown container field, created with fieldValidation Strict',
        send: (name) =>
          create(lws(name, { workerTemplate: { spec: { containers: [container({ imagePullPolice: 'Always' })] } } })),
        code: 400,
        expected: 'unknown field "spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].imagePullPolice"',
      },
      {
        title: 'an unknown container field, server-side applied',
        send: (name) =>
          apply(lws(name, { workerTemplate: { spec: { containers: [container({ imagePullPolice: 'Always' })] } } })),
        // The API server answers 500 to this instead of 400 (kubernetes/kubernetes#139253): only the message counts.
        expected:
          '.spec.leaderWorkerTemplate.workerTemplate.spec.containers[name="main"].imagePullPolice: field not declared in schema',
      },
    ];
    for (const { title, send, code, expected } of cases) {
      it(title, async () => {
        const err = await send('bad-template').then(
          () => assert.fail('the API server accepted a bad template'),
          (e: unknown) => e,
        );
        const message = apiMessage(err);
        if (code !== undefined) assert.equal((err as k8s.ApiException<unknown>).code, code, message);
        assert.ok(message.includes(expected), `"${message}" should contain "${expected}"`);
      });
    }
  });

  it('accepts an upstream-like template and keeps it as sent, but for the ports protocol default', async () => {
    const sent = upstreamLike();
    await create(lws('upstream-like', sent));
    const expected = upstreamLike();
    for (const template of [expected.leaderTemplate, expected.workerTemplate] as Array<{
      spec: { containers: Json[] };
    }>) {
      for (const port of template.spec.containers[0]!.ports as Json[]) port.protocol ??= 'TCP';
    }
    const stored = (await get('upstream-like')).leaderWorkerTemplate as Json;
    for (const field of Object.keys(expected)) assert.deepEqual(stored[field], expected[field], field);
    // Server-side apply of the same (strict: no field of it is unknown to the schema) changes nothing.
    await apply(lws('upstream-like', upstreamLike()));
    assert.deepEqual((await get('upstream-like')).leaderWorkerTemplate, stored);
  });
});
