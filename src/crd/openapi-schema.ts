// Structural schemas (apiextensions.k8s.io/v1) of Kubernetes types, built from the OpenAPI v3 documents a
// Kubernetes release publishes (api/openapi-spec/v3), for the CRD's pod and claim templates. Pure functions on data.
//
// What the OpenAPI says and what a CRD may say differ; the rules here:
// - `$ref` and the `allOf: [{$ref}]` wrapper (how a field with its own description points at a type) are inlined;
//   recursion cannot be inlined and is an error.
// - No descriptions inside the types: they would make the CRD about ten times bigger (upstream's CRD, which keeps
//   them, is 1.3 MB), and `kubectl explain` on the real types says the same.
// - No defaults: a default inside a template is written into every stored template that lacks the field, which
//   changes the templates, hence the template revision hash, of existing LeaderWorkerSets when the CRD is updated;
//   the API server defaults the pods and StatefulSets made from them anyway. The exception is a list-map key that is
//   not required (ports' `protocol: TCP`): apiextensions refuses such a list unless the key has a default.
// - IntOrString and Quantity (`oneOf` in the OpenAPI, which structural schemas forbid) become int-or-string, the
//   latter with resource.Quantity's pattern; untyped objects (RawExtension) keep unknown fields.
// - An embedded ObjectMeta keeps only what a template may set: labels, annotations, finalizers, name, namespace.
// - Any key not listed below is an error, so a release that encodes something new is noticed, not mistranslated.

/** An OpenAPI v3 schema node as Kubernetes publishes it. */
export type OpenApiSchema = { [key: string]: unknown };

/** An OpenAPI v3 document; only its schemas are read. */
export interface OpenApiDocument {
  components?: { schemas?: Record<string, OpenApiSchema> };
}

/** A structural schema node (apiextensions.k8s.io/v1 JSONSchemaProps) as JSON data. */
export type JsonSchema = { [key: string]: unknown };

export type Definitions = ReadonlyMap<string, OpenApiSchema>;

/** The key that marks, in the CRD source, a node to replace by the structural schema of the named definition. */
export const MARKER = 'x-lws-openapi';

export const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';
export const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
export const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
/**
 * Kept as `type: object` with unknown fields: the status of a claim template means nothing (the StatefulSet
 * controller ignores it), but manifests copied from a StatefulSet read back carry `status: {phase: Pending}` there,
 * and strict field validation would refuse them if status were dropped; its full schema would only add size.
 */
export const PVC_STATUS = 'io.k8s.api.core.v1.PersistentVolumeClaimStatus';

/** resource.Quantity's syntax, as the API server and controller-gen check it. */
export const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

/** The ObjectMeta fields a template keeps (as upstream's CRD does). */
export const EMBEDDED_METADATA_FIELDS = ['annotations', 'finalizers', 'labels', 'name', 'namespace'] as const;

const intOrString = (): JsonSchema => ({
  anyOf: [{ type: 'integer' }, { type: 'string' }],
  'x-kubernetes-int-or-string': true,
});

const opaqueObject = (): JsonSchema => ({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });

/** Types whose schema is fixed here instead of being read from the OpenAPI. */
const FIXED: Record<string, () => JsonSchema> = {
  [INT_OR_STRING]: intOrString,
  [QUANTITY]: () => ({ ...intOrString(), pattern: QUANTITY_PATTERN }),
  [PVC_STATUS]: opaqueObject,
};

/** Copied as they are. */
const KEPT = new Set([
  'type',
  'format',
  'enum',
  'required',
  'nullable',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
]);
/** Left out (see the header). */
const DROPPED = new Set([
  'description',
  'default',
  'x-kubernetes-patch-strategy',
  'x-kubernetes-patch-merge-key',
  'x-kubernetes-unions',
  'x-kubernetes-group-version-kind',
]);

const REF_PREFIX = '#/components/schemas/';

/**
 * The definitions of all documents by name. A name defined twice must be defined the same way, but for the list of
 * API groups serving it (x-kubernetes-group-version-kind: each document lists its own).
 */
export function collectDefinitions(documents: readonly OpenApiDocument[]): Definitions {
  const definitions = new Map<string, OpenApiSchema>();
  const withoutGvk = ({ 'x-kubernetes-group-version-kind': _, ...rest }: OpenApiSchema) => JSON.stringify(rest);
  for (const document of documents) {
    for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
      const seen = definitions.get(name);
      if (seen !== undefined && withoutGvk(seen) !== withoutGvk(schema)) {
        throw new Error(`OpenAPI definition ${name} differs between documents`);
      }
      definitions.set(name, schema);
    }
  }
  return definitions;
}

/** The structural schema of one definition, e.g. 'io.k8s.api.core.v1.PodTemplateSpec'. */
export function structuralSchema(definitions: Definitions, name: string): JsonSchema {
  return convertDefinition(definitions, name, [], name);
}

/**
 * The source tree with every node marked `x-lws-openapi: <definition>` replaced by that definition's structural
 * schema; the marked node's description is kept, its other keys are replaced.
 */
