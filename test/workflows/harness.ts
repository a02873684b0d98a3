// What the workflow tests share: one time-skipping test server per file, a fresh task queue and worker per test
// whose activities are a FakeCluster, and the workflow code bundled once per mocha process (bundling takes seconds,
// so a bundle per test would take most of the suite's time; the bundle is built from the same workflowsPath).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { temporal } from '@temporalio/proto';
import type { Workflow, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { startTimeSkippingEnvironment } from '../../tools/stack/temporal.js';
import { workflowBundleOptions } from '../../src/worker/run.js';
import { allSearchAttributes } from '../../src/workflows/search-attributes.js';
import type { TimelineEntry, TimelineEvent } from '../../src/workflows/timeline.js';
import { FakeCluster, timeSkippingClock, type FakeOptions } from '../fixtures/fake-activities.js';

export const workflowsPath = fileURLToPath(new URL('../../src/workflows/index.ts', import.meta.url));
assert.equal(workflowBundleOptions.workflowsPath, workflowsPath);
/** Histories kept by `Run.keepHistory`, replayed by replay.test.ts against every later version of the workflows. */
export const historiesDir = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/** The workflows of src/workflows/index.ts, bundled once for every test of the process. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  // Bundled as the worker bundles (src/model preloaded into the shared context).
  bundle ??= bundleWorkflowCode(workflowBundleOptions);
  return bundle;
}

export interface Run {
  taskQueue: string;
  /** Starts a workflow by name on this test's task queue; it is terminated at the end of the test if still running. */
  start<W extends Workflow>(type: string, ...args: Parameters<W>): Promise<WorkflowHandleWithFirstExecutionRunId<W>>;
  /** As `start`, with the search attributes a start by the trigger carries. */
  startWith<W extends Workflow>(
    type: string,
    options: { typedSearchAttributes?: SearchAttributePair[] },
    ...args: Parameters<W>
  ): Promise<WorkflowHandleWithFirstExecutionRunId<W>>;
  /**
   * With RECORD_HISTORIES=1, writes this workflow's history (once the test has passed) to
   * test/fixtures/histories/<name>.json, which replay.test.ts then replays against later code.
   */
  keepHistory(handle: { workflowId: string }, name: string): void;
}

export class WorkflowTestEnv {
  private constructor(readonly env: TestWorkflowEnvironment) {}

  static async start(): Promise<WorkflowTestEnv> {
    const [env] = await Promise.all([startTimeSkippingEnvironment(), workflowBundle()]);
    // This project's search attributes, as the dev server registers them at start: starts may then carry them.
    const { INDEXED_VALUE_TYPE_INT: INT, INDEXED_VALUE_TYPE_KEYWORD: KEYWORD } = temporal.api.enums.v1.IndexedValueType;
    await env.connection.operatorService.addSearchAttributes({
      namespace: env.namespace ?? 'default',
      searchAttributes: Object.fromEntries(allSearchAttributes.map((k) => [k.name, k.type === 'INT' ? INT : KEYWORD])),
    });
    return new WorkflowTestEnv(env);
  }

  async teardown(): Promise<void> {
    await this.env.teardown();
  }

  /** A fake cluster on the test server's clock, i.e. in workflow time. */
  fake(options?: FakeOptions): FakeCluster {
    return new FakeCluster(timeSkippingClock(this.env), options);
  }

  /** Workflow time now (ms). */
  now(): Promise<number> {
    return this.env.currentTimeMs();
  }

  /** Lets `ms` of workflow time pass (skipped, not waited). */
  sleep(ms: number): Promise<void> {
    return this.env.sleep(ms);
  }

  /**
   * Runs one workflow to its end on a worker with the fake's activities and returns its result. `keep`: the name under
   * which `RECORD_HISTORIES=1` keeps its history for replay.test.ts.
   */
  runToEnd<W extends Workflow>(fake: FakeCluster, type: string, input: Parameters<W>[0], keep?: string) {
    return this.withWorker(fake, async (run) => {
      const handle = await run.start<W>(type, ...([input] as Parameters<W>));
      if (keep) run.keepHistory(handle, keep);
      return (await handle.result()) as Awaited<ReturnType<W>>;
    });
  }

