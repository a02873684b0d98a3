// `lws-temporal history <ns>/<name>`: the rebuilds of each group of one LWS, from the recreateGroup and teardownGroup
// runs in Temporal visibility (recovery-report.ts joins them and lays them out).
//
// The list query selects by workflow type and ID prefix only: the search attributes (LwsName, ...) may not be
// registered on the server, and then the runs carry none. Each closed run's result (TeardownGroupResult,
// RecreateGroupResult) says what happened; a running one answers the `timeline` query.
import { latestOf } from '../shared/instants.js';
import { Client, Connection, type WorkflowExecutionInfo } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { lwsWorkflowIdPrefix, parseWorkflowId, type ObjectKey } from '../model/index.js';
import type { RecreateGroupInput, RecreateGroupResult } from '../workflows/recreate-group.js';
import type { TeardownGroupInput, TeardownGroupResult } from '../workflows/teardown-group.js';
import { GroupIndex, Lifecycle, TerminationPolicy } from '../workflows/search-attributes.js';
import type { TimelineEntry, TimelineEvent } from '../workflows/timeline.js';
import { payloadCodecsFromEnv } from '../config/payload-codec.js';
import { checkClusterName, CLUSTER_NAME_VAR, resolveClusterName } from '../config/cluster.js';
import { loadKubeConfig } from '../config/kubernetes.js';
import { connectionOptions, temporalConfigFromEnv } from '../config/temporal.js';
import { resolveUiUrl } from './args.js';
import { CliError, workflowLink, type RecreateRun, type TeardownRun } from './format.js';
import { buildRecoveryReport, type RecoveryReport } from './recovery-report.js';

/**
 * Visibility query of the teardown and recreate runs of one LWS on one cluster. Names are DNS labels/subdomains and
 * cluster names letters, digits, '-' and '_', so they need no escaping.
 */
export function recoveryQuery(cluster: string, ref: ObjectKey): string {
  const prefix = lwsWorkflowIdPrefix(cluster, ref);
  return `WorkflowType IN ("teardownGroup", "recreateGroup") AND WorkflowId STARTS_WITH "${prefix}"`;
}

/** The policy the workflow resolved, from the detail of its first step ("<leader>; policy Parallel from spec"). */
export function policyFromTimeline(timeline: TimelineEntry[] | undefined): string | undefined {
  const detail = timeline?.find((e) => e.event === 'leader terminating')?.detail;
  return /\bpolicy (\w+)/.exec(detail ?? '')?.[1];
}

/** Steps that the workflow records only after every old pod and the old StatefulSet are gone. */
const AFTER_TEARDOWN: TimelineEvent[] = ['new leader', 'new group ready', 'skipped'];

/**
 * teardownMs of a run still in progress, computed as the workflow does (last of leader / workers / old StatefulSet
 * gone, minus leader terminating), once the timeline shows the teardown is over; otherwise undefined.
 */
export function teardownMsFromTimeline(timeline: TimelineEntry[] | undefined): number | undefined {
  if (!timeline?.some((e) => AFTER_TEARDOWN.includes(e.event))) return undefined;
  const at = (event: TimelineEvent) => timeline.find((e) => e.event === event)?.at;
  const started = at('leader terminating');
  const lastGone = latestOf([at('leader gone'), at('workers gone'), at('old StatefulSet gone')]);
  return started && lastGone ? Date.parse(lastGone) - Date.parse(started) : undefined;
}

/** Everything known about one run, from visibility, its result or query, and (if needed) its start input. */
export interface RunFacts<Result = TeardownGroupResult, Input = TeardownGroupInput> {
  workflowId: string;
  runId: string;
  status: string;
  startTime: Date;
  closeTime?: Date;
  searchAttributes: { group?: number; lifecycle?: string; policy?: string };
  result?: Partial<Result>;
  /** A running run's answer to the `timeline` query. */
  timeline?: TimelineEntry[];
  input?: Partial<Input>;
  error?: string;
}

export type RecreateFacts = RunFacts<RecreateGroupResult, RecreateGroupInput>;

