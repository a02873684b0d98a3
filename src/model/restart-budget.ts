// spec.leaderWorkerTemplate.maxGroupRestarts (upstream's KEP-820): how many times a group is recreated after a pod of
// it failed before it is left as it is, its pods kept for debugging, until the user asks for it to be rebuilt. Pure:
// the recreate workflow and the status decide with it.
import { ANNOTATION_GROUP_FAILED, ANNOTATION_RECOVER, EVENT_REASONS } from './labels.js';
import { isDeleting, type PodFacts } from './objects.js';

/** Upstream's condition type (KEP-820): some group has spent its restart budget. */
export const CONDITION_FAILED = 'Failed';

/** The key of one group's count in the leader StatefulSet's group-restart-count annotation. */
export function restartKey(revision: string, groupIndex: number): string {
  return `${revision}/${groupIndex}`;
}

/** The counts of the annotation; a value that is not such a map counts as none (a user's edit, say). */
export function restartCounts(annotation: string | undefined): Record<string, number> {
  if (annotation === undefined) return {};
  try {
    const parsed: unknown = JSON.parse(annotation);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    return Object.fromEntries(
      Object.entries(parsed).filter(
        (e): e is [string, number] => typeof e[1] === 'number' && Number.isInteger(e[1]) && e[1] >= 0,
      ),
    );
  } catch {
    return {};
  }
}

/** The annotation with the group's count set, and the counts of other revisions dropped (their groups are gone). */
export function withRestartCount(
  annotation: string | undefined,
  revision: string,
  groupIndex: number,
  count: number,
): string {
  const key = restartKey(revision, groupIndex);
  const kept = Object.entries(restartCounts(annotation)).filter(([k]) => k.startsWith(`${revision}/`) && k !== key);
  const entries: [string, number][] = [...kept, [key, count]];
  const counts = Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : 1)));
  return JSON.stringify(counts);
}

export type RestartJudgement =
  { recreate: true; /** The group's count once recreated. */ count: number } | { recreate: false; message: string };

/** Recreate the group, or leave it failed: `count` is how many times it was recreated already. */
export function judgeGroupRestart(opts: {
  maxGroupRestarts: number | undefined;
  count: number;
  groupIndex: number;
  leaderName: string;
}): RestartJudgement {
  const { maxGroupRestarts: max, count, groupIndex, leaderName } = opts;
  if (max === undefined || count < max) return { recreate: true, count: count + 1 };
  return {
    recreate: false,
    message:
      `group ${groupIndex} was recreated ${count} times (spec.leaderWorkerTemplate.maxGroupRestarts ${max}): it is ` +
      `kept as it is for debugging. To rebuild it: kubectl annotate pod ${leaderName} ${ANNOTATION_RECOVER}=true`,
  };
}

/** The user asked for this failed group to be rebuilt. */
export function recoverRequested(leader: Pick<PodFacts, 'annotations' | 'deletionTimestamp'>): boolean {
  return (
    !isDeleting(leader) &&
    leader.annotations[ANNOTATION_RECOVER] === 'true' &&
    leader.annotations[ANNOTATION_GROUP_FAILED] !== undefined
  );
}

/** The Failed condition's reason and message: the live leaders whose group spent its budget, as their recreate wrote it. */
export function groupsFailedOf(
  leaders: readonly Pick<PodFacts, 'annotations' | 'deletionTimestamp'>[],
): { reason: string; message: string } | undefined {
  const failed = leaders.filter((l) => !isDeleting(l) && l.annotations[ANNOTATION_GROUP_FAILED] !== undefined);
  const [first] = failed;
  if (first === undefined) return undefined;
  const more = failed.length > 1 ? ` (and ${failed.length - 1} more group${failed.length > 2 ? 's' : ''})` : '';
  return {
    reason: EVENT_REASONS.maxGroupRestartsExceeded,
    message: `${first.annotations[ANNOTATION_GROUP_FAILED]}${more}`,
  };
}
