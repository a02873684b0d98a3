// The writes that build from an LWS's templates, by target (model/lws-facts.ts): each reads the LWS itself, so the
// templates never pass through Temporal, and acts only if it is still the one the workflow decided on.
import {
  isTarget,
  type LeaderStatefulSetOptions,
  type LeaderStatefulSetStep,
  type LeaderWorkerSet,
  type LwsTarget,
} from '../model/index.js';
import type { KubeClients } from './clients.js';
import { adoptRevisionKey, ensureControllerRevision } from './controller-revisions.js';
import { ensureLeaderStatefulSet } from './leader-statefulset.js';
import { readLeaderWorkerSet } from './reads.js';
import { ensureHeadlessService } from './services.js';
import type {
  EnsureLeaderStatefulSetResult,
  EnsureOutcome,
  EnsureRevisionOutcome,
  EnsureWorkerStatefulSetResult,
  Stale,
  WorkerStatefulSetInput,
} from './types.js';
import { ensureWorkerStatefulSet, leaderFirst } from './worker-statefulset.js';

/** The LWS as the API server holds it now, if it is the target: deleted, created again or changed since is stale. */
export async function readTarget(c: KubeClients, target: LwsTarget): Promise<LeaderWorkerSet | Stale> {
  const lws = await readLeaderWorkerSet(c, target.ref);
  return isTarget(lws, target) ? lws : 'stale';
}

export async function ensureControllerRevisionOf(
  c: KubeClients,
  target: LwsTarget,
): Promise<EnsureRevisionOutcome | Stale> {
  const lws = await readTarget(c, target);
  if (lws === 'stale') return lws;
  // The LWS now names the key it adopted: the workflow reads it again and decides on that key.
  if (await adoptRevisionKey(c, lws)) return 'stale';
  return ensureControllerRevision(c, lws);
}

export async function ensureHeadlessServiceOf(c: KubeClients, target: LwsTarget): Promise<EnsureOutcome | Stale> {
  const lws = await readTarget(c, target);
  return lws === 'stale' ? lws : ensureHeadlessService(c, lws);
}

export async function ensureLeaderStatefulSetOf(
  c: KubeClients,
  target: LwsTarget,
  options?: LeaderStatefulSetOptions,
  from?: LeaderStatefulSetStep,
): Promise<EnsureLeaderStatefulSetResult | Stale> {
  const lws = await readTarget(c, target);
  return lws === 'stale' ? lws : ensureLeaderStatefulSet(c, lws, options, from);
}

export async function ensureWorkerStatefulSetOf(
  c: KubeClients,
  input: WorkerStatefulSetInput<LwsTarget>,
): Promise<EnsureWorkerStatefulSetResult | Stale> {
  // The workflow's own read of the target, made just before to decide, stands for a fresh one: the workers are only
  // ever created, never updated, so an LWS changed since cannot be written back over a newer one.
  const recent = input.afterWait ? undefined : c.recentLws?.target(input.lws);
  if (recent !== undefined) return ensureWorkerStatefulSet(c, { ...input, lws: recent });
  if (input.expected === undefined) {
    const lws = await readTarget(c, input.lws);
    return lws === 'stale' ? lws : ensureWorkerStatefulSet(c, { ...input, lws });
  }
  // Read along with the leader's round: one round trip before the create instead of two.
  const { groupIndex, leader } = input;
  // By the size decided on, not the leader's revision's: a group kept on a revision with workers while the LWS's size is
  // now 1 skips the names' check, and its workers may then wait out the StatefulSet controller's backoff (pods-of-names).
  const { podTerminationPolicy, size } = input.expected;
  const [lws, first] = await Promise.all([
    readTarget(c, input.lws),
    leaderFirst(
      c,
      { lwsName: input.lws.ref.name, groupIndex, leader },
      { podTerminationPolicy, withWorkers: size > 1 },
    ),
  ]);
  if (!first.patched) return { outcome: 'leader-gone' };
  return lws === 'stale' ? lws : ensureWorkerStatefulSet(c, { ...input, lws }, first);
}
