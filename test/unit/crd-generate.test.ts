// The CRD generator: OpenAPI definitions to structural schemas, on small synthetic documents, and the committed
// deploy CRD being what the generator makes from the pinned Kubernetes release.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'mocha';
import {
  collectDefinitions,
  expandMarkers,
  INT_OR_STRING,
  OBJECT_META,
  PVC_STATUS,
  QUANTITY,
  QUANTITY_PATTERN,
  structuralSchema,
  type OpenApiSchema,
} from '../../src/crd/openapi-schema.js';
import { crdPath } from '../../tools/stack/crd.js';
import { loadOpenapi, openapiDir, renderCrd, sourcePath } from '../../scripts/generate-crd.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
/** How the OpenAPI points a described field at a type. */
const wrapped = (name: string, extra: OpenApiSchema = {}) => ({ allOf: [ref(name)], description: 'a field', ...extra });

/** A few definitions shaped like Kubernetes' own (encodings as in api/openapi-spec/v3 of 1.37). */
const schemas: Record<string, OpenApiSchema> = {
  [INT_OR_STRING]: { format: 'int-or-string', oneOf: [{ type: 'integer' }, { type: 'string' }] },
  [QUANTITY]: { oneOf: [{ type: 'string' }, { type: 'number' }] },
  'io.k8s.apimachinery.pkg.runtime.RawExtension': { type: 'object', description: 'anything' },
  [OBJECT_META]: {
    type: 'object',
    properties: {
      name: { type: 'string', description: 'the name' },
      namespace: { type: 'string' },
      uid: { type: 'string' },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      annotations: { type: 'object', additionalProperties: { type: 'string' } },
      finalizers: {
        type: 'array',
        items: { type: 'string' },
        'x-kubernetes-list-type': 'set',
        'x-kubernetes-patch-strategy': 'merge',
      },
      creationTimestamp: wrapped('io.k8s.apimachinery.pkg.apis.meta.v1.Time'),
    },
  },
  'io.k8s.apimachinery.pkg.apis.meta.v1.Time': { type: 'string', format: 'date-time' },
  Port: {
    type: 'object',
    required: ['containerPort'],
    properties: {
      containerPort: { type: 'integer', format: 'int32', default: 0 },
      protocol: { type: 'string', default: 'TCP' },
    },
  },
  Secret: {
    type: 'object',
    'x-kubernetes-map-type': 'atomic',
    properties: { name: { type: 'string', default: '' } },
  },
  Container: {
    type: 'object',
    description: 'a container',
    required: ['name'],
    properties: {
      name: { type: 'string', default: '' },
      image: { type: 'string' },
      ports: {
        type: 'array',
        items: ref('Port'),
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
        'x-kubernetes-patch-merge-key': 'containerPort',
        'x-kubernetes-patch-strategy': 'merge',
      },
      limits: { type: 'object', additionalProperties: ref(QUANTITY) },
      port: wrapped(INT_OR_STRING),
      secret: wrapped('Secret', { default: {} }),
      granularSecret: wrapped('Secret', { 'x-kubernetes-map-type': 'granular' }),
      extension: wrapped('io.k8s.apimachinery.pkg.runtime.RawExtension'),
      anything: { description: 'untyped' },
    },
  },
  Template: {
    type: 'object',
    'x-kubernetes-group-version-kind': [{ group: '', kind: 'Template', version: 'v1' }],
    properties: { metadata: wrapped(OBJECT_META, { default: {} }), container: wrapped('Container', { default: {} }) },
  },
  Claim: { type: 'object', properties: { status: wrapped(PVC_STATUS, { default: {} }) } },
  [PVC_STATUS]: { type: 'object', properties: { phase: { type: 'string' } } },
  Tree: { type: 'object', properties: { children: { type: 'array', items: ref('Branch') } } },
  Branch: { type: 'object', properties: { tree: wrapped('Tree') } },
  Unkeyed: {
    type: 'array',
    items: { type: 'object', properties: { key: { type: 'string' } } },
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['key'],
  },
  Union: { type: 'object', properties: { either: { oneOf: [{ type: 'string' }, { type: 'boolean' }] } } },
  Bounded: { type: 'integer', maximum: 3 },
};
const definitions = collectDefinitions([{ components: { schemas } }]);
const container = () => (structuralSchema(definitions, 'Container').properties ?? {}) as Record<string, unknown>;

