// The JSONPatch (RFC 6902) an admission response carries: what turns the pod the API server sent into the pod the
// mutation returned. Pure: no I/O, no clock.
//
// The patch works on whole subtrees one level below `metadata` and `spec` (`/metadata/labels`, `/spec/affinity`,
// `/spec/containers`, ...): a changed subtree is added or replaced as a whole, one that disappeared is removed. Finer
// operations would buy nothing: the API server applies the patch to exactly the object it sent, and a whole list
// (containers) avoids index arithmetic on arrays. Other top-level fields (`apiVersion`, `kind`, `status`) are
// compared whole.

export type JsonPatchOperation =
  | { op: 'add'; path: string; value: unknown }
  | { op: 'replace'; path: string; value: unknown }
  | { op: 'remove'; path: string };

type JsonObject = Record<string, unknown>;

/** The top-level fields whose children are patched one by one; the other top-level fields are patched whole. */
const DESCEND = new Set(['metadata', 'spec']);

/** A JSON Pointer token (RFC 6901): `~` -> `~0`, `/` -> `~1`. `/metadata/labels` keys never need it; others may. */
export function escapePointerToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value as it travels as JSON: undefined members dropped, Dates as strings (as the API server will read it). */
export function asJson(value: unknown): unknown {
  return value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as unknown);
}

/** Equality of two JSON values (object member order does not matter, array order does). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
}

/** Add, replace or remove `path` so that what was `before` (undefined: absent) becomes `after`. */
function subtreeOperation(path: string, before: unknown, after: unknown): JsonPatchOperation[] {
  if (jsonEqual(before, after)) return [];
  if (after === undefined) return [{ op: 'remove', path }];
  if (before === undefined) return [{ op: 'add', path, value: after }];
  return [{ op: 'replace', path, value: after }];
}

/**
 * The operations that turn `before` into `after`, both objects as the API server sends and reads them (a pod).
 * Empty when nothing changed. A parent that `before` lacks (no `metadata.annotations` is common; no `metadata` at
 * all is not, but the patch stays correct) is added whole, since JSON Patch cannot add below a missing member.
 */
export function diffObjects(beforeObject: unknown, afterObject: unknown): JsonPatchOperation[] {
  const before = asJson(beforeObject);
  const after = asJson(afterObject);
  if (!isObject(before) || !isObject(after)) {
    throw new TypeError('diffObjects compares two JSON objects');
  }
  const ops: JsonPatchOperation[] = [];
  for (const key of unionKeys(before, after)) {
    const path = `/${escapePointerToken(key)}`;
    const b = before[key];
    const a = after[key];
    if (DESCEND.has(key) && isObject(b) && isObject(a)) {
      for (const child of unionKeys(b, a)) {
        ops.push(...subtreeOperation(`${path}/${escapePointerToken(child)}`, b[child], a[child]));
      }
    } else {
      ops.push(...subtreeOperation(path, b, a));
    }
  }
  return ops;
}

/** The keys of `a`, then those only `b` has: a stable order, so the same change always gives the same patch. */
function unionKeys(a: JsonObject, b: JsonObject): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])];
}

/**
 * Applies a patch made by diffObjects (add, replace, remove on object members; no array indices, no `-`): what the
 * API server will do with it. For tests and for checking a patch before it is sent.
 */
export function applyPatch<T>(object: T, ops: readonly JsonPatchOperation[]): T {
  const root = asJson(object);
  for (const op of ops) {
    const tokens = op.path
      .split('/')
      .slice(1)
      .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
    const last = tokens.pop();
    if (last === undefined) throw new Error(`${op.op} ${op.path}: the root cannot be patched here`);
    let parent: unknown = root;
    for (const token of tokens) {
      if (!isObject(parent) || !Object.hasOwn(parent, token)) {
        throw new Error(`${op.op} ${op.path}: ${token} does not exist`);
      }
      parent = parent[token];
    }
    if (!isObject(parent)) throw new Error(`${op.op} ${op.path}: the parent is not an object`);
    const exists = Object.hasOwn(parent, last);
    if (op.op === 'remove' || op.op === 'replace') {
      if (!exists) throw new Error(`${op.op} ${op.path}: nothing to ${op.op}`);
    }
    if (op.op === 'remove') delete parent[last];
    else parent[last] = asJson(op.value);
  }
  return root as T;
}
