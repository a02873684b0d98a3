// `npm run demo`: the whole product on one machine. Local cluster, Temporal (the dev server, or with `--temporal
// cluster` the production-shaped cluster of `npm run temporal:up`) with the Web UI, the worker and the trigger; two
// LeaderWorkerSets (Sequential and Parallel, replicas 2, size 4) whose pods take a long grace period; then the leader
// of group 0 of each is deleted, and both rebuilds are shown side by side.
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { resolveClusterName } from '../../src/config/cluster.js';
import { createLogger, formatDuration } from '../../src/log.js';
import {
  API_GROUP,
  API_VERSION,
  isPodReady,
  PLURAL,
  workflowId,
  type PodTerminationPolicy,
} from '../../src/model/index.js';
import { isClusterRunning, localKubeConfig, startCluster, stopCluster } from '../stack/cluster.js';
import { startControllerProcess, type ControllerProcess } from '../stack/controller-processes.js';
import { installCrd } from '../stack/crd.js';
import { sampleLeaderWorkerSet } from '../stack/sample-lws.js';
import { kubeconfigPath, stateDir } from '../stack/paths.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { clusterBinaries, isProvisioned, provision } from '../stack/provision.js';
import { startTemporal, temporalBinaries, type TemporalTarget } from '../stack/temporal-target.js';
import type { TeardownGroupResult } from '../../src/workflows/teardown-group.js';

export interface DemoOptions {
  graceSeconds: number;
  /** Stop everything once the rebuilds are shown, instead of keeping the stack up for the Web UI. */
  exit: boolean;
  namespace: string;
  /** The Temporal to run on: a dev server of the demo's own, or the cluster (reused when it is up, left up then). */
  temporal: TemporalTarget;
}

const log = createLogger('demo');
/** Nothing more is printed once stdout is gone (a closed pipe: `npm run demo | tee`, its reader interrupted). */
const say = (line = '') => {
  if (process.stdout.writable) process.stdout.write(line + '\n');
};

const demos: { name: string; policy: PodTerminationPolicy }[] = [
  { name: 'leaderworkerset-sequential-termination', policy: 'Sequential' },
  { name: 'leaderworkerset-parallel-termination', policy: 'Parallel' },
];

/**
 * What the demo runs, and so all it provisions: the local cluster and the Temporal it is given. Not the floor's
 * Kubernetes, upstream LWS or Helm, nor on the dev server (whose Web UI is its own) the Temporal server and the Web UI
 * server.
 */
export function demoBinaries(temporal: TemporalTarget, env: NodeJS.ProcessEnv = process.env): string[] {
  return [...clusterBinaries(env), ...temporalBinaries(temporal)];
}

type Phase = 'ready' | 'leader terminating' | 'leader+workers terminating' | 'workers terminating' | 'provisioning';

/** The phase of group 0 of an LWS, from its pods as the API shows them now. */
function groupPhase(pods: k8s.V1Pod[], name: string, oldLeaderUid: string): Phase {
  const group = pods.filter((p) => p.metadata?.name === `${name}-0` || p.metadata?.name?.startsWith(`${name}-0-`));
  const leader = group.find((p) => p.metadata?.name === `${name}-0`);
  const workers = group.filter((p) => p !== leader);
  const oldLeader = leader?.metadata?.uid === oldLeaderUid ? leader : undefined;
  const workersTerminating = workers.some((w) => w.metadata?.deletionTimestamp);
  if (oldLeader) return workersTerminating ? 'leader+workers terminating' : 'leader terminating';
  if (workersTerminating) return 'workers terminating';
  const ready = group.filter(isPodReady);
  return leader && ready.length === 4 && !group.some((p) => p.metadata?.deletionTimestamp) ? 'ready' : 'provisioning';
}

