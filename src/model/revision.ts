// The template revision hash: changes exactly when the pods an LWS would create change. FNV-1a 32-bit without the
// crypto module, as workflow code computes it too: it tells revisions of one LWS apart, and guards against no attacker.
import { applySpecDefaults } from './defaults.js';
import { canonicalJson } from './json.js';
import { ANNOTATION_ADOPTED_REVISION } from './labels.js';
import type { DefaultedLeaderWorkerSetSpec, LeaderWorkerSet, LeaderWorkerSetSpec } from './types.js';

const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** UTF-8 bytes of a string, without TextEncoder (not guaranteed in the workflow sandbox). */
function utf8Bytes(text: string): number[] {
  const bytes: number[] = [];
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp < 0x80) bytes.push(cp);
    else if (cp < 0x800) bytes.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
    else if (cp < 0x10000) bytes.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
    else {
      bytes.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
    }
  }
  return bytes;
}

export function fnv1a32Hex(text: string): string {
  let hash = FNV_OFFSET_BASIS;
  for (const byte of utf8Bytes(text)) {
    hash ^= byte;
    hash = Math.imul(hash, FNV_PRIME) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/**
 * Everything a group is built from, as upstream's revisions hold it, the leader template as effective (spelling it
 * out is no change). Not podTerminationPolicy nor restartPolicy: controller decisions, which roll no group. The
 * fields added later count only when set, so the hash of an LWS without them stays what it was.
 */
export function revisionInput(spec: LeaderWorkerSetSpec | DefaultedLeaderWorkerSetSpec): unknown {
  const d = applySpecDefaults(spec);
  const lwt = d.leaderWorkerTemplate;
  return {
    leaderTemplate: lwt.leaderTemplate ?? lwt.workerTemplate,
    workerTemplate: lwt.workerTemplate,
    size: lwt.size,
    subdomainPolicy: d.networkConfig.subdomainPolicy,
    ...(lwt.subGroupPolicy !== undefined && { subGroupPolicy: lwt.subGroupPolicy }),
    ...(lwt.volumeClaimTemplates !== undefined && { volumeClaimTemplates: lwt.volumeClaimTemplates }),
    ...(lwt.persistentVolumeClaimRetentionPolicy !== undefined && {
      persistentVolumeClaimRetentionPolicy: lwt.persistentVolumeClaimRetentionPolicy,
    }),
  };
}

/** Value of the template-revision-hash label for a spec (raw or defaulted: both give the same hash). */
export function templateRevisionHash(spec: LeaderWorkerSetSpec | DefaultedLeaderWorkerSetSpec): string {
  return fnv1a32Hex(canonicalJson(revisionInput(spec)));
}

/**
 * The revision key of the LWS's templates: our hash, or the key another controller gave these very templates, once
 * adopted (ANNOTATION_ADOPTED_REVISION). Only while the spec keeps that hash: a new template gets our own.
 */
export function revisionKey(lws: {
  metadata: LeaderWorkerSet['metadata'];
  spec: LeaderWorkerSetSpec | DefaultedLeaderWorkerSetSpec;
}): string {
  const own = templateRevisionHash(lws.spec);
  const adopted = lws.metadata.annotations?.[ANNOTATION_ADOPTED_REVISION];
  const [forHash, key] = adopted?.split(':') ?? [];
  return forHash === own && key ? key : own;
}

/** The annotation that makes `key` the revision key of this spec's templates. */
export function adoptedRevision(spec: LeaderWorkerSetSpec, key: string): string {
  return `${templateRevisionHash(spec)}:${key}`;
}

/**
 * Whether two specs build the same groups, however each was serialized: Go's encoding of upstream's revisions writes
 * empty structs and null timestamps (`resources: {}`, `creationTimestamp: null`) that a stored LWS leaves out.
 */
export function sameTemplates(a: LeaderWorkerSetSpec, b: LeaderWorkerSetSpec): boolean {
  return canonicalJson(withoutEmpty(revisionInput(a))) === canonicalJson(withoutEmpty(revisionInput(b)));
}

function withoutEmpty(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(withoutEmpty);
    return items.length === 0 ? undefined : items;
  }
  if (value === null) return undefined;
  if (typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const kept = withoutEmpty(v);
    if (kept !== undefined) out[k] = kept;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}
