// lwsFacts: what the workflows decide an LWS on, and nothing of what its pods are made of (issue 28); and isTarget:
// whether the LWS read again is the one decided on.
import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import {
  ANNOTATION_EXCLUSIVE_TOPOLOGY,
  ANNOTATION_RECREATE_GROUP_AFTER_START,
  isTarget,
  lwsFacts,
  targetOf,
  templateRevisionHash,
  type LeaderWorkerSet,
  type LwsFacts,
} from '../../src/model/index.js';
import { sampleLws } from './model-fixtures.js';

const SECRET = 'hf_secret_value';

/** sampleLws with what a live object carries besides: managedFields, an env value, a claim, annotations. */
function liveLws(edit: (lws: LeaderWorkerSet) => void = () => {}): LeaderWorkerSet {
  const lws = sampleLws();
  lws.metadata = {
    ...lws.metadata,
    creationTimestamp: '2026-01-01T00:00:00Z',
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': `{"env":"${SECRET}"}` },
    ...({ managedFields: [{ manager: 'kubectl', fieldsV1: {} }] } as object),
  };
  lws.spec.leaderWorkerTemplate.workerTemplate.spec!.containers[0]!.env = [{ name: 'HF_TOKEN', value: SECRET }];
  lws.spec.leaderWorkerTemplate.volumeClaimTemplates = [{ metadata: { name: 'cache' } }];
  edit(lws);
  return lws;
}

const rollout = (partition: number, maxUnavailable: number | string, maxSurge: number | string) => ({
  type: 'RollingUpdate' as const,
  rollingUpdateConfiguration: { partition, maxUnavailable, maxSurge },
});

const base: LwsFacts = {
  metadata: {
    namespace: 'default',
    name: 'demo',
    uid: 'lws-uid-1',
    generation: 3,
    creationTimestamp: '2026-01-01T00:00:00Z',
  },
  spec: {
    replicas: 2,
    leaderWorkerTemplate: { size: 4, restartPolicy: 'RecreateGroupOnPodRestart' },
    startupPolicy: 'LeaderCreated',
    rolloutStrategy: rollout(0, 1, 0),
    podTerminationPolicy: 'Parallel',
  },
  revision: templateRevisionHash(liveLws().spec),
  recreateGroupAfterStart: false,
};

