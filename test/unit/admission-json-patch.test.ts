import assert from 'node:assert/strict';
import {
  applyPatch,
  diffObjects,
  escapePointerToken,
  jsonEqual,
  type JsonPatchOperation,
} from '../../src/admission/json-patch.js';

const container = { name: 'main', image: 'registry.invalid/fake:1' };
const pod = (metadata: object, spec: object = { containers: [container] }) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata,
  spec,
});
const labels = { 'leaderworkerset.sigs.k8s.io/name': 'demo', 'leaderworkerset.sigs.k8s.io/worker-index': '0' };
const withGroup = { ...labels, 'leaderworkerset.sigs.k8s.io/group-index': '1' };
const affinity = { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone' }] } };

describe('admission/json-patch: the patch from the pod that came in to the mutated pod', () => {
  const cases: Array<[what: string, before: unknown, after: unknown, expected: JsonPatchOperation[]]> = [
    ['nothing changed: no operation', pod({ name: 'a', labels }), pod({ name: 'a', labels }), []],
    [
      'member order and undefined members do not count as changes',
      pod({ labels, name: 'a' }),
      { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'a', labels, annotations: undefined }, spec: pod({}).spec },
      [],
    ],
    [
      'a label added: the labels replaced whole',
      pod({ name: 'a', labels }),
      pod({ name: 'a', labels: withGroup }),
      [{ op: 'replace', path: '/metadata/labels', value: withGroup }],
    ],
    [
      'labels where the pod had none: added',
      pod({ name: 'a' }),
      pod({ name: 'a', labels: withGroup }),
      [{ op: 'add', path: '/metadata/labels', value: withGroup }],
    ],
    [
      'annotations untouched are not in the patch; changed ones are',
      pod({ name: 'a', labels, annotations: { x: '1' } }),
      pod({ name: 'a', labels: withGroup, annotations: { x: '1', y: '2' } }),
      [
        { op: 'replace', path: '/metadata/labels', value: withGroup },
        { op: 'replace', path: '/metadata/annotations', value: { x: '1', y: '2' } },
      ],
    ],
    [
      'affinity where the pod had none: added under the existing spec',
      pod({ name: 'a' }),
      pod({ name: 'a' }, { containers: [container], affinity }),
      [{ op: 'add', path: '/spec/affinity', value: affinity }],
    ],
    [
      'an env var added to one container: the containers replaced whole',
      pod({ name: 'a' }, { containers: [container, { name: 'side', image: 'x' }] }),
      pod(
        { name: 'a' },
        {
          containers: [
            { ...container, env: [{ name: 'TPU_WORKER_ID', value: '0' }] },
            { name: 'side', image: 'x' },
          ],
        },
      ),
      [
        {
          op: 'replace',
          path: '/spec/containers',
          value: [
            { ...container, env: [{ name: 'TPU_WORKER_ID', value: '0' }] },
            { name: 'side', image: 'x' },
          ],
        },
      ],
    ],
    [
      "init containers changed beside containers: one operation each, in the pod's order",
      pod({ name: 'a' }, { initContainers: [{ name: 'init', image: 'i' }], containers: [container] }),
      pod(
        { name: 'a' },
        { initContainers: [{ name: 'init', image: 'i', env: [] }], containers: [{ ...container, env: [] }] },
      ),
      [
        { op: 'replace', path: '/spec/initContainers', value: [{ name: 'init', image: 'i', env: [] }] },
        { op: 'replace', path: '/spec/containers', value: [{ ...container, env: [] }] },
      ],
    ],
    [
      'a field the mutation removed: removed',
      pod({ name: 'a' }, { containers: [container], subdomain: 'old' }),
      pod({ name: 'a' }, { containers: [container] }),
      [{ op: 'remove', path: '/spec/subdomain' }],
    ],
    [
      'no metadata at all (the parent absent): metadata added whole',
      { apiVersion: 'v1', kind: 'Pod', spec: { containers: [container] } },
      pod({ labels: withGroup }),
      [{ op: 'add', path: '/metadata', value: { labels: withGroup } }],
    ],
    [
      'no spec at all: spec added whole',
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' } },
      pod({ name: 'a' }, { containers: [container], affinity }),
      [{ op: 'add', path: '/spec', value: { containers: [container], affinity } }],
    ],
    [
      'a key with / and ~ is escaped in the path',
      { metadata: { name: 'a' }, 'odd/key~': 1 },
      { metadata: { name: 'a' }, 'odd/key~': 2 },
      [{ op: 'replace', path: '/odd~1key~0', value: 2 }],
    ],
    [
      'a Date in the mutated pod is compared as the JSON string it travels as',
      pod({ name: 'a', creationTimestamp: '2026-01-02T03:04:05.000Z' }),
      pod({ name: 'a', creationTimestamp: new Date('2026-01-02T03:04:05.000Z') }),
      [],
    ],
  ];

  for (const [what, before, after, expected] of cases) {
    it(what, () => {
      const ops = diffObjects(before, after);
      assert.deepEqual(ops, expected);
      // What the API server does with the patch gives the mutated pod back, exactly.
      assert.ok(jsonEqual(applyPatch(before, ops), JSON.parse(JSON.stringify(after))), 'the patch reproduces it');
    });
  }

  it('the patch does not share objects with the mutated pod (it is serialized as it was built)', () => {
    const after = pod({ name: 'a', labels: withGroup });
    const ops = diffObjects(pod({ name: 'a', labels }), after);
    after.metadata = { name: 'changed later' };
    assert.deepEqual(ops, [{ op: 'replace', path: '/metadata/labels', value: withGroup }]);
  });

  it('refuses what is no object', () => {
    assert.throws(() => diffObjects([], {}), TypeError);
    assert.throws(() => diffObjects({}, null), TypeError);
  });

  const pointers: Array<[string, string]> = [
    ['labels', 'labels'],
    ['leaderworkerset.sigs.k8s.io/name', 'leaderworkerset.sigs.k8s.io~1name'],
    ['a~b', 'a~0b'],
    ['~/', '~0~1'],
  ];
  for (const [token, escaped] of pointers) {
    it(`escapes the pointer token ${token} as ${escaped}`, () => assert.equal(escapePointerToken(token), escaped));
  }

  const equalities: Array<[unknown, unknown, boolean]> = [
    [{ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 }, true],
    [[1, 2], [2, 1], false],
    [{ a: 1 }, { a: 1, b: 2 }, false],
    [{ a: null }, { a: null }, true],
    [{ a: null }, {}, false],
    ['1', 1, false],
    [[], {}, false],
  ];
  for (const [a, b, equal] of equalities) {
    it(`jsonEqual(${JSON.stringify(a)}, ${JSON.stringify(b)}) is ${equal}`, () => assert.equal(jsonEqual(a, b), equal));
  }

  it('applyPatch refuses to replace or remove what is not there, or to add below a missing parent', () => {
    assert.throws(
      () => applyPatch({ metadata: {} }, [{ op: 'remove', path: '/metadata/labels' }]),
      /nothing to remove/,
    );
    assert.throws(() => applyPatch({ metadata: {} }, [{ op: 'replace', path: '/metadata/labels', value: {} }]));
    assert.throws(() => applyPatch({}, [{ op: 'add', path: '/metadata/labels', value: {} }]), /does not exist/);
  });
});
