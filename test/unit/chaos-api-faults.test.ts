import assert from 'node:assert/strict';
import {
  API_FAULT_KINDS,
  apiCampaignMarkdown,
  apiFaultRows,
  FAULT_RULES,
  parallelBoundMs,
  planApiTrials,
  RETRY_BUDGET_MS,
  SEQUENTIAL_TEARDOWN_CALLS,
  type ApiTrialResult,
} from '../../tools/chaos/api-campaign.js';
import {
  chooseFault,
  describeRequest,
  failureStatus,
  ruleMatches,
  WRITE_VERBS,
  type ApiRequest,
  type FaultRule,
} from '../../tools/chaos/api-faults.js';
import { PARALLEL_BOUND_MS } from '../../tools/chaos/campaign.js';
import { CHAOS_LIFECYCLES } from '../../tools/chaos/plan.js';
import { SeededRandom } from '../../tools/chaos/random.js';

describe('chaos API faults: describeRequest', () => {
  const lws = '/apis/leaderworkerset.x-k8s.io/v1/namespaces/ns/leaderworkersets';
  const cases: [string, string, Partial<ApiRequest>][] = [
    ['GET', '/api/v1/namespaces/ns/pods?labelSelector=a', { verb: 'list', resource: 'pods', namespace: 'ns' }],
    ['GET', '/api/v1/namespaces/ns/pods/p-0', { verb: 'get', resource: 'pods', namespace: 'ns', name: 'p-0' }],
    [
      'GET',
      '/api/v1/namespaces/ns/pods?watch=true&fieldSelector=metadata.name%3Dp',
      { verb: 'watch', resource: 'pods', namespace: 'ns' },
    ],
    ['GET', '/api/v1/watch/namespaces/ns/pods', { verb: 'watch', resource: 'pods', namespace: 'ns' }],
    ['GET', '/api/v1/pods?labelSelector=a', { verb: 'list', resource: 'pods' }],
    ['GET', '/apis/apps/v1/statefulsets?watch=1', { verb: 'watch', resource: 'statefulsets' }],
    ['POST', '/apis/apps/v1/namespaces/ns/statefulsets', { verb: 'create', resource: 'statefulsets', namespace: 'ns' }],
    ['PUT', '/apis/apps/v1/namespaces/ns/statefulsets/s', { verb: 'update', resource: 'statefulsets', name: 's' }],
    ['PATCH', `${lws}/l/status`, { verb: 'patch', resource: 'leaderworkersets', name: 'l', subresource: 'status' }],
    ['DELETE', '/api/v1/namespaces/ns/pods/p', { verb: 'delete', resource: 'pods', name: 'p' }],
    ['DELETE', '/api/v1/namespaces/ns/pods', { verb: 'deletecollection', resource: 'pods' }],
    ['GET', '/api/v1/namespaces', { verb: 'list', resource: 'namespaces' }],
    ['GET', '/api/v1/namespaces/ns', { verb: 'get', resource: 'namespaces', name: 'ns' }],
    ['PUT', '/api/v1/namespaces/ns/finalize', { verb: 'update', resource: 'namespaces', subresource: 'finalize' }],
    ['get', '/api/v1/nodes/n', { method: 'GET', verb: 'get', resource: 'nodes', name: 'n' }],
  ];
  for (const [method, url, want] of cases) {
    it(`${method} ${url}`, () => {
      const got = describeRequest(method, url);
      for (const [key, value] of Object.entries(want)) assert.equal(got[key as keyof ApiRequest], value, key);
      assert.equal(got.path, url.split('?')[0]);
    });
  }

  for (const url of ['/healthz', '/readyz?verbose', '/version', '/api', '/api/v1', '/apis/apps/v1', '/openapi/v3']) {
    it(`${url} is no resource request`, () => {
      assert.equal(describeRequest('GET', url).verb, undefined);
    });
  }
});

describe('chaos API faults: which rules match', () => {
  const get = describeRequest('GET', '/api/v1/namespaces/ns/pods/p');
  const watch = describeRequest('GET', '/api/v1/namespaces/ns/pods?watch=true');
  const post = describeRequest('POST', '/apis/apps/v1/namespaces/ns/statefulsets');
  const health = describeRequest('GET', '/healthz');
  const cases: [string, FaultRule, ApiRequest, boolean][] = [
    ['any verb: a get', { kind: '429', fraction: 1 }, get, true],
    ['any verb: no resource request', { kind: '429', fraction: 1 }, health, false],
    ['only writes: a get', { kind: '5xx', fraction: 1, verbs: WRITE_VERBS }, get, false],
    ['only writes: a create', { kind: '5xx', fraction: 1, verbs: WRITE_VERBS }, post, true],
    ['only watches: a watch', { kind: 'slow', fraction: 1, verbs: ['watch'] }, watch, true],
    ['a watch-cut: a get', { kind: 'watch-cut', fraction: 1 }, get, false],
    ['a watch-cut: a watch', { kind: 'watch-cut', fraction: 1 }, watch, true],
    ['by path: another resource', { kind: 'reset', fraction: 1, path: /statefulsets/ }, get, false],
    ['by path: that resource', { kind: 'reset', fraction: 1, path: /statefulsets/ }, post, true],
  ];
  for (const [what, rule, request, want] of cases) {
    it(what, () => assert.equal(ruleMatches(rule, request), want));
  }
});

