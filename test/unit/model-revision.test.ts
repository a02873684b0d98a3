import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import {
  adoptedRevision,
  ANNOTATION_ADOPTED_REVISION,
  applySpecDefaults,
  canonicalJson,
  cloneJson,
  fnv1a32Hex,
  revisionKey,
  sameTemplates,
  templateRevisionHash,
  type LeaderWorkerSetSpec,
} from '../../src/model/index.js';
import { sampleLws } from './model-fixtures.js';

const base = sampleLws().spec;
const baseHash = templateRevisionHash(base);

function variant(change: (spec: LeaderWorkerSetSpec) => void): LeaderWorkerSetSpec {
  const spec = cloneJson(base);
  change(spec);
  return spec;
}

describe('model/revision', () => {
  // Published FNV-1a 32-bit test vectors.
  const vectors: Array<[string, string]> = [
    ['', '811c9dc5'],
    ['a', 'e40c292c'],
    ['foobar', 'bf9cf968'],
  ];
  for (const [input, hex] of vectors) {
    it(`fnv1a32Hex(${JSON.stringify(input)}) = ${hex}`, () => assert.equal(fnv1a32Hex(input), hex));
  }

  it('hashes UTF-8 bytes, not UTF-16 code units', () => {
    assert.notEqual(fnv1a32Hex('é'), fnv1a32Hex('\u00e9\u0000'));
    assert.match(fnv1a32Hex('日本😀'), /^[0-9a-f]{8}$/);
  });

  it('writes canonical JSON with sorted keys at every level', () => {
    assert.equal(
      canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: undefined } }),
      '{"a":{"d":[{"y":2,"z":1}]},"b":1}',
    );
  });

  const unchanged: Array<[string, LeaderWorkerSetSpec]> = [
    ['the same spec again', cloneJson(base)],
    ['keys in another order', JSON.parse(canonicalJson(base)) as LeaderWorkerSetSpec],
    ['replicas', variant((s) => (s.replicas = 9))],
    ['restartPolicy', variant((s) => (s.leaderWorkerTemplate.restartPolicy = 'None'))],
    ['startupPolicy', variant((s) => (s.startupPolicy = 'LeaderReady'))],
    [
      'rollout settings',
      variant((s) => (s.rolloutStrategy = { rollingUpdateConfiguration: { partition: 1, maxSurge: 2 } })),
    ],
    ['the defaulted form of the spec', applySpecDefaults(base)],
    ['another podTerminationPolicy (it must not roll groups)', variant((s) => (s.podTerminationPolicy = 'Sequential'))],
  ];
  for (const [name, spec] of unchanged) {
    it(`keeps the hash for ${name}`, () => assert.equal(templateRevisionHash(spec), baseHash));
  }

  const changed: Array<[string, LeaderWorkerSetSpec]> = [
    ['a worker image', variant((s) => (s.leaderWorkerTemplate.workerTemplate.spec!.containers[0]!.image = 'nginx:1'))],
    ['a leader image', variant((s) => (s.leaderWorkerTemplate.leaderTemplate!.spec!.containers[0]!.image = 'nginx:1'))],
    ['a template label', variant((s) => (s.leaderWorkerTemplate.workerTemplate.metadata = { labels: { a: 'b' } }))],
    ['size', variant((s) => (s.leaderWorkerTemplate.size = 5))],
    ['dropping the leader template', variant((s) => delete s.leaderWorkerTemplate.leaderTemplate)],
    ['subdomainPolicy', variant((s) => (s.networkConfig = { subdomainPolicy: 'UniquePerReplica' }))],
    ['a subGroupPolicy', variant((s) => (s.leaderWorkerTemplate.subGroupPolicy = { subGroupSize: 2 }))],
    [
      'volume claims',
      variant((s) => (s.leaderWorkerTemplate.volumeClaimTemplates = [{ metadata: { name: 'data' }, spec: {} }])),
    ],
    [
      'the claims retention',
      variant(
        (s) =>
          (s.leaderWorkerTemplate.persistentVolumeClaimRetentionPolicy = {
            whenDeleted: 'Delete',
            whenScaled: 'Retain',
          }),
      ),
    ],
  ];
  for (const [name, spec] of changed) {
    it(`changes the hash for ${name}`, () => assert.notEqual(templateRevisionHash(spec), baseHash));
  }

  it('treats an explicit leader template equal to the worker template like none', () => {
    const none = variant((s) => delete s.leaderWorkerTemplate.leaderTemplate);
    const same = variant(
      (s) => (s.leaderWorkerTemplate.leaderTemplate = cloneJson(s.leaderWorkerTemplate.workerTemplate)),
    );
    assert.equal(templateRevisionHash(none), templateRevisionHash(same));
  });

  it('is 8 hex digits', () => assert.match(baseHash, /^[0-9a-f]{8}$/));

  describe('the revision key: our hash, or the key another controller gave the same templates', () => {
    const withAnnotation = (spec: LeaderWorkerSetSpec, value?: string) => {
      const lws = sampleLws();
      lws.spec = spec;
      if (value !== undefined) lws.metadata.annotations = { [ANNOTATION_ADOPTED_REVISION]: value };
      return lws;
    };
    const changed = variant((s) => (s.leaderWorkerTemplate.size = 9));
    const cases: Array<[string, LeaderWorkerSetSpec, string | undefined, string]> = [
      ['no annotation: our hash', base, undefined, baseHash],
      ["adopted for this spec's hash: the adopted key", base, adoptedRevision(base, '7c6b5d4f9'), '7c6b5d4f9'],
      [
        'adopted for an older spec: our hash of this one',
        changed,
        adoptedRevision(base, '7c6b5d4f9'),
        templateRevisionHash(changed),
      ],
      ['no key after the colon: our hash', base, `${baseHash}:`, baseHash],
      ['not ours to read: our hash', base, 'garbage', baseHash],
    ];
    for (const [name, spec, annotation, want] of cases) {
      it(name, () => assert.equal(revisionKey(withAnnotation(spec, annotation)), want));
    }
  });

  describe('sameTemplates: the same groups, however serialized', () => {
    const goSerialized = variant((s) => {
      // As Go's encoding of upstream's typed LWS writes its revisions.
      const t = s.leaderWorkerTemplate.workerTemplate as { metadata?: unknown; spec: { containers: object[] } };
      t.metadata = { creationTimestamp: null };
      t.spec.containers = t.spec.containers.map((c) => ({ ...c, resources: {}, env: [] }));
    });
    const cases: Array<[string, LeaderWorkerSetSpec, boolean]> = [
      ['the same spec', cloneJson(base), true],
      ['empty structs, empty lists and null timestamps written out', goSerialized, true],
      [
        'another image',
        variant((s) => (s.leaderWorkerTemplate.workerTemplate.spec!.containers[0]!.image = 'x:2')),
        false,
      ],
      ['another size', variant((s) => (s.leaderWorkerTemplate.size = 9)), false],
      ['only other replicas (not a template)', variant((s) => (s.replicas = 9)), true],
    ];
    for (const [name, spec, same] of cases) it(name, () => assert.equal(sameTemplates(base, spec), same));
  });
});
