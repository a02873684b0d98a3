// Why a group's leader is terminating, which decides what its teardown waits for (judged by trigger and teardown).
import { LABEL_TEMPLATE_REVISION_HASH } from './labels.js';
import { lwsFacts, type LwsFacts } from './lws-facts.js';
import type { LeaderWorkerSet } from './types.js';

export type Lifecycle = 'rebuild' | 'scale-down' | 'rolling-update' | 'delete';

type Leader = { labels: Record<string, string>; createdAt?: string };

/** As groupLifecycle, from the LWS itself (the trigger's watch holds the whole object). */
export function lifecycleOf(
  lws: LeaderWorkerSet | null | undefined,
  groupIndex: number,
  leader: Leader,
  leaderReplicas?: number,
): Lifecycle {
  return groupLifecycle(lws ? lwsFacts(lws) : null, groupIndex, leader, leaderReplicas);
}

export function groupLifecycle(
  lws: LwsFacts | null,
  groupIndex: number,
  leader: Leader,
  leaderReplicas?: number,
): Lifecycle {
  if (!lws || lws.metadata.deletionTimestamp || predatesLws(lws, leader.createdAt)) return 'delete';
  if (!wantsGroup(lws, groupIndex, leaderReplicas)) return 'scale-down';
  const revision = leader.labels[LABEL_TEMPLATE_REVISION_HASH];
  if (revision !== undefined && revision !== lws.revision) return 'rolling-update';
  return 'rebuild';
}

/**
 * Below spec.replicas, or a rollout's surge group that the leader StatefulSet (`leaderReplicas`) still keeps. `lws`:
 * its facts, or the LWS with defaults applied.
 */
export function wantsGroup(lws: { spec: { replicas: number } }, groupIndex: number, leaderReplicas?: number): boolean {
  return groupIndex < lws.spec.replicas || (leaderReplicas !== undefined && groupIndex < leaderReplicas);
}

/** spec.replicas of the LWS's own leader StatefulSet (not one being deleted), surge groups included. */
export function leaderStatefulSetReplicas(
  lws: { metadata: { uid?: string } },
  leaderStatefulSet: { ownerUid?: string; replicas: number; deletionTimestamp?: string } | null | undefined,
): number | undefined {
  const ours =
    leaderStatefulSet &&
    leaderStatefulSet.ownerUid === lws.metadata.uid &&
    leaderStatefulSet.deletionTimestamp === undefined;
  return ours ? leaderStatefulSet.replicas : undefined;
}

export function notWantedAbove(replicas: number): string {
  return `the LWS wants ${replicas} ${replicas === 1 ? 'group' : 'groups'} and keeps no surge group (scaled down, or a rolling update released it)`;
}

/**
 * A pod created before the LWS of its name belongs to an older LWS of that name (deleted, created again). Both times
 * are whole seconds, so a pod of the LWS's own second counts as its own: a new LWS's first leaders usually are.
 */
export function predatesLws(
  lws: { metadata?: { creationTimestamp?: string | Date } },
  podCreatedAt: string | Date | undefined,
): boolean {
  const lwsCreatedAt = lws.metadata?.creationTimestamp;
  if (podCreatedAt === undefined || lwsCreatedAt === undefined) return false;
  return millis(podCreatedAt) < millis(lwsCreatedAt);
}

/** A client-node typed object gives a Date, JSON (a watch event, a Temporal payload) an RFC 3339 string. */
const millis = (t: string | Date): number => (typeof t === 'string' ? Date.parse(t) : t.getTime());
