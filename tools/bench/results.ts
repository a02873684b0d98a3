// The benchmark's result document (docs/benchmarks.json) and the statistics it uses.
import type { TemporalTarget } from '../stack/temporal-target.js';
import type { ProvisionPhases } from './provision-phases.js';
import type { PodCreates } from './pod-creates.js';
import type { StartFloor } from './temporal-floor.js';

export interface GroupSample {
  /**
   * When its round's deletions (or a rolling update's template change) went out, ms since the epoch. The times below
   * count from it, except in a rolling update: there they count from the group's own leader deletion.
   */
  roundStartedAt: number;
  /** Rolling updates: the template change -> the StatefulSet controller deleted this group's leader. */
  updateToLeaderDeletionMs?: number;
  /** Leader deletion (or scale-down / LWS deletion) -> last old pod of the group gone. */
  teardownMs: number;
  /**
   * -> the API server answered the delete of this group's leader (rebuilds only): how far from "at once" the
   * benchmark's own deletes were.
   */
  leaderDeletedMs?: number;
  /** -> the old leader gone. */
  leaderGoneMs: number;
  /** -> the first old worker terminating. */
  workersTerminatingMs: number;
  /** -> this project's teardown run started on the Temporal server (its history's first event). */
  teardownStartedMs?: number;
  /** -> a worker took that run's first workflow task, whose first call is the Parallel delete. */
  firstTaskStartedMs?: number;
  /** -> a new group of `size` Ready pods (rebuilds and rolling updates). */
  recoveryMs?: number;
  /** Leader pods the group had from the deletion until it was Ready again: 1 unless something rebuilt it twice. */
  newLeaders?: number;
  /** Scale scenarios: how many groups its round rebuilt at once (the others stood). */
  rebuiltAtOnce?: number;
}

/** How the cost grows with the groups standing: a scale scenario's figures, of the controller that ran it. */
export interface ScaleFigures {
  /** Resident memory of the controller's processes once the rounds were over, every group standing, MB. */
  residentMb: Record<string, number>;
  /**
   * Requests the controller made to the API server, by its own client-side count (this project's
   * lws_kube_api_requests_total, upstream's rest_client_requests_total): provisioning the groups, and the rounds.
   */
  apiRequests: { provisioning: number; rounds: number };
  /** The same by kind (this project: `verb resource`; upstream: its method); absent in results from before. */
  apiRequestsByKind?: { provisioning: Record<string, number>; rounds: Record<string, number> };
  /** Temporal history bytes (as the server counts a history's size) by lifecycle: runs and bytes. This project only. */
  historyBytes?: Record<string, { runs: number; bytes: number }>;
  /** How the workflow tasks of each lifecycle ended, summed over its runs (this project only; absent before). */
  workflowTasks?: Record<string, WorkflowTaskCounts>;
}

/**
 * Workflow tasks by how they ended, summed over `runs` histories. A task that timed out after it started reran
 * whatever local activities had not been recorded; one that timed out on a sticky queue (schedule-to-start) only moved
 * to the shared queue.
 */
export interface WorkflowTaskCounts {
  runs: number;
  completed: number;
  startToCloseTimedOut: number;
  scheduleToStartTimedOut: number;
  failed: number;
}

export type ScenarioKind = 'rebuild' | 'scale-down' | 'delete' | 'rolling-update';

/** One rolling update of every group: how long it took and how many groups it kept Ready. */
export interface RolloutRound {
  /** The template change -> every group Ready on the new template, no old pod and no surge group left. */
  durationMs: number;
  /** The fewest groups of `size` Ready pods (surge groups included) at any moment of the rollout. */
  fewestReadyGroups: number;
}

export interface ScenarioResult {
  id: string;
  title: string;
  kind: ScenarioKind;
  groups: number;
  size: number;
  /** This project's policy; upstream's rows say Sequential, its only behaviour. */
  policy: 'Sequential' | 'Parallel';
  /** `upstream`: measured with upstream LeaderWorkerSet's controller (`--against upstream`); else this project. */
  controller?: 'upstream';
  /** The LWS created -> its groups Ready, provisioned from nothing alone; absent in results from before. */
  provisionMs?: number;
  /** Where that provisioning spent its time, from the pods' arrival in the bench's watch. */
  provisionPhases?: ProvisionPhases;
  /** The machine's and each process's CPU while that provisioning ran (the LWS created -> its groups Ready). */
  provisionLoad?: ScenarioLoad;
  /** The pod creates of that provisioning as the API server timed them. */
  provisionPodCreates?: PodCreates;
  /**
   * Temporal Actions (the server's `action` counter, what Temporal Cloud bills) by action_type: of that provisioning,
   * and of this policy's rounds, each from its start until the controller's workflows had closed after it. This
   * project's only; none for the rounds of `--together`.
   */
  provisionActions?: Record<string, number>;
  actions?: Record<string, number>;
  samples: GroupSample[];
  /**
   * Parallel rebuilds: the machine's and each process's CPU during each round's share, from the deletions until every
   * group of the round had a worker terminating.
   */
  shareLoads?: ScenarioLoad[];
  teardownP50Ms: number;
  teardownP95Ms: number;
  recoveryP50Ms?: number;
  recoveryP95Ms?: number;
  /** The trigger's reaction (watch event -> workflow started) for every start about this LWS, in ms. */
  reactionsMs: number[];
  /** Rolling updates: the limits the LWS had, and each round. */
  rollout?: { maxUnavailable: number; maxSurge: number; rounds: RolloutRound[] };
  /** Scale scenarios (`--scale`). */
  scale?: ScaleFigures;
}

