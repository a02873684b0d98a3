// Backoff between recreations of the same group (ours: spec.leaderWorkerTemplate.groupRestartBackoff). Recreating a
// group replaces its pods, and with them the kubelet's CrashLoopBackOff, so a group that fails at start would be
// rebuilt again and again with no pause. The first recreation is at once; each further one within resetAfterSeconds
// of the previous waits twice as long as the one before. Pure: the recreate workflow and the status decide with it.
import { restartKey } from './restart-budget.js';
import type { GroupRestartBackoff } from './types.js';

/** The kubelet's CrashLoopBackOff values (10 s doubling to 5 min, forgotten after 10 min), which users already know. */
export const DEFAULT_GROUP_RESTART_BACKOFF: Required<GroupRestartBackoff> = {
  initialIntervalSeconds: 10,
  maximumIntervalSeconds: 300,
  resetAfterSeconds: 600,
};

/** One group's last recreation: when its leader is deleted (or will be, once the wait ends), and its rank in a row. */
export interface Recreation {
  at: string;
  streak: number;
}

export interface BackoffJudgement {
  /** This recreation's rank in a row: 1 for the first, or the first after resetAfterSeconds. */
  streak: number;
  /** How long to wait before the leader is deleted. */
  delayMs: number;
}

/** The settings with each unset field at its default. */
export function groupRestartBackoff(backoff: GroupRestartBackoff | undefined): Required<GroupRestartBackoff> {
  return {
    initialIntervalSeconds: backoff?.initialIntervalSeconds ?? DEFAULT_GROUP_RESTART_BACKOFF.initialIntervalSeconds,
    maximumIntervalSeconds: backoff?.maximumIntervalSeconds ?? DEFAULT_GROUP_RESTART_BACKOFF.maximumIntervalSeconds,
    resetAfterSeconds: backoff?.resetAfterSeconds ?? DEFAULT_GROUP_RESTART_BACKOFF.resetAfterSeconds,
  };
}

/** The recreations of the annotation; an entry that is not such a record counts as none (a user's edit, say). */
export function recreationsOf(annotation: string | undefined): Record<string, Recreation> {
  if (annotation === undefined) return {};
  try {
    const parsed: unknown = JSON.parse(annotation);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    return Object.fromEntries(
      Object.entries(parsed as Record<string, unknown>).filter((e): e is [string, Recreation] => isRecreation(e[1])),
    );
  } catch {
    return {};
  }
}

function isRecreation(value: unknown): value is Recreation {
  const r = value as Partial<Recreation> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.at === 'string' &&
    !Number.isNaN(Date.parse(r.at)) &&
    typeof r.streak === 'number' &&
    Number.isInteger(r.streak) &&
    r.streak >= 1
  );
}

/**
 * The annotation with the group's recreation set (or removed: undefined), and other revisions' dropped (their groups
 * are gone).
 */
export function withRecreation(
  annotation: string | undefined,
  revision: string,
  groupIndex: number,
  recreation: Recreation | undefined,
): string {
  const key = restartKey(revision, groupIndex);
  const kept = Object.entries(recreationsOf(annotation)).filter(([k]) => k.startsWith(`${revision}/`) && k !== key);
  const entries: [string, Recreation][] = recreation ? [...kept, [key, recreation]] : kept;
  return JSON.stringify(Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : 1))));
}

/** The wait before this recreation, from the group's last one (`last`), now (ms) and the LWS's settings. */
export function judgeBackoff(opts: {
  last: Recreation | undefined;
  now: number;
  backoff: GroupRestartBackoff | undefined;
}): BackoffJudgement {
  const { initialIntervalSeconds, maximumIntervalSeconds, resetAfterSeconds } = groupRestartBackoff(opts.backoff);
  const last = opts.last;
  const inARow = last !== undefined && opts.now - Date.parse(last.at) < resetAfterSeconds * 1000;
  const streak = inARow ? last.streak + 1 : 1;
  // 2^(streak - 2) intervals from the second on; the exponent is bounded so that a long streak cannot overflow.
  const seconds =
    streak === 1 ? 0 : Math.min(initialIntervalSeconds * 2 ** Math.min(streak - 2, 30), maximumIntervalSeconds);
  return { streak, delayMs: seconds * 1000 };
}

/** When the group's leader is to be deleted, if its recreation is waiting now: for the status. */
export function backoffUntil(
  annotation: string | undefined,
  revision: string,
  groupIndex: number,
  now: number,
): Recreation | undefined {
  const recreation = recreationsOf(annotation)[restartKey(revision, groupIndex)];
  return recreation && Date.parse(recreation.at) > now ? recreation : undefined;
}

/** "3rd": a recreation's rank in a row, for messages. */
export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}
