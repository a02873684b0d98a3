// What `lws-temporal status` and `history` print: the JSON shapes (--json), the tables, and links into the Temporal
// Web UI. Pure: the commands gather the facts, these functions only lay them out.
import { ordinal } from '../model/index.js';
import type { GroupRow } from './phase.js';
import type { RecreateGroupResult } from '../workflows/recreate-group.js';
import type { ForceDeletedPod } from '../workflows/teardown-group.js';
import type { TimelineEntry } from '../workflows/timeline.js';

/** A failure the user can act on (not found, unreachable): its message is printed as is, exit code 1. */
export class CliError extends Error {
  override name = 'CliError';
}

/** `status --json`: the LWS header and one entry per group. */
export interface StatusReport {
  lws: {
    namespace: string;
    name: string;
    /** spec.podTerminationPolicy, defaulted. */
    policy: string;
    /** spec.replicas, defaulted. */
    replicas: number;
    /** spec.leaderWorkerTemplate.size, defaulted. */
    size: number;
    /** As the controller last wrote status (0 until it has). */
    readyReplicas: number;
    updatedReplicas: number;
    conditions: { type: string; status: string; reason: string; message: string }[];
  };
  groups: GroupRow[];
}

/** One teardown run, as `history --json` prints it. */
export interface TeardownRun {
  workflowId: string;
  runId: string;
  group?: number;
  /** The leader pod it tore down: a recreate run of the same uid deleted it, if there is one. */
  leaderUid?: string;
  /** rebuild, scale-down, rolling-update or delete. */
  lifecycle?: string;
  policy?: string;
  /** Temporal's execution status: RUNNING, COMPLETED, FAILED, TERMINATED, ... */
  status: string;
  /** RFC 3339. */
  startTime: string;
  closeTime?: string;
  /** Leader terminating -> last old pod gone. */
  teardownMs?: number;
  /** Leader terminating -> replacement group ready (rebuilds only). */
  recoveryMs?: number;
  forceDeleted?: ForceDeletedPod[];
  /** The latest timeline step (useful while a run is still going). */
  lastEvent?: string;
  /** Why a run failed, or why its details could not be read. */
  error?: string;
  /** The run's history page in the Temporal Web UI. */
  link: string;
  timeline?: TimelineEntry[];
}

/** One recreateGroup run (restart policy, or the user's recover), as `history --json` prints it. */
export interface RecreateRun {
  workflowId: string;
  runId: string;
  group?: number;
  /** The leader pod it was to delete: the teardown run of the same uid follows, if it did. */
  leaderUid?: string;
  /** The user's recover of a group whose restart budget was spent. */
  recover: boolean;
  status: string;
  /** RFC 3339. */
  startTime: string;
  closeTime?: string;
  /** recreated or recovered (it deleted the leader), failed (restart budget spent: the group is kept as it is), ignored. */
  outcome?: RecreateGroupResult['outcome'];
  /** What the trigger saw: the cause, its pod, and in words ("a container of demo-0-1 restarted"). */
  cause?: RecreateGroupResult['cause'];
  pod?: string;
  reason?: string;
  /** The group's restart count after this recreation, and maxGroupRestarts (only when that is set). */
  restartCount?: number;
  maxGroupRestarts?: number;
  /** How long it waited (backoff between recreations of the group) before it deleted the leader. */
  backoffMs?: number;
  lastEvent?: string;
  error?: string;
  link: string;
  timeline?: TimelineEntry[];
}

export function toJson(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

/**
 * A run's history page in the Web UI: `<ui>/namespaces/<ns>/workflows/<id>/<runId>/history`. Workflow IDs of this
 * project contain slashes, so the ID is one URL-encoded path segment (as the Web UI's own links have it).
 */
export function workflowLink(uiUrl: string, temporalNamespace: string, workflowId: string, runId: string): string {
  const base = uiUrl.replace(/\/+$/, '');
  return `${base}/namespaces/${encodeURIComponent(temporalNamespace)}/workflows/${encodeURIComponent(workflowId)}/${encodeURIComponent(runId)}/history`;
}

/** 850 -> "850 ms", 5120 -> "5.12 s", 95000 -> "1m 35.0s"; undefined -> "-". */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes}m ${((ms - minutes * 60_000) / 1000).toFixed(1)}s`;
}

/** RFC 3339 in UTC to whole seconds: "2026-11-29T08:42:26Z". */
export function formatTime(iso: string | undefined): string {
  if (!iso) return '-';
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Left-aligned columns two spaces apart; the last column is not padded (it may be a long link). */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

const yesNo = (b: boolean | undefined) => (b === undefined ? '-' : b ? 'yes' : 'no');

export function formatStatus(report: StatusReport): string {
  const { lws, groups } = report;
  const conditions =
    lws.conditions.length === 0
      ? ['(none yet)']
      : lws.conditions.map((c) => `${c.type}=${c.status}  ${c.reason}${c.message ? `: ${c.message}` : ''}`);
  const header = [
    `LeaderWorkerSet  ${lws.namespace}/${lws.name}`,
    `Policy           ${lws.policy}`,
    `Replicas         ${lws.replicas} (ready ${lws.readyReplicas}, updated ${lws.updatedReplicas}), size ${lws.size}`,
    `Conditions       ${conditions[0]}`,
    ...conditions.slice(1).map((c) => `                 ${c}`),
  ];
  const backingOff = groups.some((g) => g.backoff);
  const rows = groups.map((g) => [
    String(g.group),
    g.leaderPod ?? '-',
    g.phase,
    `${g.readyPods}/${g.size}`,
    g.workerStatefulSet ?? '-',
    yesNo(g.revisionUpToDate),
    g.restarts ? `${g.restarts.count}${g.restarts.max !== undefined ? `/${g.restarts.max}` : ''}` : '-',
    ...(backingOff ? [g.backoff ? `${g.backoff.at} (${ordinal(g.backoff.streak)} in a row)` : '-'] : []),
  ]);
  const columns = ['GROUP', 'LEADER', 'PHASE', 'READY', 'WORKER STATEFULSET', 'UP TO DATE', 'RESTARTS'];
  const body =
    groups.length === 0 ? 'no groups\n' : table(backingOff ? [...columns, 'RECREATED AT (BACKOFF)'] : columns, rows);
  return header.join('\n') + '\n\n' + body;
}

/** "completed", or for a running one its latest step: "running: leader gone". */
export function statusText(run: Pick<TeardownRun, 'status' | 'lastEvent'>): string {
  const s = run.status.toLowerCase().replace(/_/g, '-');
  return run.status === 'RUNNING' && run.lastEvent ? `${s}: ${run.lastEvent}` : s;
}