/** CPU while a scenario's rounds ran, from the first deletion until every group's samples were in. */
export interface ScenarioLoad {
  seconds: number;
  /** Share of all CPUs' time that was busy (not idle, not waiting for I/O). */
  machineBusyPercent: number;
  /**
   * CPU seconds of each process of the stack (kube-apiserver, etcd, ..., worker, trigger, bench), and of Temporal's:
   * `temporal` for the dev server, `temporal-<service>` for the cluster's (PostgreSQL, the UI server), each with its
   * descendants.
   */
  cpuSeconds: Record<string, number>;
}

export interface ProcessStats {
  /** VmHWM: the most resident memory the process ever had. */
  peakRssMb: number;
  /** User + system CPU time. */
  cpuSeconds: number;
}

export interface BenchResult {
  command: string;
  date: string;
  machine: { cpus: number; model: string; memoryGiB: number };
  versions: Record<string, string>;
  graceSeconds: number;
  quick: boolean;
  /** Worker and trigger ran compiled (dist/, workflow bundle built ahead of time), not through tsx. */
  compiled: boolean;
  /** Worker and trigger ran in one process (`--one-process`: `dist/main.js`, the entry `npm start` runs). */
  oneProcess: boolean;
  /** Both policies' groups rebuilt at the same moment (`--together`); otherwise each policy's round runs alone. */
  together?: boolean;
  /** Which Temporal the run measured (`--temporal`); absent in results from before the flag: the dev server. */
  temporal?: {
    target: TemporalTarget;
    namespace: string;
    /** The Temporal CLI's (dev server) or temporal-server's (cluster). */
    version: string;
    /** Where its history lives: `SQLite`, or PostgreSQL and its version. */
    database: string;
    /** The names its processes' CPU has in `load`. */
    processes: string[];
  };
  durationMs: number;
  scenarios: ScenarioResult[];
  trigger: {
    reactions: number;
    reactionP50Ms: number;
    reactionP99Ms: number;
    /** Starts whose first workflow task came back with the start, to the worker in the same process (one process). */
    eagerStarts?: number;
  };
  /** Workflow starts on the idle Temporal server, before the scenarios: the floor under the trigger's reaction. */
  temporalStartFloor: StartFloor;
  /** By process: `worker` and `trigger`, or `worker+trigger` when they ran in one. */
  processes: Record<string, ProcessStats>;
  /** By scenario id (both policies ran at once). */
  load: Record<string, ScenarioLoad>;
  /** `--against upstream`: upstream's controller, run after this project's on the same cluster. */
  upstream?: {
    version: string;
    /** CRD swap, process start, webhooks answering. */
    startMs: number;
    /** Its process over all of its scenarios. */
    process: ProcessStats;
    /** By scenario id, while upstream's rounds ran (its process as `lws-upstream`). */
    load: Record<string, ScenarioLoad>;
  };
}

/** The process name of upstream's controller in `ScenarioLoad.cpuSeconds`. */
export const UPSTREAM_PROCESS = 'lws-upstream';

/** Nearest-rank percentile; 0 for no values. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

/** The Temporal a result measured: runs from before `--temporal` had the dev server. */
export function temporalTarget(result: BenchResult): TemporalTarget {
  return result.temporal?.target ?? 'dev-server';
}

/** A process of Temporal in `ScenarioLoad.cpuSeconds`: the dev server's `temporal`, or one of a cluster's. */
export function isTemporalProcess(name: string): boolean {
  return name === 'temporal' || name.startsWith('temporal-');
}

/** Temporal's CPU seconds in a scenario, all of its processes together: one figure for the dev server and a cluster. */
export function temporalCpuSeconds(load: ScenarioLoad): number | undefined {
  const own = Object.entries(load.cpuSeconds).filter(([name]) => isTemporalProcess(name));
  if (own.length === 0) return undefined;
  return Math.round(own.reduce((sum, [, seconds]) => sum + seconds, 0) * 100) / 100;
}

/**
 * Temporal's CPU seconds per group lifecycle of a scenario: its CPU while the rounds ran, over the groups' samples of
 * both policies (each one group's teardown, and its rebuild where the scenario has one), which the same window holds;
 * not upstream's.
 */
export function temporalCpuPerLifecycle(result: BenchResult, id: string): number | undefined {
  const load = result.load[id];
  const cpu = load && temporalCpuSeconds(load);
  // Upstream's rounds (`--against upstream`) ran in a window of their own, with no Temporal work.
  const lifecycles = result.scenarios
    .filter((r) => r.id === id && r.controller !== 'upstream')
    .reduce((n, r) => n + r.samples.length, 0);
  return cpu === undefined || lifecycles === 0 ? undefined : cpu / lifecycles;
}