export function expandMarkers(node: unknown, definitions: Definitions, path = ''): unknown {
  if (Array.isArray(node)) return node.map((item, i) => expandMarkers(item, definitions, `${path}[${i}]`));
  if (!isObject(node)) return node;
  if (MARKER in node) {
    const name = node[MARKER];
    if (typeof name !== 'string') throw new Error(`${path || '.'}: ${MARKER} must name a definition`);
    let generated: JsonSchema;
    try {
      generated = structuralSchema(definitions, name);
    } catch (err) {
      throw new Error(`${path || '.'} (${MARKER}: ${name}): ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    }
    return node.description === undefined ? generated : { description: node.description, ...generated };
  }
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, expandMarkers(value, definitions, `${path}.${key}`)]),
  );
}

function convertDefinition(definitions: Definitions, name: string, stack: readonly string[], path: string): JsonSchema {
  const fixed = FIXED[name];
  if (fixed) return fixed();
  if (stack.includes(name)) {
    const cycle = [...stack.slice(stack.indexOf(name)), name].join(' -> ');
    throw new Error(`${path}: ${name} contains itself (${cycle}); a structural schema cannot be recursive`);
  }
  const definition = definitions.get(name);
  if (definition === undefined) throw new Error(`${path}: no OpenAPI definition ${name}`);
  const inner = [...stack, name];
  if (name === OBJECT_META) return convertNode(definitions, embeddedMetadata(definition), inner, path);
  return convertNode(definitions, definition, inner, path);
}

function embeddedMetadata(objectMeta: OpenApiSchema): OpenApiSchema {
  const properties = asObject(objectMeta.properties, OBJECT_META);
  return {
    type: 'object',
    properties: Object.fromEntries(
      EMBEDDED_METADATA_FIELDS.filter((f) => f in properties).map((f) => [f, properties[f]]),
    ),
  };
}

function convertNode(
  definitions: Definitions,
  node: OpenApiSchema,
  stack: readonly string[],
  path: string,
): JsonSchema {
  let out: JsonSchema = {};
  const ref = refOf(node, path);
  // The referenced type first; the wrapper's own keys (e.g. x-kubernetes-map-type) override it.
  if (ref !== undefined) out = convertDefinition(definitions, ref, stack, path);
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' || key === 'allOf' || DROPPED.has(key)) continue;
    if (KEPT.has(key)) {
      out[key] = Array.isArray(value) ? [...(value as unknown[])] : value;
    } else if (key === 'items') {
      out.items = convertNode(definitions, asObject(value, `${path}.items`), stack, `${path}[]`);
    } else if (key === 'additionalProperties') {
      out.additionalProperties = convertNode(
        definitions,
        asObject(value, `${path}.additionalProperties`),
        stack,
        `${path}{}`,
      );
    } else if (key === 'properties') {
      const properties = asObject(value, `${path}.properties`);
      out.properties = Object.fromEntries(
        Object.keys(properties)
          .sort()
          .map((p) => [p, convertNode(definitions, asObject(properties[p], `${path}.${p}`), stack, `${path}.${p}`)]),
      );
    } else if (key === 'x-kubernetes-list-map-keys') {
      out[key] = [...(value as string[])];
    } else {
      throw new Error(`${path}: OpenAPI key ${key} is not translated`);
    }
  }
  if (node['x-kubernetes-list-map-keys'] !== undefined) defaultListMapKeys(definitions, node, out, path);
  if (out.type === undefined && out['x-kubernetes-int-or-string'] !== true) {
    // An untyped value: anything goes, and is kept.
    out['x-kubernetes-preserve-unknown-fields'] = true;
  } else if (out.type === 'object' && out.properties === undefined && out.additionalProperties === undefined) {
    Object.assign(out, opaqueObject());
  }
  return sortKeys(out);
}

/** Gives the list-map keys that are not required their OpenAPI default, without which the list is not valid. */
function defaultListMapKeys(definitions: Definitions, node: OpenApiSchema, out: JsonSchema, path: string): void {
  const items = out.items as JsonSchema | undefined;
  const properties = items?.properties as Record<string, JsonSchema> | undefined;
  if (!items || !properties) throw new Error(`${path}: a list-map needs items with properties`);
  const required = (items.required as string[] | undefined) ?? [];
  const source = resolve(definitions, asObject(node.items, `${path}.items`), path);
  const sourceProperties = asObject(source.properties, `${path}[].properties`);
  for (const key of node['x-kubernetes-list-map-keys'] as string[]) {
    const property = properties[key];
    if (property === undefined) throw new Error(`${path}: list-map key ${key} is not a property of the items`);
    if (required.includes(key)) continue;
    const dflt = asObject(sourceProperties[key], `${path}[].${key}`).default;
    if (dflt === undefined) {
      throw new Error(`${path}: list-map key ${key} is neither required nor defaulted, which apiextensions refuses`);
    }
    properties[key] = sortKeys({ ...property, default: dflt });
  }
}

/** The definition a node refers to, or the node itself. */
function resolve(definitions: Definitions, node: OpenApiSchema, path: string): OpenApiSchema {
  const ref = refOf(node, path);
  if (ref === undefined) return node;
  const definition = definitions.get(ref);
  if (definition === undefined) throw new Error(`${path}: no OpenAPI definition ${ref}`);
  return definition;
}

/** The definition name of `$ref: ...` or `allOf: [{$ref: ...}]`. */
function refOf(node: OpenApiSchema, path: string): string | undefined {
  let ref = node.$ref;
  if (node.allOf !== undefined) {
    const allOf = node.allOf as unknown[];
    const only = allOf[0];
    if (allOf.length !== 1 || !isObject(only) || Object.keys(only).join() !== '$ref' || ref !== undefined) {
      throw new Error(`${path}: only allOf: [{$ref}] is translated`);
    }
    ref = only.$ref;
  }
  if (ref === undefined) return undefined;
  if (typeof ref !== 'string' || !ref.startsWith(REF_PREFIX))
    throw new Error(`${path}: unsupported $ref ${String(ref)}`);
  return ref.slice(REF_PREFIX.length);
}

function sortKeys(node: JsonSchema): JsonSchema {
  return Object.fromEntries(
    Object.keys(node)
      .sort()
      .map((k) => [k, node[k]]),
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asObject(value: unknown, path: string): Record<string, unknown> {
  if (!isObject(value)) throw new Error(`${path}: expected a schema object, got ${JSON.stringify(value)}`);
  return value;
}