const rows: { name: string; edit: (lws: LeaderWorkerSet) => void; facts: (f: LwsFacts) => LwsFacts }[] = [
  {
    name: 'a live object: its identity, the defaulted numbers and policies, the hash',
    edit: () => {},
    facts: (f) => f,
  },
  {
    name: 'defaults for what is unset; an unset policy stays unset (the teardown names the default)',
    edit: (l) => {
      delete l.spec.replicas;
      delete l.spec.podTerminationPolicy;
      delete l.spec.leaderWorkerTemplate.size;
    },
    facts: (f) => {
      const { podTerminationPolicy: _, ...spec } = f.spec;
      return { ...f, spec: { ...spec, replicas: 1, leaderWorkerTemplate: { ...spec.leaderWorkerTemplate, size: 1 } } };
    },
  },
  {
    name: 'an unknown policy is no policy',
    edit: (l) => (l.spec.podTerminationPolicy = 'Sometimes' as never),
    facts: (f) => {
      const { podTerminationPolicy: _, ...spec } = f.spec;
      const invalid = [
        'spec.podTerminationPolicy: Unsupported value: "Sometimes": supported values: "Default", "Sequential", "Parallel"',
      ];
      return { ...f, spec, invalid };
    },
  },
  {
    name: "restartPolicy Default is upstream's None",
    edit: (l) => (l.spec.leaderWorkerTemplate.restartPolicy = 'Default'),
    facts: (f) => ({ ...f, spec: { ...f.spec, leaderWorkerTemplate: { size: 4, restartPolicy: 'None' } } }),
  },
  {
    name: 'the rollout numbers as written',
    edit: (l) => {
      l.spec.startupPolicy = 'LeaderReady';
      l.spec.rolloutStrategy = { rollingUpdateConfiguration: { partition: 1, maxUnavailable: '50%', maxSurge: 1 } };
    },
    facts: (f) => ({ ...f, spec: { ...f.spec, startupPolicy: 'LeaderReady', rolloutStrategy: rollout(1, '50%', 1) } }),
  },
  {
    name: 'being deleted, with its status',
    edit: (l) => {
      l.metadata.deletionTimestamp = new Date('2026-01-02T00:00:00Z');
      l.status = { replicas: 2, readyReplicas: 1 };
    },
    facts: (f) => ({
      ...f,
      metadata: { ...f.metadata, deletionTimestamp: '2026-01-02T00:00:00.000Z' },
      status: { replicas: 2, readyReplicas: 1 },
    }),
  },
  {
    name: 'the annotations the controller reads, as facts',
    edit: (l) => {
      l.metadata.annotations = {
        ...l.metadata.annotations,
        [ANNOTATION_RECREATE_GROUP_AFTER_START]: 'true',
        [ANNOTATION_EXCLUSIVE_TOPOLOGY]: 'topology.kubernetes.io/zone',
      };
    },
    facts: (f) => ({ ...f, recreateGroupAfterStart: true, exclusiveTopologyKey: 'topology.kubernetes.io/zone' }),
  },
  {
    name: 'a spec the CRD refuses: its messages',
    edit: (l) => (l.spec.leaderWorkerTemplate.size = 0),
    facts: (f) => ({
      ...f,
      spec: { ...f.spec, leaderWorkerTemplate: { ...f.spec.leaderWorkerTemplate, size: 0 } },
      invalid: [
        'spec.leaderWorkerTemplate.size: Invalid value: 0: spec.leaderWorkerTemplate.size in body should be greater than or equal to 1',
      ],
    }),
  },
];

describe('model/lws-facts lwsFacts', () => {
  for (const row of rows) {
    it(row.name, () => {
      const lws = liveLws(row.edit);
      const facts = lwsFacts(lws);
      // The revision's own rules are model-revision's; here, that it is the spec's.
      assert.deepEqual(facts, { ...row.facts(base), revision: templateRevisionHash(lws.spec) });
      const text = JSON.stringify(facts);
      for (const never of [SECRET, 'managedFields', 'nginx', 'containers', 'cache', 'last-applied']) {
        assert.ok(!text.includes(never), `${never} in the facts: ${text}`);
      }
    });
  }

  it('a new template is a new revision; what rolls no group (replicas, a policy) is not', () => {
    const revision = (edit: (l: LeaderWorkerSet) => void) => lwsFacts(liveLws(edit)).revision;
    assert.notEqual(
      revision((l) => (l.spec.leaderWorkerTemplate.workerTemplate.spec!.containers[0]!.image = 'x')),
      base.revision,
    );
    assert.equal(
      revision((l) => (l.spec.replicas = 5)),
      base.revision,
    );
    assert.equal(
      revision((l) => (l.spec.podTerminationPolicy = 'Sequential')),
      base.revision,
    );
  });
});

describe('model/lws-facts isTarget', () => {
  const target = targetOf(lwsFacts(liveLws()));
  const cases: [string, LeaderWorkerSet | null, boolean][] = [
    ['the one decided on', liveLws(), true],
    ['gone', null, false],
    ['created again (another uid)', liveLws((l) => (l.metadata.uid = 'lws-uid-2')), false],
    ['changed since (another generation)', liveLws((l) => (l.metadata.generation = 4)), false],
    ['a metadata change (no new generation)', liveLws((l) => (l.metadata.labels = { team: 'a' })), true],
    ['another name', liveLws((l) => (l.metadata.name = 'other')), false],
  ];
  for (const [what, lws, expected] of cases) {
    it(`${what}: ${expected ? 'the target' : 'stale'}`, () => assert.equal(isTarget(lws, target), expected));
  }

  it('is the facts’ identity and generation', () => {
    assert.deepEqual(target, { ref: { namespace: 'default', name: 'demo' }, uid: 'lws-uid-1', generation: 3 });
  });
});