/** Which source wins: the result (what happened), then the timeline, the search attributes, the start input. */
export function teardownRun(f: RunFacts, link: string): TeardownRun {
  const timeline = f.result?.timeline ?? f.timeline;
  const op = parseWorkflowId(f.workflowId)?.op;
  return {
    workflowId: f.workflowId,
    runId: f.runId,
    group: (op && 'groupIndex' in op ? op.groupIndex : undefined) ?? f.searchAttributes.group ?? f.input?.groupIndex,
    leaderUid: op?.kind === 'teardown' ? op.oldLeaderUid : f.input?.leader?.uid,
    lifecycle: f.result?.lifecycle ?? f.searchAttributes.lifecycle ?? f.input?.lifecycle,
    policy: f.result?.policy ?? policyFromTimeline(timeline) ?? f.searchAttributes.policy ?? f.input?.policy,
    status: f.status,
    startTime: f.startTime.toISOString(),
    closeTime: f.closeTime?.toISOString(),
    teardownMs: f.result?.teardownMs ?? teardownMsFromTimeline(timeline),
    recoveryMs: f.result?.recoveryMs,
    forceDeleted: f.result?.forceDeleted,
    lastEvent: timeline?.at(-1)?.event,
    error: f.error,
    link,
    timeline,
  };
}

/** As teardownRun: the result first, then the timeline, the search attributes and the start input. */
export function recreateRun(f: RecreateFacts, link: string): RecreateRun {
  const timeline = f.result?.timeline ?? f.timeline;
  const op = parseWorkflowId(f.workflowId)?.op;
  const recreate = op?.kind === 'recreate' ? op : undefined;
  const deleted = f.result?.outcome === 'recreated' || f.result?.outcome === 'recovered';
  return {
    workflowId: f.workflowId,
    runId: f.runId,
    group: recreate?.groupIndex ?? f.searchAttributes.group ?? f.input?.groupIndex,
    leaderUid: recreate?.leaderUid ?? f.input?.leader?.uid,
    recover: recreate?.recover ?? f.input?.recover ?? false,
    status: f.status,
    startTime: f.startTime.toISOString(),
    closeTime: f.closeTime?.toISOString(),
    outcome: f.result?.outcome,
    cause: f.result?.cause ?? f.input?.cause,
    pod: f.result?.pod ?? f.input?.pod,
    reason: f.result?.reason ?? f.input?.reason,
    restartCount: f.result?.restartCount,
    maxGroupRestarts: f.result?.maxGroupRestarts,
    // A result records its wait when there was one: without one, a leader deleted went at once.
    backoffMs: f.result?.backoffMs ?? (deleted ? 0 : undefined),
    lastEvent: timeline?.at(-1)?.event,
    error: f.error,
    link,
    timeline,
  };
}

/** The error's own message, or its cause's (a WorkflowFailedError says only "Workflow execution failed"). */
function reason(err: unknown): string {
  const e = err as { message?: string; cause?: { message?: string } };
  return e.cause?.message ? `${e.message}: ${e.cause.message}` : (e.message ?? String(err));
}

/** How long a query may wait: with no worker polling, a query would otherwise wait for the server's timeout. */
const QUERY_TIMEOUT_MS = 5000;

/**
 * A run's facts: a closed one's result, a running one's timeline, and its start input if `needsInput` says what
 * the rest leaves unknown.
 */
async function runFacts<Result, Input>(
  client: Client,
  namespace: string,
  info: WorkflowExecutionInfo,
  needsInput: (facts: RunFacts<Result, Input>) => boolean,
): Promise<RunFacts<Result, Input>> {
  const sa = info.typedSearchAttributes;
  const facts: RunFacts<Result, Input> = {
    workflowId: info.workflowId,
    runId: info.runId,
    status: info.status.name,
    startTime: info.startTime,
    closeTime: info.closeTime,
    searchAttributes: { group: sa.get(GroupIndex), lifecycle: sa.get(Lifecycle), policy: sa.get(TerminationPolicy) },
  };
  const handle = client.workflow.getHandle(info.workflowId, info.runId);
  const deadline = Date.now() + QUERY_TIMEOUT_MS;
  try {
    if (info.status.name === 'RUNNING') {
      facts.timeline = await client.connection.withDeadline(deadline, () => handle.query<TimelineEntry[]>('timeline'));
    } else {
      facts.result = (await handle.result()) as Partial<Result>;
    }
  } catch (err) {
    if (info.status.name !== 'RUNNING') facts.error = reason(err);
    else if (Date.now() >= deadline)
      facts.error = `no worker answered the timeline query within ${QUERY_TIMEOUT_MS / 1000} s`;
    else facts.error = `timeline query failed: ${reason(err)}`;
  }
  if (needsInput(facts)) facts.input = await startInput<Input>(client, namespace, info).catch(() => undefined);
  return facts;
}

