// `lws-temporal history`: the rebuilds of each group of one LWS, newest first, joined from its recreateGroup and
// teardownGroup runs. A recreate that deleted leader <uid> is followed by the teardown of that same <uid>: the two are
// one rebuild. A teardown alone is a leader deleted by someone else, a scale-down, a rolling update or the LWS's
// deletion. Pure: history.ts reads the runs, these functions join them and lay them out.
import { leaderPodName } from '../model/index.js';
import type { TimelineEntry } from '../workflows/timeline.js';
import { formatDuration, formatTime, statusText, table, type RecreateRun, type TeardownRun } from './format.js';

/** What started a rebuild. */
export type RecoveryCause =
  | 'container-restart'
  | 'pod-deletion'
  | 'recover'
  | 'leader-deletion'
  | 'scale-down'
  | 'rolling-update'
  | 'delete'
  | 'unknown';

/**
 * rebuilt: torn down, and the replacement group became ready. not-rebuilt: torn down, no replacement came (the notes
 * say why). torn-down: a scale-down, rolling update or deletion, whose teardown waits for no replacement. running: a
 * run still goes (a recreate in its backoff, or a teardown). budget-spent: the recreate found maxGroupRestarts reached
 * and left the group as it is. ignored: the recreate did nothing. error: a run failed, or could not be read.
 */
export type RecoveryOutcome =
  'rebuilt' | 'not-rebuilt' | 'torn-down' | 'running' | 'budget-spent' | 'ignored' | 'error';

/** One rebuild of a group (or one recreate that did not rebuild it), as `history --json` prints it. */
export interface RecoveryEntry {
  /** RFC 3339: when the recreate started (the failure was seen), else when the leader's deletion was made. */
  at: string;
  cause: RecoveryCause;
  /** The pod whose restart or deletion started it; the leader for a recover or a teardown alone. */
  pod?: string;
  /** In words: the recreate's reason, else what the teardown's lifecycle says. */
  reason: string;
  outcome: RecoveryOutcome;
  policy?: string;
  backoffMs?: number;
  teardownMs?: number;
  recoveryMs?: number;
  /** The restart budget after this recreation (only with maxGroupRestarts set). */
  restartCount?: number;
  maxGroupRestarts?: number;
  restartsLeft?: number;
  /** Force-deleted pods, why no replacement came or why nothing was done, errors. */
  notes: string[];
  recreate?: RecreateRun;
  teardown?: TeardownRun;
}

export interface GroupSummary {
  /** Entries that tore the group down or are doing so: every outcome but budget-spent and ignored. */
  rebuilds: number;
  /** Of those, started by the restart policy: a container restart or a deleted worker pod. */
  fromRestarts: number;
  byCause: Partial<Record<RecoveryCause, number>>;
  /** Recreates that found maxGroupRestarts reached, and the newest of them. */
  budgetSpent: number;
  budgetSpentAt?: string;
  ignored: number;
  /** The oldest and newest rebuild listed. */
  since?: string;
  until?: string;
  /** As the newest recreate that recorded the budget left it (only with maxGroupRestarts set). */
  restartsLeft?: number;
  maxGroupRestarts?: number;
}

export interface GroupRecovery {
  group?: number;
  summary: GroupSummary;
  /** Newest first. */
  entries: RecoveryEntry[];
}

/** `history --json`: the recovery report of one LWS, one entry per group that has any run listed. */
export interface RecoveryReport {
  lws: { namespace: string; name: string };
  temporalNamespace: string;
  groups: GroupRecovery[];
}

const RESTART_CAUSES: readonly RecoveryCause[] = ['container-restart', 'pod-deletion'];

const CAUSE_OF_LIFECYCLE: Record<string, RecoveryCause> = {
  rebuild: 'leader-deletion',
  'scale-down': 'scale-down',
  'rolling-update': 'rolling-update',
  delete: 'delete',
};

/** What a teardown alone says happened, by its lifecycle. */
function teardownReason(cause: RecoveryCause, leader: string | undefined): string {
  switch (cause) {
    case 'leader-deletion':
      return `leader pod ${leader ?? '?'} was deleted, not by the controller`;
    case 'scale-down':
      return 'scale-down (spec.replicas)';
    case 'rolling-update':
      return 'rolling update';
    case 'delete':
      return 'the LeaderWorkerSet was deleted';
    default:
      return 'a teardown of unknown lifecycle';
  }
}

