import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { formatPodCreates, podCreatesBetween } from '../../tools/bench/pod-creates.js';

// Lines as kube-apiserver's /metrics gives them (labels sorted, as it prints them).
const request = (verb: string, resource: string, subresource: string, sum: number, count: number) => {
  const labels = `component="apiserver",dry_run="",group="",resource="${resource}",scope="resource",subresource="${subresource}",verb="${verb}",version="v1"`;
  return `apiserver_request_duration_seconds_sum{${labels}} ${sum}\napiserver_request_duration_seconds_count{${labels}} ${count}`;
};
const webhook = (name: string, operation: string, sum: number, count: number) => {
  const labels = `name="${name}",operation="${operation}",rejected="false",type="admit"`;
  return `apiserver_admission_webhook_admission_duration_seconds_sum{${labels}} ${sum}\napiserver_admission_webhook_admission_duration_seconds_count{${labels}} ${count}`;
};
const page = (...parts: string[]) => ['# HELP apiserver_request_duration_seconds ...', ...parts].join('\n');

describe('bench: pod creates as the API server timed them', () => {
  const before = page(
    request('POST', 'pods', '', 1, 10),
    request('POST', 'pods', 'binding', 0.5, 10),
    request('GET', 'pods', '', 3, 100),
    webhook('pods.lws-temporal.x-k8s.io', 'CREATE', 0.2, 10),
  );
  const cases: [string, string, ReturnType<typeof podCreatesBetween>][] = [
    [
      '40 pods created, bindings and reads left out; the webhooks over the creates',
      page(
        request('POST', 'pods', '', 3, 50),
        request('POST', 'pods', 'binding', 2.5, 50),
        request('GET', 'pods', '', 9, 300),
        webhook('pods.lws-temporal.x-k8s.io', 'CREATE', 0.6, 50),
        webhook('pods.lws-temporal.x-k8s.io', 'UPDATE', 5, 10),
      ),
      { count: 40, meanMs: 50, webhookMsPerCreate: 10 },
    ],
    [
      "a webhook first called in the window counts from 0 (upstream's, once its configuration is in)",
      page(
        request('POST', 'pods', '', 2, 20),
        webhook('pods.lws-temporal.x-k8s.io', 'CREATE', 0.2, 10),
        webhook('mpod.kb.io', 'CREATE', 0.04, 10),
      ),
      { count: 10, meanMs: 100, webhookMsPerCreate: 4 },
    ],
    ['no pod created: nothing to tell', before, undefined],
  ];
  for (const [what, after, expected] of cases) {
    it(what, () => assert.deepEqual(podCreatesBetween(before, after), expected));
  }

  it('reads as count x mean (webhooks), a dash when none', () => {
    assert.equal(formatPodCreates({ count: 40, meanMs: 50, webhookMsPerCreate: 10 }), '40 x 50 ms (webhooks 10 ms)');
    assert.equal(formatPodCreates(undefined), '-');
  });
});