  /** Runs `fn` while a worker serves a fresh task queue with the fake's activities. */
  async withWorker<T>(fake: FakeCluster, fn: (run: Run) => Promise<T>): Promise<T> {
    const taskQueue = `workflow-test-${randomUUID()}`;
    const worker = await Worker.create({
      connection: this.env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: fake.activities(),
      // Workflows in the worker's own thread (still sandboxed): the worker starts in ms instead of about a second,
      // which is most of a test's wall time. It also lifts the workflow task deadlock timer, which these tests do not
      // exercise.
      debugMode: true,
    });
    const started: WorkflowHandleWithFirstExecutionRunId<Workflow>[] = [];
    const kept = new Map<string, string>();
    const client = this.env.client;
    const run: Run = {
      keepHistory: (handle, name) => void kept.set(handle.workflowId, name),
      taskQueue,
      start<W extends Workflow>(type: string, ...args: Parameters<W>) {
        return run.startWith<W>(type, {}, ...args);
      },
      async startWith<W extends Workflow>(
        type: string,
        options: { typedSearchAttributes?: SearchAttributePair[] },
        ...args: Parameters<W>
      ) {
        const handle = await client.workflow.start<W>(type, {
          taskQueue,
          workflowId: `${type}-${randomUUID()}`,
          args: args as never,
          ...options,
        });
        started.push(handle as unknown as WorkflowHandleWithFirstExecutionRunId<Workflow>);
        return handle;
      },
    };
    return worker.runUntil(async () => {
      let outcome: { value: T } | { error: unknown };
      try {
        outcome = { value: await fn(run) };
      } catch (error) {
        outcome = { error };
      }
      // A workflow left running would fire its timers in later tests; terminate it. Terminating one with an activity
      // or a workflow task in flight leaks the test server's time lock (time then passes at wall-clock pace for the
      // rest of the file), so a passing test must let such workflows finish, and a workflow task is let complete.
      const leftInFlight: string[] = [];
      const finished: WorkflowHandleWithFirstExecutionRunId<Workflow>[] = [];
      for (const handle of started) {
        const description = await handle.describe();
        if (description.status.name === 'COMPLETED' || description.status.name === 'FAILED') finished.push(handle);
        if (description.status.name !== 'RUNNING') continue;
        const pending = description.raw.pendingActivities?.length ?? 0;
        await workflowTaskDone(handle);
        await handle.terminate('test finished');
        if (pending > 0) leftInFlight.push(`${handle.workflowId} (${pending} activities in flight)`);
      }
      if ('error' in outcome) throw outcome.error;
      if (leftInFlight.length > 0) throw new Error(`left running: ${leftInFlight.join(', ')}`);
      await replayOwnHistories(finished, kept);
      return outcome.value;
    });
  }
}

/**
 * Every workflow a passing test ran to its end must replay its own history: code that decides differently on replay
 * (a clock, a random number, a mutable global) fails here rather than on a worker restart in production. A workflow
 * that continued as new replays its first run and its last; the first is the one kept (it has what the test did).
 */
async function replayOwnHistories(
  handles: WorkflowHandleWithFirstExecutionRunId<Workflow>[],
  kept: Map<string, string>,
): Promise<void> {
  if (handles.length === 0) return;
  const runs = await Promise.all(
    handles.map(async (h) => {
      const first = h.client.getHandle(h.workflowId, h.firstExecutionRunId);
      const last = (await h.describe()).runId;
      const firstRun = { workflowId: h.workflowId, history: await first.fetchHistory(), keep: true };
      if (last === h.firstExecutionRunId) return [firstRun];
      const lastRun = { workflowId: h.workflowId, history: await h.fetchHistory(), keep: false };
      return [firstRun, lastRun];
    }),
  );
  const histories = runs.flat();
  const options = { workflowBundle: await workflowBundle(), replayName: 'harness-replay' };
  for await (const result of Worker.runReplayHistories(options, histories)) {
    if (result.error) throw new Error(`${result.workflowId} does not replay its own history: ${result.error.message}`);
  }
  if (!process.env.RECORD_HISTORIES) return;
  mkdirSync(historiesDir, { recursive: true });
  for (const { workflowId, history, keep } of histories) {
    const name = kept.get(workflowId);
    if (!name || !keep) continue;
    const file = { workflowId, history: historyToObject(history) };
    writeFileSync(join(historiesDir, `${name}.json`), JSON.stringify(file, null, 1) + '\n');
  }
}