/** The cause and pod of a recreate, as the trigger passed them. */
function recreateCause(run: RecreateRun, leader: string | undefined): { cause: RecoveryCause; pod?: string } {
  if (run.recover) return { cause: 'recover', pod: run.pod ?? leader };
  return { cause: run.cause ?? 'unknown', ...(run.pod !== undefined && { pod: run.pod }) };
}

const deletedLeader = (run: RecreateRun) => run.outcome === 'recreated' || run.outcome === 'recovered';

function outcomeOf(recreate: RecreateRun | undefined, teardown: TeardownRun | undefined): RecoveryOutcome {
  if (recreate?.outcome === 'failed') return 'budget-spent';
  if (recreate?.outcome === 'ignored') return 'ignored';
  if (teardown) {
    if (teardown.status === 'RUNNING') return 'running';
    if (teardown.status !== 'COMPLETED' || teardown.error) return 'error';
    if (teardown.lifecycle !== 'rebuild') return 'torn-down';
    return teardown.recoveryMs === undefined ? 'not-rebuilt' : 'rebuilt';
  }
  // A recreate that deleted the leader: its teardown follows, and visibility may not list it yet.
  if (recreate && (recreate.status === 'RUNNING' || (recreate.status === 'COMPLETED' && deletedLeader(recreate)))) {
    return 'running';
  }
  return 'error';
}

const skips = (timeline: TimelineEntry[] | undefined) =>
  (timeline ?? []).filter((e) => e.event === 'skipped' && e.detail).map((e) => e.detail ?? '');

function notesOf(recreate: RecreateRun | undefined, teardown: TeardownRun | undefined): string[] {
  const notes: string[] = [];
  for (const f of teardown?.forceDeleted ?? []) notes.push(`force-deleted ${f.pod} on node ${f.node}: ${f.signal}`);
  notes.push(...skips(teardown?.timeline));
  if (recreate?.outcome === 'ignored') notes.push(...skips(recreate.timeline).map((s) => `ignored: ${s}`));
  if (recreate && teardown?.lifecycle && teardown.lifecycle !== 'rebuild') {
    notes.push(`its teardown was judged a ${teardown.lifecycle}`);
  }
  if (recreate && !teardown && recreate.status === 'COMPLETED' && deletedLeader(recreate)) {
    notes.push(`no teardown run of leader ${recreate.leaderUid ?? '?'} listed yet`);
  }
  if (recreate?.error) notes.push(`recreate run: ${recreate.error}`);
  if (teardown?.error) notes.push(`teardown run: ${teardown.error}`);
  return notes;
}

/** One entry from a recreate, a teardown, or the two joined (at least one of them). */
export function recoveryEntry(lwsName: string, recreate?: RecreateRun, teardown?: TeardownRun): RecoveryEntry {
  const group = recreate?.group ?? teardown?.group;
  const leader = group === undefined ? undefined : leaderPodName(lwsName, group);
  let cause: RecoveryCause;
  let pod: string | undefined;
  let reason: string;
  if (recreate) {
    ({ cause, pod } = recreateCause(recreate, leader));
    reason = recreate.reason ?? 'a recreate whose reason could not be read';
  } else {
    cause = CAUSE_OF_LIFECYCLE[teardown?.lifecycle ?? ''] ?? 'unknown';
    pod = leader;
    reason = teardownReason(cause, leader);
  }
  const { restartCount, maxGroupRestarts } = recreate ?? {};
  const restartsLeft =
    restartCount !== undefined && maxGroupRestarts !== undefined
      ? Math.max(maxGroupRestarts - restartCount, 0)
      : undefined;
  const leaderTerminating = teardown?.timeline?.find((e) => e.event === 'leader terminating')?.at;
  return {
    at: recreate?.startTime ?? leaderTerminating ?? teardown?.startTime ?? '',
    cause,
    pod,
    reason,
    outcome: outcomeOf(recreate, teardown),
    policy: teardown?.policy,
    backoffMs: recreate?.backoffMs,
    teardownMs: teardown?.teardownMs,
    recoveryMs: teardown?.recoveryMs,
    restartCount,
    maxGroupRestarts,
    restartsLeft,
    notes: notesOf(recreate, teardown),
    recreate,
    teardown,
  };
}

const runKey = (group: number | undefined, uid: string | undefined) => `${group ?? '?'}/${uid ?? '?'}`;

/**
 * Which recreate a teardown belongs to: of those of its leader that may have deleted it (not failed, not ignored),
 * the one that did, else one still running or unread; the newest if several.
 */
