import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'mocha';
import yaml from 'js-yaml';
import {
  CEL_MESSAGES,
  validateLeaderWorkerSet,
  validateLeaderWorkerSetUpdate,
  type FieldError,
} from '../../src/model/index.js';

const workerTemplate = { spec: { containers: [{ name: 'w', image: 'nginx' }] } };

/** A valid LWS with `spec` fields merged in; `undefined` members are dropped, as in a manifest. */
function lws(spec: Record<string, unknown> = {}, lwt: Record<string, unknown> = {}, name = 'demo'): unknown {
  return JSON.parse(
    JSON.stringify({
      apiVersion: 'leaderworkerset.x-k8s.io/v1',
      kind: 'LeaderWorkerSet',
      metadata: { name, namespace: 'default' },
      spec: { leaderWorkerTemplate: { workerTemplate, ...lwt }, ...spec },
    }),
  );
}

const RUC = 'spec.rolloutStrategy.rollingUpdateConfiguration';

describe('model/validate', () => {
  const valid: Array<[string, unknown]> = [
    ['a minimal object', lws()],
    ['replicas 0', lws({ replicas: 0 })],
    ["upstream's deprecated restart policy Default", lws({}, { restartPolicy: 'Default' })],
    [
      'maxUnavailable 0 with 0 replicas (nothing to roll)',
      lws({ replicas: 0, rolloutStrategy: { rollingUpdateConfiguration: { maxUnavailable: 0 } } }),
    ],
    [
      'maxUnavailable 10% of 10 replicas (1 group)',
      lws({ replicas: 10, rolloutStrategy: { rollingUpdateConfiguration: { maxUnavailable: '10%' } } }),
    ],
    ['subgroups dividing size', lws({}, { size: 4, subGroupPolicy: { subGroupSize: 2 } })],
    [
      'subgroups dividing size - 1 (the leader is the extra pod)',
      lws({}, { size: 5, subGroupPolicy: { subGroupSize: 2 } }),
    ],
    [
      'LeaderExcluded subgroups dividing size - 1',
      lws({}, { size: 5, subGroupPolicy: { subGroupPolicyType: 'LeaderExcluded', subGroupSize: 4 } }),
    ],
    ['one subgroup as large as the group', lws({}, { size: 4, subGroupPolicy: { subGroupSize: 4 } })],
    [
      'a name exactly as long as allowed for 2 groups of 4 (50 characters)',
      lws({ replicas: 2 }, { size: 4 }, 'a'.repeat(50)),
    ],
    ['a 52-character name for groups of 1', lws({ replicas: 9 }, { size: 1 }, 'a'.repeat(52))],
    [
      'volume claims and their retention',
      lws(
        {},
        {
          volumeClaimTemplates: [
            {
              metadata: { name: 'cache' },
              spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
            },
          ],
          persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
        },
      ),
    ],
    ['replicas at the maximum', lws({ replicas: 1_000_000 })],
    ['size 1 and a leader template', lws({}, { size: 1, leaderTemplate: workerTemplate })],
    [
      'every enum value set',
      lws(
        {
          startupPolicy: 'LeaderReady',
          podTerminationPolicy: 'Parallel',
          networkConfig: { subdomainPolicy: 'UniquePerReplica' },
        },
        { restartPolicy: 'RecreateGroupAfterStart' },
      ),
    ],
    [
      'percentages',
      lws({
        rolloutStrategy: {
          type: 'RollingUpdate',
          rollingUpdateConfiguration: { maxUnavailable: '100%', maxSurge: '25%', partition: 1 },
        },
      }),
    ],
    [
      'maxUnavailable 0 with a surge',
      lws({ rolloutStrategy: { rollingUpdateConfiguration: { maxUnavailable: 0, maxSurge: 1 } } }),
    ],
    ['null fields (defaulted by the API server)', lws({ replicas: null, podTerminationPolicy: null })],
    ['maxGroupRestarts with restartPolicy unset (RecreateGroupOnPodRestart)', lws({}, { maxGroupRestarts: 3 })],
    [
      'maxGroupRestarts 0 with RecreateGroupOnPodRestart',
      lws({}, { restartPolicy: 'RecreateGroupOnPodRestart', maxGroupRestarts: 0 }),
    ],
    [
      'maxGroupRestarts with RecreateGroupAfterStart',
      lws({}, { restartPolicy: 'RecreateGroupAfterStart', maxGroupRestarts: 5 }),
    ],
    [
      'maxGroupRestarts null (unset) with restartPolicy None',
      lws({}, { restartPolicy: 'None', maxGroupRestarts: null }),
    ],
    ['publishNotReadyAddresses false', lws({ networkConfig: { publishNotReadyAddresses: false } })],
    [
      'groupRestartBackoff with every field',
      lws({}, { groupRestartBackoff: { initialIntervalSeconds: 5, maximumIntervalSeconds: 5, resetAfterSeconds: 60 } }),
    ],
    [
      'groupRestartBackoff off (initialIntervalSeconds 0)',
      lws({}, { groupRestartBackoff: { initialIntervalSeconds: 0 } }),
    ],
    ['groupRestartBackoff empty (every default)', lws({}, { groupRestartBackoff: {} })],
    ['forceDeleteOnNodeNotReadySeconds 0', lws({ forceDeleteOnNodeNotReadySeconds: 0 })],
    [
      'publishNotReadyAddresses true under UniquePerReplica',
      lws({ networkConfig: { subdomainPolicy: 'UniquePerReplica', publishNotReadyAddresses: true } }),
    ],
    [
      'no name yet (generateName)',
      { metadata: { generateName: 'demo-' }, spec: { leaderWorkerTemplate: { workerTemplate } } },
    ],
  ];
  for (const [name, obj] of valid) {
    it(`accepts ${name}`, () => assert.deepEqual(validateLeaderWorkerSet(obj), []));
  }

  for (const file of ['leaderworkerset-sequential-termination.yaml', 'leaderworkerset-parallel-termination.yaml']) {
    it(`accepts examples/${file}`, () => {
      const obj = yaml.load(readFileSync(new URL(`../../examples/${file}`, import.meta.url), 'utf8'));
      assert.deepEqual(validateLeaderWorkerSet(obj), []);
    });
  }

  // [case, object, field, exact message]
  const invalid: Array<[string, unknown, string, string]> = [
    [
      'an unknown termination policy',
      lws({ podTerminationPolicy: 'Sideways' }),
      'spec.podTerminationPolicy',
      'spec.podTerminationPolicy: Unsupported value: "Sideways": supported values: "Default", "Sequential", "Parallel"',
    ],
    [
      'a negative forceDeleteOnNodeNotReadySeconds',
      lws({ forceDeleteOnNodeNotReadySeconds: -1 }),
      'spec.forceDeleteOnNodeNotReadySeconds',
      'spec.forceDeleteOnNodeNotReadySeconds: Invalid value: -1: spec.forceDeleteOnNodeNotReadySeconds in body should be greater than or equal to 0',
    ],
    [
      'size 0',
      lws({}, { size: 0 }),
      'spec.leaderWorkerTemplate.size',
      'spec.leaderWorkerTemplate.size: Invalid value: 0: spec.leaderWorkerTemplate.size in body should be greater than or equal to 1',
    ],
    [
      'replicas -1',
      lws({ replicas: -1 }),
      'spec.replicas',
      'spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0',
    ],
    [
      'replicas above the maximum',
      lws({ replicas: 1_000_001 }),
      'spec.replicas',
      'spec.replicas: Invalid value: 1000001: spec.replicas in body should be less than or equal to 1000000',
    ],
    [
      'replicas as a string',
      lws({ replicas: 'three' }),
      'spec.replicas',
      'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
    ],
    [
      'a fractional size',
      lws({}, { size: 1.5 }),
      'spec.leaderWorkerTemplate.size',
      'spec.leaderWorkerTemplate.size: Invalid value: "number": spec.leaderWorkerTemplate.size in body must be of type integer: "number"',
    ],
    [
      'a missing workerTemplate',
      { metadata: { name: 'demo' }, spec: { leaderWorkerTemplate: { size: 2 } } },
      'spec.leaderWorkerTemplate.workerTemplate',
      'spec.leaderWorkerTemplate.workerTemplate: Required value',
    ],
    [
      'a missing leaderWorkerTemplate',
      { metadata: { name: 'demo' }, spec: { replicas: 1 } },
      'spec.leaderWorkerTemplate',
      'spec.leaderWorkerTemplate: Required value',
    ],
    ['a missing spec', { metadata: { name: 'demo' } }, 'spec', 'spec: Required value'],
    [
      'a workerTemplate that is not an object',
      lws({}, { workerTemplate: 'nginx' }),
      'spec.leaderWorkerTemplate.workerTemplate',
      'spec.leaderWorkerTemplate.workerTemplate: Invalid value: "string": spec.leaderWorkerTemplate.workerTemplate in body must be of type object: "string"',
    ],
    [
      'an unknown restart policy',
      lws({}, { restartPolicy: 'Always' }),
      'spec.leaderWorkerTemplate.restartPolicy',
      'spec.leaderWorkerTemplate.restartPolicy: Unsupported value: "Always": supported values: "RecreateGroupOnPodRestart", "None", "RecreateGroupAfterStart", "Default"',
    ],
    [
      'an unknown startup policy',
      lws({ startupPolicy: 'Whenever' }),
      'spec.startupPolicy',
      'spec.startupPolicy: Unsupported value: "Whenever": supported values: "LeaderCreated", "LeaderReady"',
    ],
    [
      'an unknown rollout type',
      lws({ rolloutStrategy: { type: 'Recreate' } }),
      'spec.rolloutStrategy.type',
      'spec.rolloutStrategy.type: Unsupported value: "Recreate": supported values: "RollingUpdate"',
    ],
    [
      'an unknown subdomain policy',
      lws({ networkConfig: { subdomainPolicy: 'Mine' } }),
      'spec.networkConfig.subdomainPolicy',
      'spec.networkConfig.subdomainPolicy: Unsupported value: "Mine": supported values: "Shared", "UniquePerReplica"',
    ],
    [
      'maxGroupRestarts with restartPolicy None',
      lws({}, { restartPolicy: 'None', maxGroupRestarts: 3 }),
      'spec.leaderWorkerTemplate.maxGroupRestarts',
      `spec.leaderWorkerTemplate.maxGroupRestarts: Invalid value: 3: ${CEL_MESSAGES.maxGroupRestartsPolicy}`,
    ],
    [
      'maxGroupRestarts 0 with restartPolicy Default (None)',
      lws({}, { restartPolicy: 'Default', maxGroupRestarts: 0 }),
      'spec.leaderWorkerTemplate.maxGroupRestarts',
      `spec.leaderWorkerTemplate.maxGroupRestarts: Invalid value: 0: ${CEL_MESSAGES.maxGroupRestartsPolicy}`,
    ],
    [
      'groupRestartBackoff with its maximum below its initial interval',
      lws({}, { groupRestartBackoff: { initialIntervalSeconds: 60, maximumIntervalSeconds: 30 } }),
      'spec.leaderWorkerTemplate.groupRestartBackoff.maximumIntervalSeconds',
      `spec.leaderWorkerTemplate.groupRestartBackoff.maximumIntervalSeconds: Invalid value: 30: ${CEL_MESSAGES.backoffMaximumBelowInitial}`,
    ],
    [
      'groupRestartBackoff with resetAfterSeconds 0',
      lws({}, { groupRestartBackoff: { resetAfterSeconds: 0 } }),
      'spec.leaderWorkerTemplate.groupRestartBackoff.resetAfterSeconds',
      'spec.leaderWorkerTemplate.groupRestartBackoff.resetAfterSeconds: Invalid value: 0: spec.leaderWorkerTemplate.groupRestartBackoff.resetAfterSeconds in body should be greater than or equal to 1',
    ],
    [
      'a negative maxGroupRestarts',
      lws({}, { maxGroupRestarts: -1 }),
      'spec.leaderWorkerTemplate.maxGroupRestarts',
      'spec.leaderWorkerTemplate.maxGroupRestarts: Invalid value: -1: spec.leaderWorkerTemplate.maxGroupRestarts in body should be greater than or equal to 0',
    ],
    [
      'maxGroupRestarts as a string',
      lws({}, { maxGroupRestarts: '3' }),
      'spec.leaderWorkerTemplate.maxGroupRestarts',
      'spec.leaderWorkerTemplate.maxGroupRestarts: Invalid value: "string": spec.leaderWorkerTemplate.maxGroupRestarts in body must be of type integer: "string"',
    ],
    [
      'publishNotReadyAddresses as a string',
      lws({ networkConfig: { publishNotReadyAddresses: 'yes' } }),
      'spec.networkConfig.publishNotReadyAddresses',
      'spec.networkConfig.publishNotReadyAddresses: Invalid value: "string": spec.networkConfig.publishNotReadyAddresses in body must be of type boolean: "string"',
    ],
    [
      'a negative partition',
      lws({ rolloutStrategy: { rollingUpdateConfiguration: { partition: -1 } } }),
      `${RUC}.partition`,
      `${RUC}.partition: Invalid value: -1: ${RUC}.partition in body should be greater than or equal to 0`,
    ],
    [
      'maxSurge above 100%',
      lws({ rolloutStrategy: { rollingUpdateConfiguration: { maxSurge: '150%' } } }),
      `${RUC}.maxSurge`,
      `${RUC}.maxSurge: Invalid value: "150%": ${CEL_MESSAGES.maxSurge}`,
    ],
    [
      'maxSurge not a percentage',
      lws({ rolloutStrategy: { rollingUpdateConfiguration: { maxSurge: 'abc' } } }),
      `${RUC}.maxSurge`,
      `${RUC}.maxSurge: Invalid value: "abc": ${CEL_MESSAGES.maxSurge}`,
    ],
    [
      'a negative maxUnavailable',
      lws({ rolloutStrategy: { rollingUpdateConfiguration: { maxUnavailable: -2 } } }),
      `${RUC}.maxUnavailable`,
      `${RUC}.maxUnavailable: Invalid value: -2: ${CEL_MESSAGES.maxUnavailable}`,
    ],
    [
      'maxUnavailable and maxSurge both 0',
      lws({ rolloutStrategy: { rollingUpdateConfiguration: { maxUnavailable: 0, maxSurge: '0%' } } }),
      `${RUC}.maxUnavailable`,
      `${RUC}.maxUnavailable: Invalid value: 0: ${CEL_MESSAGES.maxUnavailableAndMaxSurgeZero}`,
    ],
    [
      'maxUnavailable 0 with the default maxSurge',
      lws({ rolloutStrategy: { rollingUpdateConfiguration: { maxUnavailable: '0%' } } }),
      `${RUC}.maxUnavailable`,
      `${RUC}.maxUnavailable: Invalid value: "0%": ${CEL_MESSAGES.maxUnavailableAndMaxSurgeZero}`,
    ],
    [
      'maxUnavailable 10% of 3 replicas (0 groups) with maxSurge 0',
      lws({ replicas: 3, rolloutStrategy: { rollingUpdateConfiguration: { maxUnavailable: '10%', maxSurge: 0 } } }),
      `${RUC}.maxUnavailable`,
      `${RUC}.maxUnavailable: Invalid value: "10%": ${CEL_MESSAGES.maxUnavailableAndMaxSurgeZero}`,
    ],
    [
      'a subGroupSize larger than size',
      lws({}, { size: 1, subGroupPolicy: { subGroupSize: 2 } }),
      'spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize',
      `spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize: Invalid value: 2: ${CEL_MESSAGES.subGroupSizeAboveSize}`,
    ],
    [
      'a subGroupSize dividing neither size nor size - 1',
      lws({}, { size: 6, subGroupPolicy: { subGroupSize: 4 } }),
      'spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize',
      `spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize: Invalid value: 4: ${CEL_MESSAGES.subGroupSizeNotDivisor}`,
    ],
    [
      'LeaderExcluded with size - 1 not divisible',
      lws({}, { size: 4, subGroupPolicy: { subGroupPolicyType: 'LeaderExcluded', subGroupSize: 2 } }),
      'spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize',
      `spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize: Invalid value: 2: ${CEL_MESSAGES.subGroupSizeLeaderExcluded}`,
    ],
    [
      'a subGroupSize of 0',
      lws({}, { size: 4, subGroupPolicy: { subGroupSize: 0 } }),
      'spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize',
      'spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize: Invalid value: 0: spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize in body should be greater than or equal to 1',
    ],
    [
      'a subgroup policy without subGroupSize',
      lws({}, { size: 4, subGroupPolicy: { subGroupPolicyType: 'LeaderWorker' } }),
      'spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize',
      'spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize: Required value',
    ],
    [
      'an unknown subgroup policy type',
      lws({}, { size: 4, subGroupPolicy: { subGroupPolicyType: 'Leader', subGroupSize: 2 } }),
      'spec.leaderWorkerTemplate.subGroupPolicy.subGroupPolicyType',
      'spec.leaderWorkerTemplate.subGroupPolicy.subGroupPolicyType: Unsupported value: "Leader": supported values: "LeaderWorker", "LeaderExcluded"',
    ],
    [
      'subgroup exclusive topology without a subgroup policy',
      (() => {
        const o = lws() as { metadata: { annotations?: Record<string, string> } };
        o.metadata.annotations = { 'leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology': 'zone' };
        return o;
      })(),
      'metadata.annotations[leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology]',
      `metadata.annotations[leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology]: Invalid value: "zone": ${CEL_MESSAGES.subGroupExclusiveWithoutPolicy}`,
    ],
    [
      'a name one character too long for 2 groups of 4',
      lws({ replicas: 2 }, { size: 4 }, 'a'.repeat(51)),
      'metadata.name',
      `metadata.name: Invalid value: "${'a'.repeat(51)}": ${CEL_MESSAGES.nameTooLong}; here 50`,
    ],
    [
      'a name that fits 10 groups but not 11 with a surge group',
      lws(
        { replicas: 10, rolloutStrategy: { rollingUpdateConfiguration: { maxSurge: 1 } } },
        { size: 2 },
        'a'.repeat(50),
      ),
      'metadata.name',
      `metadata.name: Invalid value: "${'a'.repeat(50)}": ${CEL_MESSAGES.nameTooLong}; here 49`,
    ],
    [
      'more than int32 pods',
      lws({ replicas: 1_000_000 }, { size: 3000 }),
      'spec.replicas',
      `spec.replicas: Invalid value: 1000000: ${CEL_MESSAGES.totalPods}`,
    ],
    [
      'a name that is not a DNS-1035 label',
      lws({}, {}, 'Demo.x'),
      'metadata.name',
      `metadata.name: Invalid value: "Demo.x": ${CEL_MESSAGES.name}`,
    ],
    [
      'a name longer than 63 characters',
      lws({}, {}, 'a'.repeat(64)),
      'metadata.name',
      `metadata.name: Invalid value: "${'a'.repeat(64)}": ${CEL_MESSAGES.name}`,
    ],
  ];
  for (const [name, obj, field, message] of invalid) {
    it(`rejects ${name}, naming ${field}`, () => {
      const errors = validateLeaderWorkerSet(obj);
      assert.deepEqual(
        errors.map((e) => [e.field, e.message]),
        [[field, message]],
      );
    });
  }

  it('reports every error of an object at once, each message starting with its field path', () => {
    const errors: FieldError[] = validateLeaderWorkerSet(
      lws({ replicas: -1, podTerminationPolicy: 'Sideways', startupPolicy: 'x' }, { size: 0, restartPolicy: 'y' }),
    );
    assert.deepEqual(errors.map((e) => e.field).sort(), [
      'spec.leaderWorkerTemplate.restartPolicy',
      'spec.leaderWorkerTemplate.size',
      'spec.podTerminationPolicy',
      'spec.replicas',
      'spec.startupPolicy',
    ]);
    for (const e of errors) assert.ok(e.message.startsWith(`${e.field}: `), e.message);
  });

  it('names what is allowed in every message', () => {
    for (const [, obj] of invalid) {
      for (const e of validateLeaderWorkerSet(obj)) {
        assert.match(e.message, /supported values|should be|must|Required value|allowed only/, e.message);
      }
    }
  });

  it('rejects a non-object', () => {
    assert.equal(validateLeaderWorkerSet('nope')[0]?.type, 'Invalid value');
    assert.equal(validateLeaderWorkerSet(null).length, 1);
  });

  describe('updates (upstream ValidateUpdate)', () => {
    const sub = (subGroupPolicy?: unknown) =>
      lws({}, { size: 4, ...(subGroupPolicy !== undefined && { subGroupPolicy }) });
    const rows: Array<[string, unknown, unknown, string[]]> = [
      ['the same subgroup policy', sub({ subGroupSize: 2 }), sub({ subGroupSize: 2 }), []],
      ['no subgroup policy before or after', sub(), sub(), []],
      [
        'a changed subGroupSize',
        sub({ subGroupSize: 2 }),
        sub({ subGroupSize: 4 }),
        [CEL_MESSAGES.subGroupSizeImmutable],
      ],
      ['a subgroup policy added', sub(), sub({ subGroupSize: 2 }), [CEL_MESSAGES.subGroupPolicyAdded]],
      ['a subgroup policy removed', sub({ subGroupSize: 2 }), sub(), [CEL_MESSAGES.subGroupPolicyRemoved]],
    ];
    for (const [name, before, after, messages] of rows) {
      it(`${messages.length ? 'refuses' : 'allows'} ${name}`, () => {
        const errors = validateLeaderWorkerSetUpdate(before, after);
        assert.equal(errors.length, messages.length, errors.map((e) => e.message).join('; '));
        errors.forEach((e, i) => assert.ok(e.message.endsWith(`: ${messages[i]}`), e.message));
        for (const e of errors) assert.match(e.field, /^spec\.leaderWorkerTemplate\.subGroupPolicy/);
      });
    }
  });
});
