// The LWS's ControllerRevisions, as upstream keeps them: one per template revision, owned by the LWS, holding what a
// group is built from. A group is (re)built from its own leader's revision, so a rebuild mid-rollout never mixes
// templates; a rollback to a template still in use reuses its revision.
import type { V1ControllerRevision } from '@kubernetes/client-node';
import { applyDefaults } from './defaults.js';
import { cloneJson } from './json.js';
import { LABEL_NAME, LABEL_TEMPLATE_REVISION_HASH } from './labels.js';
import { controllerRevisionName } from './names.js';
import { revisionKey } from './revision.js';
import { lwsOwnerReference } from './templates.js';
import type { LeaderWorkerSet, LeaderWorkerTemplate, NetworkConfig } from './types.js';

/** Upstream's strategic-merge directive: applied back to an LWS, the revision replaces these fields whole. */
type Replacing<T> = T & { $patch?: 'replace' };

/**
 * A revision's data: the spec fields a group is built from, in upstream's layout (`{spec: {...}}`), so that upstream's
 * controller, taking over, finds the templates it would record itself (its SetMatchesRevision) and rolls nothing.
 */
export interface RevisionData {
  spec: { leaderWorkerTemplate: Replacing<LeaderWorkerTemplate>; networkConfig: Replacing<NetworkConfig> };
}

/** What decisions read of a ControllerRevision. */
export interface RevisionFacts {
  name: string;
  hash: string;
  revision: number;
  ownerUid?: string;
}

export function revisionData(lws: LeaderWorkerSet): RevisionData {
  const { networkConfig } = applyDefaults(lws).spec;
  return {
    spec: {
      leaderWorkerTemplate: { ...cloneJson(lws.spec.leaderWorkerTemplate), $patch: 'replace' },
      networkConfig: { ...networkConfig, $patch: 'replace' },
    },
  };
}

/** The revision of the LWS's current spec; `revision` orders revisions, newest highest (as Kubernetes' own). */
export function buildControllerRevision(lws: LeaderWorkerSet, revision: number): V1ControllerRevision {
  const d = applyDefaults(lws);
  const name = d.metadata.name ?? '';
  const hash = revisionKey(d);
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: controllerRevisionName(name, hash),
      namespace: d.metadata.namespace ?? '',
      labels: { [LABEL_NAME]: name, [LABEL_TEMPLATE_REVISION_HASH]: hash },
      ownerReferences: [lwsOwnerReference(d)],
    },
    data: revisionData(lws),
    revision,
  };
}

/** Strategic-merge directives upstream writes into its revisions (`$patch: replace`): not part of the spec. */
function withoutDirectives<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutDirectives) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!k.startsWith('$')) out[k] = withoutDirectives(v);
  return out as T;
}

/** Whether stored data is a revision's (this project's or upstream's): the leader-worker template is there. */
export function isRevisionData(data: unknown): data is RevisionData {
  const spec = (data as { spec?: { leaderWorkerTemplate?: { workerTemplate?: unknown } } } | null)?.spec;
  return typeof spec?.leaderWorkerTemplate?.workerTemplate === 'object';
}

/** The LWS as it was at that revision: its templates and network config, everything else as it is now. */
export function lwsAtRevision(lws: LeaderWorkerSet, data: RevisionData): LeaderWorkerSet {
  const clean = withoutDirectives(data.spec);
  return {
    ...lws,
    spec: {
      ...lws.spec,
      leaderWorkerTemplate: cloneJson(clean.leaderWorkerTemplate),
      ...(clean.networkConfig !== undefined && { networkConfig: cloneJson(clean.networkConfig) }),
    },
  };
}

/** The number a new (or reused, now current again) revision gets: above every other revision's. */
export function nextRevisionNumber(revisions: RevisionFacts[], except?: string): number {
  return 1 + Math.max(0, ...revisions.filter((r) => r.name !== except).map((r) => r.revision));
}

/**
 * The revisions no group uses any more. Only once the rollout is done (upstream truncates then too): every revision
 * but the current one and those still on a leader pod or worker StatefulSet (a group being torn down).
 */
export function revisionsToPrune(
  revisions: RevisionFacts[],
  current: string,
  inUse: Iterable<string>,
): RevisionFacts[] {
  const keep = new Set([current, ...inUse]);
  return revisions.filter((r) => !keep.has(r.hash));
}