function recreateOf(teardown: TeardownRun, byLeader: Map<string, RecreateRun[]>): RecreateRun | undefined {
  const candidates = (byLeader.get(runKey(teardown.group, teardown.leaderUid)) ?? []).filter(
    (r) => r.outcome !== 'failed' && r.outcome !== 'ignored',
  );
  const rank = (r: RecreateRun) => (deletedLeader(r) ? 0 : 1);
  return candidates.sort((a, b) => rank(a) - rank(b) || Date.parse(b.startTime) - Date.parse(a.startTime))[0];
}

/** Every run in one entry: each teardown with the recreate that deleted its leader, and the other recreates alone. */
export function joinRuns(lwsName: string, teardowns: TeardownRun[], recreates: RecreateRun[]): RecoveryEntry[] {
  const byLeader = new Map<string, RecreateRun[]>();
  for (const r of recreates) {
    const key = runKey(r.group, r.leaderUid);
    byLeader.set(key, [...(byLeader.get(key) ?? []), r]);
  }
  const joined = new Set<RecreateRun>();
  const entries = teardowns.map((t) => {
    const recreate = t.leaderUid === undefined ? undefined : recreateOf(t, byLeader);
    if (recreate) joined.add(recreate);
    return recoveryEntry(lwsName, recreate, t);
  });
  for (const r of recreates) if (!joined.has(r)) entries.push(recoveryEntry(lwsName, r, undefined));
  return entries;
}

const newestFirst = (a: RecoveryEntry, b: RecoveryEntry) =>
  Date.parse(b.at) - Date.parse(a.at) ||
  ((a.recreate ?? a.teardown)?.workflowId ?? '').localeCompare((b.recreate ?? b.teardown)?.workflowId ?? '');

const isRebuild = (e: RecoveryEntry) => e.outcome !== 'budget-spent' && e.outcome !== 'ignored';

/** `entries` newest first. */
export function groupSummary(entries: RecoveryEntry[]): GroupSummary {
  const rebuilds = entries.filter(isRebuild);
  const counts = new Map<RecoveryCause, number>();
  for (const e of rebuilds) counts.set(e.cause, (counts.get(e.cause) ?? 0) + 1);
  // The most frequent cause first.
  const byCause = Object.fromEntries([...counts].sort(([, a], [, b]) => b - a));
  const spent = entries.filter((e) => e.outcome === 'budget-spent');
  const budget = entries.find((e) => e.restartsLeft !== undefined);
  // The count is kept per template revision: a rolling update since then starts it again.
  const updatedSince =
    budget &&
    entries.some((e) => e.teardown?.lifecycle === 'rolling-update' && Date.parse(e.at) > Date.parse(budget.at));
  return {
    rebuilds: rebuilds.length,
    fromRestarts: rebuilds.filter((e) => RESTART_CAUSES.includes(e.cause)).length,
    byCause,
    budgetSpent: spent.length,
    budgetSpentAt: spent[0]?.at,
    ignored: entries.filter((e) => e.outcome === 'ignored').length,
    since: rebuilds.at(-1)?.at,
    until: rebuilds[0]?.at,
    restartsLeft: updatedSince ? budget.maxGroupRestarts : budget?.restartsLeft,
    maxGroupRestarts: budget?.maxGroupRestarts,
  };
}

/** The report: one entry per group in group order, its entries newest first. */
export function buildRecoveryReport(opts: {
  lws: { namespace: string; name: string };
  temporalNamespace: string;
  teardowns: TeardownRun[];
  recreates: RecreateRun[];
}): RecoveryReport {
  const byGroup = new Map<number | undefined, RecoveryEntry[]>();
  for (const e of joinRuns(opts.lws.name, opts.teardowns, opts.recreates)) {
    const group = e.recreate?.group ?? e.teardown?.group;
    byGroup.set(group, [...(byGroup.get(group) ?? []), e]);
  }
  const groups = [...byGroup.entries()]
    .sort(([a], [b]) => (a ?? Infinity) - (b ?? Infinity))
    .map(([group, list]) => {
      const entries = list.sort(newestFirst);
      return { group, summary: groupSummary(entries), entries };
    });
  return {
    lws: { namespace: opts.lws.namespace, name: opts.lws.name },
    temporalNamespace: opts.temporalNamespace,
    groups,
  };
}

const CAUSE_WORDS: Record<RecoveryCause, [string, string]> = {
  'container-restart': ['container restart', 'container restarts'],
  'pod-deletion': ['worker pod deletion', 'worker pod deletions'],
  recover: ['recover', 'recovers'],
  'leader-deletion': ['leader deletion', 'leader deletions'],
  'scale-down': ['scale-down', 'scale-downs'],
  'rolling-update': ['rolling update', 'rolling updates'],
  delete: ['LWS deletion', 'LWS deletions'],
  unknown: ['other', 'other'],
};