/** A teardown needs its input when neither a result nor the search attributes give its lifecycle and policy. */
const teardownNeedsInput = (f: RunFacts): boolean =>
  !f.result && (!f.searchAttributes.lifecycle || !(f.searchAttributes.policy ?? policyFromTimeline(f.timeline)));

/** A recreate's reason is in its result, or in its input while the run is still going. */
const recreateNeedsInput = (f: RecreateFacts): boolean => !f.result;

/** The workflow's argument, from the first event of its history. */
async function startInput<Input>(
  client: Client,
  namespace: string,
  info: WorkflowExecutionInfo,
): Promise<Partial<Input> | undefined> {
  const { history } = await client.workflowService.getWorkflowExecutionHistory({
    namespace,
    execution: { workflowId: info.workflowId, runId: info.runId },
    maximumPageSize: 1,
  });
  const payload = history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  return payload ? defaultPayloadConverter.fromPayload<Partial<Input>>(payload) : undefined;
}

/** `fn` over `items`, at most `limit` at a time, results in order. */
async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  });
  await Promise.all(lanes);
  return results;
}

/** The teardown and recreate runs of one LWS, each read at most 8 at a time. */
export async function listRecoveryRuns(
  client: Client,
  ref: ObjectKey,
  opts: { cluster: string; temporalNamespace: string; uiUrl: string },
): Promise<{ teardowns: TeardownRun[]; recreates: RecreateRun[] }> {
  const infos: WorkflowExecutionInfo[] = [];
  for await (const info of client.workflow.list({ query: recoveryQuery(opts.cluster, ref) })) infos.push(info);
  const link = (info: WorkflowExecutionInfo) =>
    workflowLink(opts.uiUrl, opts.temporalNamespace, info.workflowId, info.runId);
  const runs = await mapLimit(infos, 8, async (info) =>
    info.type === 'recreateGroup'
      ? { recreate: recreateRun(await runFacts(client, opts.temporalNamespace, info, recreateNeedsInput), link(info)) }
      : { teardown: teardownRun(await runFacts(client, opts.temporalNamespace, info, teardownNeedsInput), link(info)) },
  );
  return {
    teardowns: runs.flatMap((r) => (r.teardown ? [r.teardown] : [])),
    recreates: runs.flatMap((r) => (r.recreate ? [r.recreate] : [])),
  };
}

/** LWS_CLUSTER_NAME, else the name the controller gives the cluster KUBECONFIG reaches. */
async function clusterOf(env: NodeJS.ProcessEnv): Promise<string> {
  const named = env[CLUSTER_NAME_VAR];
  if (named) return checkClusterName(named);
  try {
    return await resolveClusterName(loadKubeConfig(env), env);
  } catch (err) {
    throw new CliError(
      `${(err as Error).message}. history lists the runs of one cluster: set ${CLUSTER_NAME_VAR} to its controller's cluster name, or KUBECONFIG to reach the cluster`,
      { cause: err },
    );
  }
}

/**
 * The recovery report of one LWS from the Temporal frontend of TEMPORAL_ADDRESS (see temporalConfigFromEnv), for the
 * cluster LWS_CLUSTER_NAME names, else the one KUBECONFIG reaches (see resolveClusterName).
 */
export async function readHistory(
  ref: ObjectKey,
  uiFlag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RecoveryReport> {
  const uiUrl = resolveUiUrl(uiFlag, env);
  const cluster = await clusterOf(env);
  const config = temporalConfigFromEnv(env, cluster);
  const connection = await Connection.connect(connectionOptions(config)).catch((err: unknown) => {
    throw new CliError(
      `cannot reach Temporal at ${config.address} (${(err as Error).message}): set TEMPORAL_ADDRESS to its frontend`,
      { cause: err },
    );
  });
  try {
    const client = new Client({
      connection,
      namespace: config.namespace,
      dataConverter: { payloadCodecs: payloadCodecsFromEnv(env) },
    });
    const runs = await listRecoveryRuns(client, ref, { cluster, temporalNamespace: config.namespace, uiUrl });
    return buildRecoveryReport({ lws: ref, temporalNamespace: config.namespace, ...runs });
  } finally {
    await connection.close();
  }
}