// Plain objects (enums by name, 64-bit numbers as strings, bytes as base64) through the generated message class: the
// SDK's historyToJSON fails here, as @temporalio/common and @temporalio/proto each bring their own protobufjs.
const { History } = temporal.api.history.v1;
const historyToObject = (history: temporal.api.history.v1.IHistory) =>
  History.toObject(History.fromObject(history), { enums: String, longs: String, bytes: String });
export const historyFromObject = (object: unknown) => History.fromObject(object as Record<string, unknown>);

/**
 * Resolves once the latest run has no workflow task handed out and not yet completed (its local activities may still
 * run inside one), or after `timeoutMs` (a workflow task that never completes fails the test elsewhere).
 */
async function workflowTaskDone(
  handle: { fetchHistory(): Promise<temporal.api.history.v1.IHistory> },
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    let scheduled = -1;
    let ended = -1;
    for (const [i, e] of ((await handle.fetchHistory()).events ?? []).entries()) {
      if (e.workflowTaskScheduledEventAttributes) scheduled = i;
      const end =
        e.workflowTaskCompletedEventAttributes ??
        e.workflowTaskFailedEventAttributes ??
        e.workflowTaskTimedOutEventAttributes;
      if (end) ended = i;
    }
    if (scheduled < ended) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Polls (in wall time) until `probe` gives a value. */
export async function eventually<T>(what: string, probe: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Time (ms) of the one timeline entry of that event; fails if it is missing or repeated. */
/** Each activity a history scheduled, with its heartbeat timeout in ms: [activity type, ms]. */
export function heartbeatTimeouts(events: temporal.api.history.v1.IHistoryEvent[]): [string, number][] {
  return events.flatMap((e) => {
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (!scheduled) return [];
    const timeout = scheduled.heartbeatTimeout;
    return [[scheduled.activityType?.name ?? '', Number(timeout?.seconds ?? 0) * 1000 + (timeout?.nanos ?? 0) / 1e6]];
  });
}

export function at(timeline: TimelineEntry[], event: TimelineEvent): number {
  const found = timeline.filter((e) => e.event === event);
  if (found.length !== 1) {
    throw new Error(`expected one "${event}" in the timeline, found ${found.length}: ${describeTimeline(timeline)}`);
  }
  return Date.parse(found[0]!.at);
}

export function describeTimeline(timeline: TimelineEntry[]): string {
  const t0 = timeline[0] ? Date.parse(timeline[0].at) : 0;
  return timeline.map((e) => `+${Date.parse(e.at) - t0}ms ${e.event}${e.detail ? ` (${e.detail})` : ''}`).join('; ');
}

/**
 * One time-skipping server for the enclosing describe block: started in its before hook, stopped in its after hook.
 * The object returned forwards to it, so tests call `t.fake()`, `t.withWorker()` as on the environment itself.
 */
export function useWorkflowTestEnv(): Pick<WorkflowTestEnv, 'fake' | 'now' | 'sleep' | 'withWorker' | 'runToEnd'> {
  let env: WorkflowTestEnv | undefined;
  before(async function () {
    this.timeout(120_000);
    env = await WorkflowTestEnv.start();
  });
  after(async () => {
    await env?.teardown();
  });
  const started = (): WorkflowTestEnv => {
    if (!env) throw new Error('the time-skipping environment is not started: use it inside a test of this block');
    return env;
  };
  return {
    fake: (options) => started().fake(options),
    now: () => started().now(),
    sleep: (ms) => started().sleep(ms),
    withWorker: (fake, fn) => started().withWorker(fake, fn),
    runToEnd: (fake, type, input, keep) => started().runToEnd(fake, type, input, keep),
  };
}