const counted = (n: number, [one, many]: [string, string]) => `${n} ${n === 1 ? one : many}`;

/** The line above a group's table: how many rebuilds, why, and what is left of the restart budget. */
export function summaryLine(group: number | undefined, s: GroupSummary): string {
  const causes = Object.entries(s.byCause).map(([c, n]) => counted(n, CAUSE_WORDS[c as RecoveryCause]));
  const when =
    s.since === undefined
      ? ''
      : s.since === s.until
        ? ` at ${formatTime(s.since)}`
        : ` from ${formatTime(s.since)} to ${formatTime(s.until)}`;
  const parts = [
    `group ${group ?? '?'}: ${counted(s.rebuilds, ['rebuild', 'rebuilds'])}${when}${causes.length ? ` (${causes.join(', ')})` : ''}`,
    `${s.fromRestarts} from restarts`,
  ];
  if (s.maxGroupRestarts !== undefined) parts.push(`restarts left ${s.restartsLeft ?? '?'} of ${s.maxGroupRestarts}`);
  if (s.budgetSpent > 0) {
    const times = s.budgetSpent === 1 ? '' : `${s.budgetSpent} times, last `;
    parts.push(`budget spent ${times}at ${formatTime(s.budgetSpentAt)}`);
  }
  if (s.ignored > 0) parts.push(`${counted(s.ignored, ['ignored recreate', 'ignored recreates'])} (in --json)`);
  return parts.join('; ');
}

const CAUSE_LABEL: Record<RecoveryCause, string> = {
  'container-restart': 'container restart',
  'pod-deletion': 'worker pod deleted',
  recover: 'recover',
  'leader-deletion': 'leader deleted',
  'scale-down': 'scale-down',
  'rolling-update': 'rolling update',
  delete: 'LWS deleted',
  unknown: 'other',
};

function whyText(e: RecoveryEntry): string {
  if (e.cause === 'unknown') return e.reason;
  return e.pod ? `${CAUSE_LABEL[e.cause]} (${e.pod})` : CAUSE_LABEL[e.cause];
}

function outcomeText(e: RecoveryEntry): string {
  switch (e.outcome) {
    case 'running': {
      const run = e.teardown ?? e.recreate;
      return run?.status === 'RUNNING' ? statusText(run) : 'running';
    }
    case 'error': {
      const run = e.teardown && e.teardown.status !== 'COMPLETED' ? e.teardown : (e.recreate ?? e.teardown);
      return run && run.status !== 'COMPLETED' ? statusText(run) : 'unreadable';
    }
    default:
      return e.outcome.replace(/-/g, ' ');
  }
}

const leftText = (e: RecoveryEntry) =>
  e.restartsLeft === undefined || e.maxGroupRestarts === undefined ? '-' : `${e.restartsLeft} of ${e.maxGroupRestarts}`;

const HEADERS = ['WHEN (UTC)', 'WHY', 'POLICY', 'BACKOFF', 'TEARDOWN', 'RECOVERY', 'LEFT', 'STATUS'];

/** A group: its summary line, then a row per rebuild (ignored recreates only in JSON), its notes and links below it. */
function formatGroup(g: GroupRecovery): string {
  const shown = g.entries.filter((e) => e.outcome !== 'ignored');
  const lines = [summaryLine(g.group, g.summary)];
  if (shown.length > 0) {
    const rows = shown.map((e) => [
      formatTime(e.at),
      whyText(e),
      e.policy ?? '-',
      formatDuration(e.backoffMs),
      formatDuration(e.teardownMs),
      formatDuration(e.recoveryMs),
      leftText(e),
      outcomeText(e),
    ]);
    const [header = '', ...rowLines] = table(HEADERS, rows).trimEnd().split('\n');
    lines.push(`  ${header}`);
    shown.forEach((e, i) => {
      lines.push(`  ${rowLines[i] ?? ''}`);
      for (const note of e.notes) lines.push(`      note: ${note}`);
      if (e.recreate) lines.push(`      recreate  ${e.recreate.link}`);
      if (e.teardown) lines.push(`      teardown  ${e.teardown.link}`);
    });
  }
  return lines.join('\n') + '\n';
}

export function formatRecoveryReport(report: RecoveryReport): string {
  const { lws, groups } = report;
  if (groups.length === 0) {
    return `no recreate or teardown runs of ${lws.namespace}/${lws.name} in Temporal namespace ${report.temporalNamespace}\n`;
  }
  return groups.map(formatGroup).join('\n');
}