describe('chaos API faults: chooseFault', () => {
  const get = describeRequest('GET', '/api/v1/namespaces/ns/pods/p');
  const draw = (rules: FaultRule[], n: number, seed = 1) => {
    const random = new SeededRandom(seed);
    return Array.from({ length: n }, () => chooseFault(rules, get, random));
  };

  it('hits about the fraction asked for, never at 0, always at 1', () => {
    assert.equal(draw([{ kind: '429', fraction: 0 }], 200).filter(Boolean).length, 0);
    assert.equal(draw([{ kind: '429', fraction: 1 }], 200).filter(Boolean).length, 200);
    const hits = draw([{ kind: '429', fraction: 0.3 }], 2000).filter(Boolean).length;
    assert.ok(hits > 500 && hits < 700, `${hits} of 2000`);
  });

  it('decides the same for the same seed and requests', () => {
    const rules: FaultRule[] = [{ kind: '5xx', fraction: 0.5 }];
    assert.deepEqual(draw(rules, 50, 4), draw(rules, 50, 4));
    assert.notDeepEqual(draw(rules, 50, 4), draw(rules, 50, 5));
  });

  it('lets the first rule that hits decide', () => {
    const got = draw(
      [
        { kind: '429', fraction: 1, verbs: WRITE_VERBS },
        { kind: 'slow', fraction: 1, latencyMs: [5, 5] },
        { kind: '5xx', fraction: 1 },
      ],
      3,
    );
    assert.deepEqual(got, Array(3).fill({ kind: 'slow', delayMs: 5 }));
  });

  it('draws each action within its rule', () => {
    const rules = (rule: FaultRule) => draw([rule], 300).map((a) => a!);
    assert.ok(rules({ kind: '429', fraction: 1, retryAfterSeconds: 3 }).every((a) => 'retryAfterSeconds' in a));
    const statuses = new Set(rules({ kind: '5xx', fraction: 1 }).map((a) => ('status' in a ? a.status : 0)));
    assert.deepEqual([...statuses].sort(), [500, 503]);
    const delays = rules({ kind: 'slow', fraction: 1, latencyMs: [100, 200] }).map((a) =>
      'delayMs' in a ? a.delayMs : 0,
    );
    assert.ok(Math.min(...delays) >= 100 && Math.max(...delays) <= 200);
    const phases = new Set(rules({ kind: 'reset', fraction: 1 }).map((a) => ('when' in a ? a.when : '')));
    assert.deepEqual([...phases].sort(), ['after-upstream', 'before-upstream']);
    const pinned = new Set(rules({ kind: 'reset', fraction: 1, when: 'after-upstream' }).map((a) => JSON.stringify(a)));
    assert.deepEqual([...pinned], [JSON.stringify({ kind: 'reset', when: 'after-upstream' })]);
  });

  it('answers with a Status the clients read', () => {
    assert.deepEqual(failureStatus(429, 'slow down', 2), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'slow down',
      reason: 'TooManyRequests',
      details: { retryAfterSeconds: 2 },
      code: 429,
    });
    assert.equal(failureStatus(503, 'x').reason, 'ServiceUnavailable');
    assert.equal(failureStatus(500, 'x').details, undefined);
  });
});