describe('crd/openapi-schema', () => {
  const cases: Array<{ title: string; actual: () => unknown; expected: unknown }> = [
    {
      title: 'a list-map key that is not required keeps its default; a required one loses it; patch keys go',
      actual: () => container().ports,
      expected: {
        type: 'array',
        items: {
          type: 'object',
          required: ['containerPort'],
          properties: {
            containerPort: { type: 'integer', format: 'int32' },
            protocol: { type: 'string', default: 'TCP' },
          },
        },
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
      },
    },
    {
      title: 'Quantity (a $ref under additionalProperties) is int-or-string with the quantity pattern',
      actual: () => container().limits,
      expected: {
        type: 'object',
        additionalProperties: {
          anyOf: [{ type: 'integer' }, { type: 'string' }],
          pattern: QUANTITY_PATTERN,
          'x-kubernetes-int-or-string': true,
        },
      },
    },
    {
      title: 'IntOrString (an allOf wrapper) is int-or-string, without its format and the description',
      actual: () => container().port,
      expected: { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true },
    },
    {
      title: 'a referenced type is inlined without its defaults, keeping its map type',
      actual: () => container().secret,
      expected: { type: 'object', properties: { name: { type: 'string' } }, 'x-kubernetes-map-type': 'atomic' },
    },
    {
      title: "the wrapper's map type overrides the type's",
      actual: () => (container().granularSecret as Record<string, unknown>)['x-kubernetes-map-type'],
      expected: 'granular',
    },
    {
      title: 'an object without properties (RawExtension) keeps unknown fields',
      actual: () => container().extension,
      expected: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
    {
      title: 'an untyped value keeps anything',
      actual: () => container().anything,
      expected: { 'x-kubernetes-preserve-unknown-fields': true },
    },
    {
      title: 'embedded ObjectMeta keeps labels, annotations, finalizers, name and namespace only',
      actual: () => structuralSchema(definitions, 'Template').properties,
      expected: {
        metadata: {
          type: 'object',
          properties: {
            annotations: { type: 'object', additionalProperties: { type: 'string' } },
            finalizers: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
            labels: { type: 'object', additionalProperties: { type: 'string' } },
            name: { type: 'string' },
            namespace: { type: 'string' },
          },
        },
        container: structuralSchema(definitions, 'Container'),
      },
    },
    {
      title: 'the group-version-kind list goes; keys are sorted',
      actual: () => Object.keys(structuralSchema(definitions, 'Container')),
      expected: ['properties', 'required', 'type'],
    },
    {
      title: 'a claim status keeps unknown fields',
      actual: () => structuralSchema(definitions, 'Claim').properties,
      expected: { status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
    },
  ];
  for (const { title, actual, expected } of cases) {
    it(title, () => assert.deepEqual(actual(), expected));
  }

  const failures: Array<{ title: string; name: string; message: RegExp }> = [
    { title: 'recursion', name: 'Tree', message: /Tree contains itself \(Tree -> Branch -> Tree\)/ },
    { title: 'an unknown definition', name: 'Missing', message: /no OpenAPI definition Missing/ },
    {
      title: 'a list-map key neither required nor defaulted',
      name: 'Unkeyed',
      message: /Unkeyed: list-map key key is neither required nor defaulted/,
    },
    { title: 'a oneOf other than IntOrString and Quantity', name: 'Union', message: /Union\.either: .*oneOf/ },
    { title: 'a key this generator does not translate', name: 'Bounded', message: /Bounded: .*maximum/ },
  ];
  for (const { title, name, message } of failures) {
    it(`fails clearly on ${title}`, () => assert.throws(() => structuralSchema(definitions, name), message));
  }

  it('refuses a definition two documents define differently, but for their group-version-kind lists', () => {
    const gvk = (group: string) => ({ 'x-kubernetes-group-version-kind': [{ group, kind: 'X', version: 'v1' }] });
    const doc = (schema: OpenApiSchema) => ({ components: { schemas: { X: schema } } });
    assert.doesNotThrow(() =>
      collectDefinitions([doc({ type: 'object', ...gvk('') }), doc({ type: 'object', ...gvk('apps') })]),
    );
    assert.throws(() => collectDefinitions([doc({ type: 'object' }), doc({ type: 'string' })]), /X differs/);
  });

  it('replaces marked nodes, keeping their description only, and leaves the rest as it is', () => {
    const source = {
      properties: {
        template: { description: 'kept', type: 'replaced', 'x-lws-openapi': 'Secret' },
        items: { type: 'array', items: { 'x-lws-openapi': INT_OR_STRING } },
        other: { type: 'string', default: 'stays' },
      },
    };
    assert.deepEqual(expandMarkers(source, definitions), {
      properties: {
        template: { description: 'kept', ...structuralSchema(definitions, 'Secret') },
        items: { type: 'array', items: structuralSchema(definitions, INT_OR_STRING) },
        other: { type: 'string', default: 'stays' },
      },
    });
  });
});

describe('deploy/crd is generated', () => {
  it('equals what `npm run generate:crd` makes now from the source and the pinned OpenAPI', async function () {
    this.timeout(30_000);
    const dir = await openapiDir({ download: false });
    if (dir === undefined) {
      console.log(
        '      skipped: the OpenAPI of the pinned Kubernetes is not in the Go module cache (npm run provision)',
      );
      this.skip();
    }
    const expected = await renderCrd(await readFile(sourcePath, 'utf8'), await loadOpenapi(dir));
    assert.ok((await readFile(crdPath, 'utf8')) === expected, 'deploy/crd is stale: run `npm run generate:crd`');
  });
});
