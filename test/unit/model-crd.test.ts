// The CRD and the TypeScript model state the same API twice; these checks keep the two from drifting apart.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'mocha';
import yaml from 'js-yaml';
import * as m from '../../src/model/index.js';

interface Schema {
  type?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  required?: string[];
  properties?: Record<string, Schema>;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-validations'?: Array<{ rule: string; message?: string; fieldPath?: string }>;
}

interface Crd {
  metadata: { name: string };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames: string[] };
    versions: Array<{
      name: string;
      served: boolean;
      storage: boolean;
      subresources: { status: object; scale: Record<string, string> };
      additionalPrinterColumns: Array<{ name: string; jsonPath: string }>;
      schema: { openAPIV3Schema: Schema };
    }>;
  };
}

const crd = yaml.load(
  readFileSync(new URL('../../deploy/crd/leaderworkersets.leaderworkerset.x-k8s.io.yaml', import.meta.url), 'utf8'),
) as Crd;
const version = crd.spec.versions[0]!;
const root = version.schema.openAPIV3Schema;

/** The schema at a dotted path below the root, e.g. 'spec.leaderWorkerTemplate.size'. */
function at(path: string): Schema {
  let s: Schema = root;
  for (const key of path.split('.')) {
    const next = s.properties?.[key];
    assert.ok(next, `no schema at ${path} (missing ${key})`);
    s = next;
  }
  return s;
}