describe('chaos API campaign: the plan', () => {
  const opts = { seed: 3, trialsPerFault: 2, faults: API_FAULT_KINDS, replicas: 3, graceSeconds: 10 };

  it('is the same plan for the same seed', () => {
    assert.deepEqual(planApiTrials(opts), planApiTrials(opts));
    assert.notDeepEqual(planApiTrials(opts), planApiTrials({ ...opts, seed: 4 }));
  });

  it('runs each fault kind its trials, under both policies from two trials on', () => {
    const plans = planApiTrials(opts);
    assert.equal(plans.length, API_FAULT_KINDS.length * 2);
    assert.deepEqual(
      plans.map((p) => p.index),
      plans.map((_, i) => i),
    );
    for (const fault of API_FAULT_KINDS) {
      const of = plans.filter((p) => p.fault === fault);
      assert.equal(of.length, 2, fault);
      assert.deepEqual(new Set(of.map((p) => p.policy)), new Set(['Sequential', 'Parallel']), fault);
    }
  });

  it('covers every lifecycle under both policies within 8 trials of a kind, and every lifecycle with one trial each', () => {
    for (const plan of [planApiTrials({ ...opts, trialsPerFault: 8 })]) {
      for (const fault of API_FAULT_KINDS) {
        const combos = new Set(plan.filter((p) => p.fault === fault).map((p) => `${p.lifecycle}/${p.policy}`));
        assert.equal(combos.size, CHAOS_LIFECYCLES.length * 2, fault);
      }
    }
    const one = planApiTrials({ ...opts, trialsPerFault: 1 });
    assert.equal(new Set(one.map((p) => p.lifecycle)).size, CHAOS_LIFECYCLES.length);
    assert.equal(new Set(one.map((p) => `${p.lifecycle}/${p.policy}`)).size, API_FAULT_KINDS.length);
  });

  it('draws only the fault kinds asked for, and instants within range', () => {
    const plans = planApiTrials({ ...opts, faults: ['etcd-restart'], trialsPerFault: 200 });
    assert.deepEqual(new Set(plans.map((p) => p.fault)), new Set(['etcd-restart']));
    const early = plans.filter((p) => p.faultDelayMs <= 300).length;
    assert.ok(early > 70 && early < 130, `${early} of 200 early`);
    assert.ok(plans.every((p) => p.faultDelayMs <= 10_000 && p.downMs >= 500 && p.downMs <= 3000));
    assert.ok(plans.every((p) => p.groupIndex >= 0 && p.groupIndex < 3));
  });
});

describe('chaos API campaign: the Parallel bound per fault', () => {
  const window = { at: 1000, recoveredAt: 8000 };
  const slowest = FAULT_RULES.slow[0]!.latencyMs![1];
  const cases: [(typeof API_FAULT_KINDS)[number], number][] = [
    ['watch-cut', PARALLEL_BOUND_MS],
    ['slow', PARALLEL_BOUND_MS + SEQUENTIAL_TEARDOWN_CALLS * slowest],
    ['429', PARALLEL_BOUND_MS + 4 * 1000], // four Retry-After: 1 in a row
    ['5xx', PARALLEL_BOUND_MS + RETRY_BUDGET_MS],
    ['reset', PARALLEL_BOUND_MS + RETRY_BUDGET_MS],
    ['apiserver-restart', PARALLEL_BOUND_MS + 7000],
    ['etcd-restart', PARALLEL_BOUND_MS + 7000],
  ];
  for (const [fault, want] of cases) {
    it(`${fault}: ${want} ms`, () => assert.equal(parallelBoundMs(fault, window), want));
  }
});

describe('chaos API campaign: the report', () => {
  const plan = (index: number, fault: (typeof API_FAULT_KINDS)[number]) => ({
    index,
    fault,
    lifecycle: 'rebuild' as const,
    policy: 'Parallel' as const,
    groupIndex: 0,
    faultDelayMs: 0,
    downMs: 500,
  });
  const trials: ApiTrialResult[] = [
    {
      plan: plan(0, '429'),
      settleMs: 4000,
      parallelLagMs: 300,
      injected: 10,
      retries: { 'worker/429': 6 },
      violations: [],
    },
    {
      plan: plan(1, '429'),
      settleMs: 6000,
      injected: 5,
      retries: { 'worker/429': 2, 'trigger/watch-restart': 1 },
      violations: ['group 0: its old leader was not seen terminating and gone'],
    },
    { plan: plan(2, 'etcd-restart'), settleMs: 9000, outageMs: 5000, retries: {}, violations: [] },
  ];

  it('sums each fault kind: trials, failures, settle times, faults injected, retries by process and reason', () => {
    assert.deepEqual(apiFaultRows(trials), [
      {
        fault: '429',
        trials: 2,
        failed: 1,
        settle: '4.0s / 6.0s',
        parallelLag: '300 ms / 300 ms',
        outage: '-',
        injected: '15',
        workerRetries: '429 8',
        triggerRetries: 'watch-restart 1',
      },
      {
        fault: 'etcd-restart',
        trials: 1,
        failed: 0,
        settle: '9.0s / 9.0s',
        parallelLag: '-',
        outage: '5.0s / 5.0s',
        injected: '-',
        workerRetries: '0',
        triggerRetries: '0',
      },
    ]);
  });

  it('lists the failed trials under the table', () => {
    const text = apiCampaignMarkdown({
      seed: 1,
      trialsPerFault: 2,
      temporal: 'dev-server',
      graceSeconds: 10,
      replicas: 3,
      size: 3,
      date: '2026-12-02T00:00:00.000Z',
      durationMs: 60_000,
      trials,
    });
    assert.match(text, /--seed 1 --trials-per-fault 2 --faults 429,etcd-restart/);
    assert.match(text, /\| 429 \| 2 \| 1 \| 4\.0s \/ 6\.0s \|/);
    assert.match(text, /- 1: rebuild \(Parallel\) under 429: group 0: its old leader/);
  });
});
