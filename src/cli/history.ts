// `lws-temporal history <ns>/<name>`: the teardown runs of one LWS from Temporal visibility, newest first.
//
// The list query selects by workflow type and ID prefix only: the search attributes (LwsName, ...) may not be
// registered on the server, and then the runs carry none. Each closed run's result (TeardownGroupResult) gives the
// policy and durations; a running one answers the `timeline` query.
import { latestOf } from '../shared/instants.js';
import { Client, Connection, type WorkflowExecutionInfo } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { lwsWorkflowIdPrefix, parseWorkflowId, type ObjectKey } from '../model/index.js';
import type { TeardownGroupInput, TeardownGroupResult } from '../workflows/teardown-group.js';
import { GroupIndex, Lifecycle, TerminationPolicy } from '../workflows/search-attributes.js';
import type { TimelineEntry, TimelineEvent } from '../workflows/timeline.js';
import { payloadCodecsFromEnv } from '../config/payload-codec.js';
import { checkClusterName, CLUSTER_NAME_VAR, resolveClusterName } from '../config/cluster.js';
import { loadKubeConfig } from '../config/kubernetes.js';
import { connectionOptions, temporalConfigFromEnv } from '../config/temporal.js';
import { resolveUiUrl } from './args.js';
import { CliError, workflowLink, type HistoryReport, type TeardownRun } from './format.js';

/**
 * Visibility query of the teardown runs of one LWS on one cluster. Names are DNS labels/subdomains and cluster names
 * letters, digits, '-' and '_', so they need no escaping.
 */
export function teardownQuery(cluster: string, ref: ObjectKey): string {
  return `WorkflowType = "teardownGroup" AND WorkflowId STARTS_WITH "${lwsWorkflowIdPrefix(cluster, ref)}"`;
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
export interface RunFacts {
  workflowId: string;
  runId: string;
  status: string;
  startTime: Date;
  closeTime?: Date;
  searchAttributes: { group?: number; lifecycle?: string; policy?: string };
  result?: Partial<TeardownGroupResult>;
  /** A running run's answer to the `timeline` query. */
  timeline?: TimelineEntry[];
  input?: Partial<TeardownGroupInput>;
  error?: string;
}

/** Which source wins: the result (what happened), then the timeline, the search attributes, the start input. */
export function teardownRun(f: RunFacts, link: string): TeardownRun {
  const timeline = f.result?.timeline ?? f.timeline;
  const parsed = parseWorkflowId(f.workflowId);
  const groupFromId = parsed && 'groupIndex' in parsed.op ? parsed.op.groupIndex : undefined;
  return {
    workflowId: f.workflowId,
    runId: f.runId,
    group: groupFromId ?? f.searchAttributes.group ?? f.input?.groupIndex,
    lifecycle: f.result?.lifecycle ?? f.searchAttributes.lifecycle ?? f.input?.lifecycle,
    policy: f.result?.policy ?? policyFromTimeline(timeline) ?? f.searchAttributes.policy ?? f.input?.policy,
    status: f.status,
    startTime: f.startTime.toISOString(),
    closeTime: f.closeTime?.toISOString(),
    teardownMs: f.result?.teardownMs ?? teardownMsFromTimeline(timeline),
    recoveryMs: f.result?.recoveryMs,
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

async function runFacts(client: Client, namespace: string, info: WorkflowExecutionInfo): Promise<RunFacts> {
  const sa = info.typedSearchAttributes;
  const facts: RunFacts = {
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
      facts.result = (await handle.result()) as TeardownGroupResult;
    }
  } catch (err) {
    if (info.status.name !== 'RUNNING') facts.error = reason(err);
    else if (Date.now() >= deadline)
      facts.error = `no worker answered the timeline query within ${QUERY_TIMEOUT_MS / 1000} s`;
    else facts.error = `timeline query failed: ${reason(err)}`;
  }
  const policyKnown = facts.searchAttributes.policy ?? policyFromTimeline(facts.timeline);
  if (!facts.result && (!facts.searchAttributes.lifecycle || !policyKnown)) {
    facts.input = await startInput(client, namespace, info).catch(() => undefined);
  }
  return facts;
}

/** The workflow's argument, from the first event of its history. */
async function startInput(
  client: Client,
  namespace: string,
  info: WorkflowExecutionInfo,
): Promise<Partial<TeardownGroupInput> | undefined> {
  const { history } = await client.workflowService.getWorkflowExecutionHistory({
    namespace,
    execution: { workflowId: info.workflowId, runId: info.runId },
    maximumPageSize: 1,
  });
  const payload = history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  return payload ? defaultPayloadConverter.fromPayload<Partial<TeardownGroupInput>>(payload) : undefined;
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

export async function listTeardownRuns(
  client: Client,
  ref: ObjectKey,
  opts: { cluster: string; temporalNamespace: string; uiUrl: string },
): Promise<TeardownRun[]> {
  const infos: WorkflowExecutionInfo[] = [];
  for await (const info of client.workflow.list({ query: teardownQuery(opts.cluster, ref) })) infos.push(info);
  infos.sort((a, b) => b.startTime.getTime() - a.startTime.getTime() || (a.workflowId < b.workflowId ? -1 : 1));
  const facts = await mapLimit(infos, 8, (info) => runFacts(client, opts.temporalNamespace, info));
  return facts.map((f) => teardownRun(f, workflowLink(opts.uiUrl, opts.temporalNamespace, f.workflowId, f.runId)));
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
 * The teardown runs of one LWS on the Temporal frontend of TEMPORAL_ADDRESS (see temporalConfigFromEnv), for the
 * cluster LWS_CLUSTER_NAME names, else the one KUBECONFIG reaches (see resolveClusterName).
 */
export async function readHistory(
  ref: ObjectKey,
  uiFlag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<HistoryReport> {
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
    const runs = await listTeardownRuns(client, ref, { cluster, temporalNamespace: config.namespace, uiUrl });
    return { lws: ref, temporalNamespace: config.namespace, runs };
  } finally {
    await connection.close();
  }
}
