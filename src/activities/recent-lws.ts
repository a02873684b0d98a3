// The LWSs this worker read in the last few seconds. A group's provisioning reads its LWS to decide, then builds the
// worker StatefulSet from it: the build takes the read from here when it is exactly the target decided on (same uid
// and generation, so the same spec), and one GET per group is saved.
import { isTarget, type LeaderWorkerSet, type LwsTarget, type ObjectKey } from '../model/index.js';

/** Long enough to span a provisioning's decision and its build on a loaded API server, short enough to hold little. */
export const RECENT_LWS_TTL_MS = 5_000;

export class RecentLeaderWorkerSets {
  private readonly reads = new Map<string, { lws: LeaderWorkerSet; at: number }>();

  constructor(
    private readonly ttlMs = RECENT_LWS_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The LWS as just read from the API server; a read that found none forgets the name. */
  remember(ref: ObjectKey, lws: LeaderWorkerSet | null): void {
    const at = this.now();
    for (const [key, read] of this.reads) if (at - read.at > this.ttlMs) this.reads.delete(key);
    if (lws === null) this.reads.delete(keyOf(ref));
    else this.reads.set(keyOf(ref), { lws, at });
  }

  /** The LWS read within the TTL, if it is the target; else undefined (read it). */
  target(target: LwsTarget): LeaderWorkerSet | undefined {
    const read = this.reads.get(keyOf(target.ref));
    if (!read || this.now() - read.at > this.ttlMs) return undefined;
    return isTarget(read.lws, target) ? read.lws : undefined;
  }

  get size(): number {
    return this.reads.size;
  }
}

const keyOf = ({ namespace, name }: ObjectKey) => `${namespace}/${name}`;
