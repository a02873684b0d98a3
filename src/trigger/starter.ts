// Turns decisions into workflow starts and signals on Temporal. Starts are deduplicated by workflow ID on the server
// (a second start of the same ID is rejected); signals to the same reconcile workflow (with start, or plain for a run
// that is to end) are coalesced while one is due or in flight. Failures are retried with backoff and never crash the
// trigger; the periodic resync retries anything lost.
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  type Client,
} from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import type { Logger } from '../log.js';
import { WORKFLOW_TASK_TIMEOUTS } from '../model/crash-recovery.js';
import {
  GroupIndex,
  Lifecycle,
  LwsCluster,
  LwsName,
  LwsNamespace,
  TerminationPolicy,
} from '../workflows/search-attributes.js';
import { changedSignal } from '../workflows/reconcile.js';
import type { StartAction } from './decide.js';

export interface StarterOptions {
  client: Client;
  /** The cluster the workflows act on: their LwsCluster search attribute. */
  cluster: string;
  taskQueue: string;
  log: Logger;
  /** The server has this project's search attributes registered. */
  searchAttributes: boolean;
  /** Called after every start attempt, with the time from the watch event to the server's answer. */
  onStarted?: (action: StartAction, outcome: 'started' | 'deduplicated' | 'signalled', latencyMs: number) => void;
  onError?: (action: StartAction, err: unknown) => void;
  /** The first retry's pause; each further one doubles it, up to 10 s. */
  retryBaseMs?: number;
  /**
   * Ask the server to hand a new workflow's first task straight back with the start (eager workflow start), to the
   * worker in this process: only when the client shares the worker's NativeConnection (`npm start`).
   */
  eagerStart?: boolean;
}

/** A reconcile workflow with a signal due or in flight. */
interface SignalState {
  /**
   * The change due to go next: the latest one's kind counts (an LWS created again after a deletion's plain signal needs
   * a start).
   */
  next?: StartAction;
  /** The next signal goes at once: a change that is not a pod or StatefulSet burst's (see StartAction.batch). */
  urgent: boolean;
  /** Ends the batch window early. */
  wake?: () => void;
}

const maxAttempts = 6;
/**
 * A change of an LWS's pods or StatefulSets is a burst of events (a group's pods all change at once): they go as one
 * signal this long after the first. Every signal is a Temporal Action and a pass of the reconcile, and a signal storm
 * makes the server refuse work ("Workflow is busy"); the status lags by at most this much.
 */
const batchWindowMs = 1_000;

export class WorkflowStarter {
  /** IDs the server already has: skip them without a round trip (a cache; the server stays the authority). */
  private readonly known = new Set<string>();
  private readonly signals = new Map<string, SignalState>();
  private readonly inFlightStarts = new Set<string>();
  /** When each workflow's last signal landed (ms): a run told lately is open and looks again by itself. */
  private readonly signalledAt = new Map<string, number>();

  constructor(private readonly opts: StarterOptions) {}

  /** Fire and forget: the caller (a watch callback) must not wait on Temporal. */
  submit(action: StartAction, observedAt = Date.now()): void {
    if (action.kind !== 'start') {
      const urgent = !action.batch;
      const due = this.signals.get(action.workflowId);
      if (due) {
        due.next = action;
        if (urgent) {
          due.urgent = true;
          due.wake?.();
        }
        return;
      }
      const state: SignalState = { next: action, urgent };
      this.signals.set(action.workflowId, state);
      void this.signalLoop(action.workflowId, state, observedAt);
      return;
    }
    if (this.known.has(action.workflowId) || this.inFlightStarts.has(action.workflowId)) return;
    // A burst of events about one group (its leader and workers all change at once) makes one start, not several
    // that the server would reject as duplicates after doing the work of checking.
    this.inFlightStarts.add(action.workflowId);
    void this.withRetry(action, () => this.start(action, observedAt)).finally(() =>
      this.inFlightStarts.delete(action.workflowId),
    );
  }