export async function runDemo(opts: DemoOptions): Promise<void> {
  const started = Date.now();
  const cleanups: (() => Promise<unknown>)[] = [];
  let cleaning: Promise<void> | undefined;
  // Once, whoever asks first: the end of the run, a signal, or stdout closing.
  const cleanup = () =>
    (cleaning ??= (async () => {
      say('stopping what the demo started');
      for (const fn of cleanups.reverse())
        await fn().catch((err: unknown) => log.warn('cleanup step failed', { error: String(err) }));
    })());
  let wakeUp: (() => void) | undefined;
  let interrupted = false;
  // Ctrl-C, a terminal closed, a `kill`, or the reader of a pipe gone: everything started here stops, then the demo
  // exits. Mid-run that is at once, not at the end of the step under way.
  const stop = (why: string) => {
    if (interrupted) return;
    interrupted = true;
    log.info('stopping', { why });
    if (wakeUp) return wakeUp();
    void cleanup().then(() => process.exit(130));
  };
  const onSignal = (signal: NodeJS.Signals) => stop(signal);
  const onOutputError = (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') stop('stdout closed');
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, onSignal);
  process.stdout.on('error', onOutputError);
  process.stderr.on('error', onOutputError);
  try {
    const binaries = demoBinaries(opts.temporal);
    if (!(await isProvisioned(binaries))) await provision({ log: createLogger('provision'), only: binaries });
    const clusterWasRunning = Boolean(await isClusterRunning());
    await startCluster({ log: createLogger('cluster') });
    if (!clusterWasRunning) cleanups.push(() => stopCluster({ log: createLogger('cluster') }));
    const kc = localKubeConfig();
    await installCrd(kc);
    const clusterName = await resolveClusterName(kc);

    log.info(opts.temporal === 'cluster' ? 'starting the Temporal cluster' : 'starting the Temporal dev server');
    const server = await startTemporal(opts.temporal, createLogger('temporal'), {
      dbFilename: join(stateDir, 'temporal', 'demo.sqlite'),
    });
    cleanups.push(() => server.stop());
    say(`Temporal Web UI: ${server.uiUrl}`);

    // Everything the demo created goes with its namespace, once the controller has stopped (cleanups run in reverse),
    // not waited for: its pods take their grace period.
    const core = kc.makeApiClient(k8s.CoreV1Api);
    cleanups.push(() => core.deleteNamespace({ name: opts.namespace }).catch(() => undefined));
    const env = {
      ...process.env,
      KUBECONFIG: kubeconfigPath,
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_NAMESPACE: server.namespace,
    };
    const logDir = join(stateDir, 'demo-logs');
    const processes: ControllerProcess[] = await Promise.all([
      startControllerProcess('worker', env, logDir),
      startControllerProcess('trigger', env, logDir),
    ]);
    for (const p of processes) cleanups.push(() => p.stop());
    log.info('worker and trigger running', { logs: logDir });

    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const ns = opts.namespace;
    await core.createNamespace({ body: { metadata: { name: ns } } }).catch((err: { code?: number }) => {
      if (err.code !== 409) throw err;
    });
    await waitFor(
      'the default ServiceAccount of the demo namespace',
      async () => (await core.readNamespacedServiceAccount({ name: 'default', namespace: ns })) && true,
      { timeoutMs: 30_000 },
    );
    for (const d of demos) {
      // A previous demo's objects go first, so every run starts from the same state.
      await custom
        .deleteNamespacedCustomObject({
          group: API_GROUP,
          version: API_VERSION,
          plural: PLURAL,
          namespace: ns,
          name: d.name,
          propagationPolicy: 'Foreground',
          gracePeriodSeconds: 0,
        })
        .catch(() => undefined);
    }
    await waitFor(
      'old demo pods gone',
      async () => ((await core.listNamespacedPod({ namespace: ns })).items.length === 0 ? true : undefined),
      { timeoutMs: 120_000 },
    );
    for (const d of demos) {
      await custom.createNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        plural: PLURAL,
        namespace: ns,
        body: sampleLeaderWorkerSet({
          name: d.name,
          policy: d.policy,
          replicas: 2,
          size: 4,
          graceSeconds: opts.graceSeconds,
          image: 'nginx:latest',
        }),
      });
      say(
        `applied ${d.name} (podTerminationPolicy ${d.policy}, replicas 2, size 4, terminationGracePeriodSeconds ${opts.graceSeconds})`,
      );
    }
    await waitFor(
      'every group Ready',
      async () => {
        const pods = (await core.listNamespacedPod({ namespace: ns })).items;
        const ready = pods.filter(isPodReady);
        log.info('waiting for groups', { ready: `${ready.length}/16 pods` });
        return ready.length === 16 ? true : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    say('every group is Ready; deleting the leader of group 0 of both');

    const leaders = await Promise.all(demos.map((d) => core.readNamespacedPod({ name: `${d.name}-0`, namespace: ns })));
    const t0 = Date.now();
    await Promise.all(demos.map((d) => core.deleteNamespacedPod({ name: `${d.name}-0`, namespace: ns })));

    const last = new Map<string, Phase>();
    const doneAt = new Map<string, number>();
    while (doneAt.size < demos.length && !interrupted) {
      const pods = (await core.listNamespacedPod({ namespace: ns })).items;
      const elapsed = formatDuration(Date.now() - t0);
      for (const [i, d] of demos.entries()) {
        if (doneAt.has(d.name)) continue;
        const phase = groupPhase(pods, d.name, leaders[i]!.metadata!.uid!);
        if (phase !== last.get(d.name)) say(`  ${elapsed.padStart(6)}  ${d.policy.padEnd(10)} group 0: ${phase}`);
        last.set(d.name, phase);
        if (phase === 'ready') doneAt.set(d.name, Date.now());
      }
      await sleep(250);
    }
    if (interrupted) return;

    const connection = await Connection.connect({ address: server.address });
    cleanups.push(() => connection.close());
    const client = new Client({ connection, namespace: server.namespace });
    const results: TeardownGroupResult[] = [];
    for (const [i, d] of demos.entries()) {
      const oldLeaderUid = leaders[i]!.metadata!.uid!;
      const id = workflowId(
        clusterName,
        { namespace: ns, name: d.name },
        { kind: 'teardown', groupIndex: 0, oldLeaderUid },
      );
      const result = (await client.workflow.getHandle(id).result()) as TeardownGroupResult;
      results.push(result);
      say();
      say(`${d.policy}: workflow ${id}`);
      const start = Date.parse(result.timeline[0]!.at);
      for (const e of result.timeline) {
        say(
          `  +${formatDuration(Date.parse(e.at) - start).padStart(6)}  ${e.event}${e.detail ? `  (${e.detail})` : ''}`,
        );
      }
    }
    const [seq, par] = results;
    say();
    say(
      `teardown: Sequential ${formatDuration(seq!.teardownMs ?? 0)}, Parallel ${formatDuration(par!.teardownMs ?? 0)}, ratio ${((par!.teardownMs ?? 0) / (seq!.teardownMs ?? 1)).toFixed(2)}`,
    );
    say(
      `recovery: Sequential ${formatDuration(seq!.recoveryMs ?? 0)}, Parallel ${formatDuration(par!.recoveryMs ?? 0)}, ratio ${((par!.recoveryMs ?? 0) / (seq!.recoveryMs ?? 1)).toFixed(2)}`,
    );
    say(`(grace period ${opts.graceSeconds}s; the demo took ${formatDuration(Date.now() - started)})`);

    if (!opts.exit) {
      say();
      say(`The stack keeps running for the Web UI: ${server.uiUrl}  (filter: LwsNamespace = "${ns}")`);
      say(`export KUBECONFIG=${kubeconfigPath}; Ctrl-C stops everything the demo started.`);
      await new Promise<void>((resolve) => {
        wakeUp = resolve;
        if (interrupted) resolve();
      });
    }
  } finally {
    await cleanup();
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(signal, onSignal);
  }
}
