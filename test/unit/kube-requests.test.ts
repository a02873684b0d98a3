import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { kubeRequestOf, noteKubeRequest } from '../../src/kube/requests.js';
import { TriggerMetrics, WorkerMetrics } from '../../src/observability/metrics.js';

describe('kubeRequestOf: a call in the API server verbs', () => {
  const cases: { method: string; path: string; verb: string; resource: string }[] = [
    { method: 'GET', path: '/api/v1/namespaces/ns/pods/lws-0', verb: 'get', resource: 'pods' },
    { method: 'GET', path: '/api/v1/namespaces/ns/pods?labelSelector=a%3Db', verb: 'list', resource: 'pods' },
    { method: 'GET', path: '/api/v1/pods', verb: 'list', resource: 'pods' },
    { method: 'GET', path: '/api/v1/pods?watch=true&resourceVersion=7', verb: 'watch', resource: 'pods' },
    {
      method: 'GET',
      path: '/apis/apps/v1/namespaces/ns/statefulsets?watch=1',
      verb: 'watch',
      resource: 'statefulsets',
    },
    { method: 'GET', path: '/api/v1/namespaces', verb: 'list', resource: 'namespaces' },
    { method: 'GET', path: '/api/v1/namespaces/ns', verb: 'get', resource: 'namespaces' },
    { method: 'POST', path: '/api/v1/namespaces/ns/events', verb: 'create', resource: 'events' },
    { method: 'PUT', path: '/apis/apps/v1/namespaces/ns/statefulsets/lws-0', verb: 'update', resource: 'statefulsets' },
    {
      method: 'PATCH',
      path: '/apis/leaderworkerset.x-k8s.io/v1/namespaces/ns/leaderworkersets/lws/status',
      verb: 'patch',
      resource: 'leaderworkersets/status',
    },
    { method: 'DELETE', path: '/api/v1/namespaces/ns/pods/lws-0-1', verb: 'delete', resource: 'pods' },
    { method: 'DELETE', path: '/api/v1/namespaces/ns/pods', verb: 'deletecollection', resource: 'pods' },
    { method: 'GET', path: '/version', verb: 'list', resource: 'unknown' },
  ];
  for (const c of cases) {
    it(`${c.method} ${c.path} is ${c.verb} ${c.resource}`, () => {
      assert.deepEqual(kubeRequestOf(c.method, c.path), { verb: c.verb, resource: c.resource });
    });
  }

  it('takes the query from its own argument when given (kube-json passes the URL search)', () => {
    const query = new URLSearchParams({ watch: 'true' });
    assert.deepEqual(kubeRequestOf('GET', '/api/v1/namespaces/ns/pods', query), { verb: 'watch', resource: 'pods' });
  });
});

describe('lws_kube_api_requests_total: each role counts the requests made with its own KubeConfig', () => {
  it('counts by component, verb, resource and code, and nothing made with another KubeConfig', async () => {
    const worker = new WorkerMetrics();
    const trigger = new TriggerMetrics();
    const workerKc = new k8s.KubeConfig();
    const triggerKc = new k8s.KubeConfig();
    worker.kubeApiRequests.observe(workerKc);
    trigger.kubeApiRequests.observe(triggerKc);
    noteKubeRequest(workerKc, 'DELETE', '/apis/apps/v1/namespaces/ns/statefulsets/lws-0', 200);
    noteKubeRequest(workerKc, 'DELETE', '/apis/apps/v1/namespaces/ns/statefulsets/lws-0', 200);
    noteKubeRequest(workerKc, 'GET', '/api/v1/namespaces/ns/pods/lws-0', 0);
    noteKubeRequest(triggerKc, 'GET', '/api/v1/pods', 429);
    noteKubeRequest(new k8s.KubeConfig(), 'GET', '/api/v1/pods', 200);

    const values = async (m: WorkerMetrics | TriggerMetrics) =>
      (await m.kubeApiRequests.counter.get()).values.map((v) => ({ ...v.labels, value: v.value }));
    assert.deepEqual(await values(worker), [
      { component: 'worker', verb: 'delete', resource: 'statefulsets', code: '200', value: 2 },
      { component: 'worker', verb: 'get', resource: 'pods', code: '0', value: 1 },
    ]);
    assert.deepEqual(await values(trigger), [
      { component: 'trigger', verb: 'list', resource: 'pods', code: '429', value: 1 },
    ]);
    assert.match(await worker.registry.metrics(), /lws_kube_api_requests_total\{component="worker",verb="delete"/);
  });
});