describe('deploy/crd', () => {
  it('names the API as the model does', () => {
    assert.equal(crd.metadata.name, m.CRD_NAME);
    assert.equal(crd.spec.group, m.API_GROUP);
    assert.equal(crd.spec.scope, 'Namespaced');
    assert.deepEqual(crd.spec.names, {
      kind: m.KIND,
      listKind: m.LIST_KIND,
      plural: m.PLURAL,
      singular: m.SINGULAR,
      shortNames: [m.SHORT_NAME],
    });
    assert.equal(crd.spec.versions.length, 1);
    assert.deepEqual([version.name, version.served, version.storage], [m.API_VERSION, true, true]);
  });

  it('has the status and scale subresources', () => {
    assert.deepEqual(version.subresources.status, {});
    assert.deepEqual(version.subresources.scale, {
      specReplicasPath: '.spec.replicas',
      statusReplicasPath: '.status.replicas',
      labelSelectorPath: '.status.hpaPodSelector',
    });
  });

  it("prints upstream's columns Ready, Desired, Up-to-date, Age, and the policy only with -o wide", () => {
    assert.deepEqual(
      version.additionalPrinterColumns.map((c) => [c.name, c.jsonPath, (c as { priority?: number }).priority ?? 0]),
      [
        ['Ready', '.status.readyReplicas', 0],
        ['Desired', '.spec.replicas', 0],
        ['Up-to-date', '.status.updatedReplicas', 0],
        ['Age', '.metadata.creationTimestamp', 0],
        ['Policy', '.spec.podTerminationPolicy', 1],
      ],
    );
  });

  const enums: Array<[string, readonly string[], unknown]> = [
    ['spec.podTerminationPolicy', m.POD_TERMINATION_POLICY_VALUES, m.DEFAULT_POD_TERMINATION_POLICY],
    ['spec.startupPolicy', m.STARTUP_POLICIES, m.DEFAULT_STARTUP_POLICY],
    ['spec.leaderWorkerTemplate.restartPolicy', m.RESTART_POLICIES, m.DEFAULT_RESTART_POLICY],
    ['spec.rolloutStrategy.type', m.ROLLOUT_STRATEGY_TYPES, m.DEFAULT_ROLLOUT_STRATEGY_TYPE],
    ['spec.networkConfig.subdomainPolicy', m.SUBDOMAIN_POLICIES, m.DEFAULT_SUBDOMAIN_POLICY],
  ];
  for (const [path, values, dflt] of enums) {
    it(`${path}: enum and default as in the model`, () => {
      assert.equal(at(path).type, 'string');
      assert.deepEqual(at(path).enum, [...values]);
      assert.equal(at(path).default, dflt);
    });
  }

  const numbers: Array<[string, unknown, number | undefined, number | undefined]> = [
    ['spec.replicas', m.DEFAULT_REPLICAS, m.MIN_REPLICAS, m.MAX_REPLICAS],
    ['spec.leaderWorkerTemplate.size', m.DEFAULT_SIZE, m.MIN_SIZE, undefined],
    ['spec.rolloutStrategy.rollingUpdateConfiguration.partition', m.DEFAULT_PARTITION, m.MIN_PARTITION, undefined],
    ['spec.forceDeleteOnNodeNotReadySeconds', undefined, 0, undefined],
  ];
  for (const [path, dflt, min, max] of numbers) {
    it(`${path}: integer, default and bounds as in the model`, () => {
      const s = at(path);
      assert.deepEqual([s.type, s.default, s.minimum, s.maximum], ['integer', dflt, min, max]);
    });
  }

  for (const [path, dflt] of [
    ['spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable', m.DEFAULT_MAX_UNAVAILABLE],
    ['spec.rolloutStrategy.rollingUpdateConfiguration.maxSurge', m.DEFAULT_MAX_SURGE],
  ] as const) {
    it(`${path}: int-or-string, default as in the model, CEL check with the model's pattern and message`, () => {
      const s = at(path);
      assert.equal(s['x-kubernetes-int-or-string'], true);
      assert.equal(s.default, dflt);
      const rules = s['x-kubernetes-validations'] ?? [];
      assert.equal(rules.length, 1);
      assert.ok(rules[0]!.rule.includes(`'${m.PERCENT_PATTERN}'`), rules[0]!.rule);
      const field = path.split('.').pop() as 'maxUnavailable' | 'maxSurge';
      assert.equal(rules[0]!.message, m.CEL_MESSAGES[field]);
    });
  }

  it('rejects maxUnavailable and maxSurge both zero once scaled, with the model message, at maxUnavailable', () => {
    const rules = (at('spec')['x-kubernetes-validations'] ?? []).filter(
      (r) => r.message === m.CEL_MESSAGES.maxUnavailableAndMaxSurgeZero,
    );
    assert.equal(rules.length, 1);
    assert.equal(rules[0]!.fieldPath, '.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable');
    assert.ok(rules[0]!.rule.includes('self.replicas == 0'), 'no rule for 0 replicas, as upstream');
  });

  it('has the subgroup rules with the model messages', () => {
    const lwt = (at('spec.leaderWorkerTemplate')['x-kubernetes-validations'] ?? []).map((r) => r.message);
    for (const key of [
      'subGroupSizeAboveSize',
      'subGroupSizeNotDivisor',
      'subGroupSizeLeaderExcluded',
      'subGroupPolicyAdded',
      'subGroupPolicyRemoved',
    ] as const) {
      assert.ok(lwt.includes(m.CEL_MESSAGES[key]), key);
    }
    const size = at('spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize')['x-kubernetes-validations'] ?? [];
    assert.deepEqual(
      size.map((r) => [r.rule, r.message]),
      [['self == oldSelf', m.CEL_MESSAGES.subGroupSizeImmutable]],
    );
    assert.ok((root['x-kubernetes-validations'] ?? []).some((r) => r.message === m.CEL_MESSAGES.nameTooLong));
  });

  it("KEP-820's fields: no default, maxGroupRestarts at least 0 and only with the model's restart policies", () => {
    const max = at('spec.leaderWorkerTemplate.maxGroupRestarts');
    assert.deepEqual([max.type, max.default, max.minimum], ['integer', undefined, m.MIN_MAX_GROUP_RESTARTS]);
    const publish = at('spec.networkConfig.publishNotReadyAddresses');
    assert.deepEqual([publish.type, publish.default], ['boolean', undefined]);
    const rules = (at('spec.leaderWorkerTemplate')['x-kubernetes-validations'] ?? []).filter(
      (r) => r.message === m.CEL_MESSAGES.maxGroupRestartsPolicy,
    );
    assert.equal(rules.length, 1);
    assert.equal(rules[0]!.fieldPath, '.maxGroupRestarts');
    const allowed = [...rules[0]!.rule.matchAll(/'([A-Za-z]+)'/g)].map((x) => x[1]);
    assert.deepEqual(allowed, [...m.MAX_GROUP_RESTARTS_POLICIES]);
  });

  it('groupRestartBackoff (ours): no stored default, bounds and rule as the model has them', () => {
    const path = 'spec.leaderWorkerTemplate.groupRestartBackoff';
    assert.equal(at(path).default, undefined);
    const bounds = (field: string) => {
      const s = at(`${path}.${field}`);
      return [s.type, s.default, s.minimum, s.maximum];
    };
    assert.deepEqual(bounds('initialIntervalSeconds'), ['integer', undefined, 0, m.MAX_BACKOFF_INTERVAL_SECONDS]);
    assert.deepEqual(bounds('maximumIntervalSeconds'), ['integer', undefined, 0, m.MAX_BACKOFF_INTERVAL_SECONDS]);
    assert.deepEqual(bounds('resetAfterSeconds'), ['integer', undefined, 1, m.MAX_BACKOFF_RESET_SECONDS]);
    const rules = at(path)['x-kubernetes-validations'] ?? [];
    assert.deepEqual(
      rules.map((r) => [r.message, r.fieldPath]),
      [[m.CEL_MESSAGES.backoffMaximumBelowInitial, '.maximumIntervalSeconds']],
    );
    assert.match(at(path).description ?? '', /extension/);
  });

  it('limits the total pod count and the name as the model does', () => {
    const specRules = at('spec')['x-kubernetes-validations'] ?? [];
    assert.equal(specRules[0]?.message, m.CEL_MESSAGES.totalPods);
    assert.ok(specRules[0]?.rule.includes(String(m.MAX_TOTAL_PODS)));
    const rootRules = root['x-kubernetes-validations'] ?? [];
    assert.equal(rootRules[0]?.message, m.CEL_MESSAGES.name);
    assert.ok(rootRules[0]?.rule.includes(`'${m.NAME_PATTERN}'`));
    assert.ok(rootRules[0]?.rule.includes(`size() <= ${m.MAX_NAME_LENGTH}`));
  });

  it('requires spec, leaderWorkerTemplate and workerTemplate', () => {
    assert.deepEqual(root.required, ['spec']);
    assert.deepEqual(at('spec').required, ['leaderWorkerTemplate']);
    assert.deepEqual(at('spec.leaderWorkerTemplate').required, ['workerTemplate']);
  });

  it('gives the pod templates the Kubernetes schema (containers required), never unknown fields', () => {
    for (const path of ['spec.leaderWorkerTemplate.leaderTemplate', 'spec.leaderWorkerTemplate.workerTemplate']) {
      assert.equal(at(path).type, 'object');
      assert.equal(at(path)['x-kubernetes-preserve-unknown-fields'], undefined);
      assert.deepEqual(at(`${path}.spec`).required, ['containers']);
    }
  });

  it('defaults the nested objects to {} so that their fields get defaults', () => {
    for (const path of [
      'spec.rolloutStrategy',
      'spec.rolloutStrategy.rollingUpdateConfiguration',
      'spec.networkConfig',
    ]) {
      assert.deepEqual(at(path).default, {});
    }
  });

  it('describes every spec field the model has, and no other', () => {
    const specFields: Array<keyof m.LeaderWorkerSetSpec> = [
      'replicas',
      'leaderWorkerTemplate',
      'startupPolicy',
      'rolloutStrategy',
      'networkConfig',
      'podTerminationPolicy',
      'forceDeleteOnNodeNotReadySeconds',
    ];
    assert.deepEqual(Object.keys(at('spec').properties ?? {}).sort(), [...specFields].sort());
    const statusFields: Array<keyof m.LeaderWorkerSetStatus> = [
      'replicas',
      'readyReplicas',
      'updatedReplicas',
      'hpaPodSelector',
      'observedGeneration',
      'conditions',
    ];
    assert.deepEqual(Object.keys(at('status').properties ?? {}).sort(), [...statusFields].sort());
  });

  it('the admission policy checks the annotation rule with the model message', () => {
    const docs = yaml.loadAll(
      readFileSync(new URL('../../deploy/crd/leaderworkersets-admission-policy.yaml', import.meta.url), 'utf8'),
    ) as Array<{
      kind: string;
      spec: { validations?: Array<{ expression: string; message: string }>; policyName?: string };
    }>;
    const policy = docs.find((d) => d.kind === 'ValidatingAdmissionPolicy')!;
    assert.deepEqual(
      policy.spec.validations?.map((v) => v.message),
      [m.CEL_MESSAGES.subGroupExclusiveWithoutPolicy],
    );
    assert.ok(policy.spec.validations![0]!.expression.includes(m.ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY));
    assert.ok(docs.some((d) => d.kind === 'ValidatingAdmissionPolicyBinding'));
  });
});
