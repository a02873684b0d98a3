import assert from 'node:assert/strict';
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { podFacts, statefulSetFacts, trimPod, trimStatefulSet } from '../../src/model/index.js';

const managedFields = [{ manager: 'kube-controller-manager', operation: 'Update', fieldsV1: { 'f:spec': {} } }];

function pod(over: Partial<V1Pod['status']> = {}): V1Pod {
  return {
    metadata: {
      name: 'lws-0-1',
      namespace: 'ns',
      uid: 'p1',
      labels: { 'leaderworkerset.sigs.k8s.io/name': 'lws', 'leaderworkerset.sigs.k8s.io/worker-index': '1', app: 'x' },
      annotations: { 'leaderworkerset.sigs.k8s.io/size': '4', 'other.io/note': 'n' },
      creationTimestamp: new Date('2026-12-01T10:00:00Z'),
      deletionTimestamp: new Date('2026-12-01T10:05:00Z'),
      deletionGracePeriodSeconds: 60,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'lws-0', uid: 's1', controller: true }],
      managedFields,
    },
    spec: { containers: [{ name: 'vllm', image: 'vllm:1', env: [{ name: 'HF_TOKEN', value: 'secret' }] }] },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: new Date() },
        { type: 'PodScheduled', status: 'True', message: 'ok' },
      ],
      containerStatuses: [
        { name: 'vllm', image: 'vllm:1', imageID: 'sha', ready: true, restartCount: 2, started: true },
      ],
      initContainerStatuses: [{ name: 'init', image: 'i', imageID: 'sha', ready: true, restartCount: 1 }],
      podIP: '10.0.0.1',
      ...over,
    },
  };
}

describe('cache trim: what the trigger keeps of a pod and a StatefulSet', () => {
  const pods: [string, V1Pod][] = [
    ['a Running worker, terminating, with restarts in both kinds of containers', pod()],
    [
      'a Pending pod with no statuses yet',
      pod({ phase: 'Pending', conditions: undefined, containerStatuses: undefined, initContainerStatuses: undefined }),
    ],
    ['a pod without a status', { ...pod(), status: undefined }],
  ];
  for (const [what, p] of pods) {
    it(`${what}: the same facts, without spec or managedFields`, () => {
      const before = podFacts(structuredClone(p));
      const trimmed = trimPod(structuredClone(p));
      assert.deepEqual(podFacts(trimmed), before);
      assert.equal(trimmed.spec, undefined);
      assert.equal(trimmed.metadata?.managedFields, undefined);
      assert.doesNotMatch(JSON.stringify(trimmed), /HF_TOKEN|secret|podIP|imageID/);
    });
  }

  it('a worker StatefulSet: the same facts, spec cut to its replicas', () => {
    const sts: V1StatefulSet = {
      metadata: {
        name: 'lws-0',
        namespace: 'ns',
        uid: 's1',
        labels: { 'leaderworkerset.sigs.k8s.io/name': 'lws' },
        managedFields,
      },
      spec: {
        replicas: 3,
        serviceName: 'lws',
        selector: { matchLabels: { a: 'b' } },
        template: { spec: { containers: [{ name: 'vllm', env: [{ name: 'HF_TOKEN', value: 'secret' }] }] } },
      },
      status: { replicas: 3, readyReplicas: 2, availableReplicas: 2, currentRevision: 'r1', updateRevision: 'r2' },
    };
    const before = statefulSetFacts(structuredClone(sts));
    const trimmed = trimStatefulSet(structuredClone(sts));
    assert.deepEqual(statefulSetFacts(trimmed), before);
    assert.deepEqual(trimmed.spec, { replicas: 3 });
    assert.equal(trimmed.metadata?.managedFields, undefined);
  });
});