  /** Sends what is due, one signal at a time, until nothing is: a batched change first waits out the window. */
  private async signalLoop(workflowId: string, state: SignalState, observedAt: number): Promise<void> {
    try {
      for (let action = state.next; action !== undefined; action = state.next) {
        if (!state.urgent) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, batchWindowMs);
            state.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          state.wake = undefined;
          action = state.next!;
        }
        state.next = undefined;
        state.urgent = false;
        const sending = action;
        const landed = await this.withRetry(sending, () => this.signal(sending, observedAt));
        // Given up: the next resync tells the run again.
        if (!landed) this.signalledAt.delete(workflowId);
        observedAt = Date.now();
      }
    } finally {
      this.signals.delete(workflowId);
    }
  }

  /** Whether a signal to this workflow landed at `sinceMs` or later. */
  signalledSince(workflowId: string, sinceMs: number): boolean {
    return (this.signalledAt.get(workflowId) ?? -Infinity) >= sinceMs;
  }

  /** Forgets the signals that landed before `ms`: the map holds only runs told lately. */
  forgetSignalsBefore(ms: number): void {
    for (const [id, at] of this.signalledAt) if (at < ms) this.signalledAt.delete(id);
  }

  private searchAttributesFor(action: StartAction): SearchAttributePair[] | undefined {
    if (!this.opts.searchAttributes) return undefined;
    const pairs: SearchAttributePair[] = [
      { key: LwsCluster, value: this.opts.cluster },
      { key: LwsNamespace, value: action.ref.namespace },
      { key: LwsName, value: action.ref.name },
    ];
    if (action.groupIndex !== undefined) pairs.push({ key: GroupIndex, value: action.groupIndex });
    if (action.lifecycle) pairs.push({ key: Lifecycle, value: action.lifecycle });
    // Set here, the teardown need not upsert it: each upsert is one more visibility write for the server, in the
    // first second of a burst of teardowns.
    if (action.policy) pairs.push({ key: TerminationPolicy, value: action.policy });
    return pairs;
  }

  private async start(action: StartAction, observedAt: number): Promise<void> {
    const { client, taskQueue, log } = this.opts;
    try {
      const handle = await client.workflow.start(action.workflowType, {
        taskQueue,
        workflowId: action.workflowId,
        args: action.args,
        staticSummary: action.summary,
        typedSearchAttributes: this.searchAttributesFor(action),
        // A lifecycle runs once per incarnation: the ID names the object's uid, so a later start is a repeat.
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        // Each lifecycle's own: a teardown's first task, with the Parallel delete, moves off a dead worker in 2 s.
        workflowTaskTimeout: WORKFLOW_TASK_TIMEOUTS[action.workflowType],
        requestEagerStart: this.opts.eagerStart,
      });
      this.remember(action.workflowId);
      const latencyMs = Date.now() - observedAt;
      log.info('workflow started', {
        workflowId: action.workflowId,
        reason: action.reason,
        latencyMs,
        // The server handed its first task to this process's worker with the start: no task queue round trip.
        ...(handle.eagerlyStarted ? { eager: true } : {}),
      });
      this.opts.onStarted?.(action, 'started', latencyMs);
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      this.remember(action.workflowId);
      log.debug('workflow already started', { workflowId: action.workflowId, reason: action.reason });
      this.opts.onStarted?.(action, 'deduplicated', Date.now() - observedAt);
    }
  }

  private async signal(action: StartAction, observedAt: number): Promise<void> {
    const { client, taskQueue, log } = this.opts;
    if (action.kind === 'signal') {
      try {
        await client.workflow.getHandle(action.workflowId).signal(changedSignal);
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
        // Ended already: nothing left to tell.
        log.debug('no open workflow to signal', { workflowId: action.workflowId, reason: action.reason });
        this.signalledAt.delete(action.workflowId);
        return;
      }
    } else {
      await client.workflow.signalWithStart(action.workflowType, {
        taskQueue,
        workflowId: action.workflowId,
        args: action.args,
        signal: changedSignal,
        signalArgs: [],
        workflowTaskTimeout: WORKFLOW_TASK_TIMEOUTS[action.workflowType],
        staticSummary: action.summary,
        typedSearchAttributes: this.searchAttributesFor(action),
      });
    }
    this.signalledAt.set(action.workflowId, Date.now());
    const latencyMs = Date.now() - observedAt;
    log.debug('workflow signalled', { workflowId: action.workflowId, reason: action.reason, latencyMs });
    this.opts.onStarted?.(action, 'signalled', latencyMs);
  }

  private remember(id: string): void {
    this.known.add(id);
    // Bounded: forgetting an ID only costs one rejected start later.
    if (this.known.size > 50_000) this.known.delete(this.known.values().next().value as string);
  }

  /** Resolves with whether `fn` landed, or false once it gave up. */
  private async withRetry(action: StartAction, fn: () => Promise<void>): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        await fn();
        return true;
      } catch (err) {
        if (attempt >= maxAttempts) {
          this.opts.log.error('giving up on a workflow start until the next resync', {
            workflowId: action.workflowId,
            error: err instanceof Error ? err.message : String(err),
            hint: 'check that Temporal is reachable (TEMPORAL_ADDRESS) and a worker serves the task queue',
          });
          this.opts.onError?.(action, err);
          return false;
        }
        this.opts.log.warn('workflow start failed; retrying', {
          workflowId: action.workflowId,
          attempt,
          error: err instanceof Error ? err.message : String(err),
        });
        await new Promise((r) => setTimeout(r, Math.min((this.opts.retryBaseMs ?? 400) * 2 ** (attempt - 1), 10_000)));
      }
    }
  }
}
