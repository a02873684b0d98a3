// Temporal Actions per group lifecycle (`npm run actions`): what Temporal Cloud bills for each thing the controller
// does. Read from the server's own `action` counter (Temporal 1.17 and later count with Cloud's rules) on the
// production-shaped Temporal of `npm run temporal:up`, before and after each lifecycle of one LWS, once the
// controller has finished it and the counter has stopped moving.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { resolveClusterName } from '../../src/config/cluster.js';
import { temporalConfigFromEnv } from '../../src/config/temporal.js';
import { createLogger, formatDuration, type Logger } from '../../src/log.js';
import {
  API_GROUP,
  API_VERSION,
  isPodReady,
  LABEL_NAME,
  PLURAL,
  type PodTerminationPolicy,
} from '../../src/model/index.js';
import { localKubeConfig, startCluster } from '../stack/cluster.js';
import { startControllerProcess, type ControllerProcess } from '../stack/controller-processes.js';
import { installCrd } from '../stack/crd.js';
import { kubeconfigPath, stateDir } from '../stack/paths.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { sampleLeaderWorkerSet } from '../stack/sample-lws.js';
import { startTemporal } from '../stack/temporal-target.js';
import { settle } from './settle.js';

/** Counts of one scrape: action_type -> value, for one Temporal namespace. */
export type ActionCounts = Map<string, number>;

/** The `action` samples of a Prometheus text page for `namespace`, summed by action_type. */
export function actionCounts(page: string, namespace: string): ActionCounts {
  const counts: ActionCounts = new Map();
  for (const line of page.split('\n')) {
    const m = /^action(?:_total)?\{([^}]*)\}\s+([0-9.eE+-]+)/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (labels.namespace !== namespace) continue;
    const type = labels.action_type ?? 'unknown';
    counts.set(type, (counts.get(type) ?? 0) + Number(m[2]));
  }
  return counts;
}

/** The `action` counter of every page in `urls` (a server's services), summed by action_type, for `namespace`. */
export async function scrapeActions(urls: string[], namespace: string): Promise<ActionCounts> {
  const pages = await Promise.all(urls.map(async (u) => (await fetch(u)).text()));
  const sum: ActionCounts = new Map();
  for (const page of pages) {
    for (const [type, value] of actionCounts(page, namespace)) sum.set(type, (sum.get(type) ?? 0) + value);
  }
  return sum;
}

/** What happened between two scrapes, by action_type (only the types that moved). */
export function actionsBetween(before: ActionCounts, after: ActionCounts): ActionCounts {
  const moved: ActionCounts = new Map();
  for (const [type, value] of after) {
    const delta = value - (before.get(type) ?? 0);
    if (delta > 0) moved.set(type, delta);
  }
  return moved;
}

export const total = (counts: ActionCounts) => [...counts.values()].reduce((a, b) => a + b, 0);

export interface LifecycleActions {
  lifecycle: string;
  /** Actions per group (or per hour, for the quiet LWS). */
  per: string;
  actions: number;
  /** The group count the actions are divided by. */
  groups: number;
  byType: Record<string, number>;
}

export interface ActionsOptions {
  size: number;
  graceSeconds: number;
  /** How long the quiet LWS is watched; its count is scaled to an hour. */
  quietSeconds: number;
  log: Logger;
}

const NAME = 'actions';

export async function measureActions(opts: ActionsOptions): Promise<{ rows: LifecycleActions[] }> {
  const progress = (line: string) => opts.log.info(line);
  await startCluster({ log: createLogger('cluster') });
  const kc = localKubeConfig();
  await installCrd(kc);
  const server = await startTemporal('cluster', createLogger('temporal'));
  const urls = server.metricsUrls;
  if (urls.length === 0) {
    throw new Error(
      'the Temporal cluster exports no metrics: it was started by an older checkout; run `npm run temporal:down` and measure again',
    );
  }
  const namespace = `lws-actions-${randomBytes(3).toString('hex')}`;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KUBECONFIG: kubeconfigPath,
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: server.namespace,
    TEMPORAL_TASK_QUEUE: `lws-actions-${Date.now().toString(36)}`,
    LOG_FORMAT: 'json',
  };
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace });
  const taskQueue = temporalConfigFromEnv(env, await resolveClusterName(kc, env)).taskQueue;
  const logDir = join(stateDir, 'actions-logs');
  let controllers: ControllerProcess[] = [];
  try {
    controllers = await Promise.all(
      (['worker', 'trigger'] as const).map((role) => startControllerProcess(role, env, logDir)),
    );
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await waitFor(
      'the namespace default ServiceAccount',
      () => core.readNamespacedServiceAccount({ name: 'default', namespace }),
      { timeoutMs: 30_000 },
    );

    const scrape = () => scrapeActions(urls, server.namespace);
    /** The counter once it has not moved for 3 s (the last status writes and reports come after the pods). */
    const quiet = async (): Promise<ActionCounts> => {
      let last = await scrape();
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 3000));
        const now = await scrape();
        if (total(actionsBetween(last, now)) === 0) return now;
        last = now;
      }
    };
    const pods = async () =>
      (await core.listNamespacedPod({ namespace, labelSelector: `${LABEL_NAME}=${NAME}` })).items.filter(
        (p) => !p.metadata?.deletionTimestamp,
      );
    const groupsReady = (replicas: number, check: (pods: k8s.V1Pod[]) => boolean = () => true) =>
      waitFor(
        `${replicas} ready groups of ${opts.size}`,
        async () => {
          const all = await pods();
          return all.length === replicas * opts.size && all.every(isPodReady) && check(all) ? all : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 250 },
      );
    const leaderUid = async (group: number) =>
      (await core.readNamespacedPod({ name: `${NAME}-${group}`, namespace })).metadata!.uid!;
    const patch = (spec: Record<string, unknown>) =>
      custom.patchNamespacedCustomObject(
        { group: API_GROUP, version: API_VERSION, plural: PLURAL, namespace, name: NAME, body: { spec } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );

    const rows: LifecycleActions[] = [];
    let baseline = await quiet();
    const measure = async (lifecycle: string, groups: number, act: () => Promise<unknown>, per = 'group') => {
      progress(`${lifecycle}`);
      const started = Date.now();
      await act();
      await settle(client, taskQueue, progress);
      const after = await quiet();
      const moved = actionsBetween(baseline, after);
      baseline = after;
      const row = { lifecycle, per, groups, actions: total(moved) / groups, byType: Object.fromEntries(moved) };
      rows.push(row);
      progress(`  ${row.actions} actions per ${per} (${formatDuration(Date.now() - started)})`);
    };

    const lws = (policy: PodTerminationPolicy, replicas: number, image = 'registry.invalid/ai:1') =>
      sampleLeaderWorkerSet({ name: NAME, policy, replicas, size: opts.size, graceSeconds: opts.graceSeconds, image });
    const rebuild = async () => {
      const old = await leaderUid(0);
      await core.deleteNamespacedPod({ name: `${NAME}-0`, namespace });
      await groupsReady(2, (all) => all.some((p) => p.metadata?.name === `${NAME}-0` && p.metadata.uid !== old));
    };

    await measure('provisioning (a new LWS of 2 groups)', 2, async () => {
      await custom.createNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        plural: PLURAL,
        namespace,
        body: lws('Parallel', 2),
      });
      await groupsReady(2);
    });
    await measure('Parallel rebuild of 1 group', 1, rebuild);
    await measure(
      'policy change to Sequential (no group rolls)',
      1,
      () => patch({ podTerminationPolicy: 'Sequential' }),
      'LWS',
    );
    await measure('Sequential rebuild of 1 group', 1, rebuild);
    await measure('rolling update (2 groups)', 2, async () => {
      const image = 'registry.invalid/ai:2';
      await patch({ leaderWorkerTemplate: lws('Sequential', 2, image).spec.leaderWorkerTemplate });
      await groupsReady(2, (all) => all.every((p) => p.spec?.containers[0]?.image === image));
    });
    await measure('scale-up by 1 group', 1, async () => {
      await patch({ replicas: 3 });
      await groupsReady(3);
    });
    await measure('scale-down by 1 group', 1, async () => {
      await patch({ replicas: 2 });
      await groupsReady(2);
    });
    await measure(
      `a quiet LWS of 2 groups, per hour (watched ${opts.quietSeconds} s)`,
      opts.quietSeconds / 3600,
      () => new Promise((resolve) => setTimeout(resolve, opts.quietSeconds * 1000)),
      'hour',
    );
    await measure('deletion of an LWS of 2 groups', 2, async () => {
      await custom.deleteNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        plural: PLURAL,
        namespace,
        name: NAME,
      });
      await waitFor(
        'every pod of the LWS gone',
        async () =>
          (await core.listNamespacedPod({ namespace, labelSelector: `${LABEL_NAME}=${NAME}` })).items.length === 0
            ? true
            : undefined,
        { timeoutMs: 120_000 },
      );
    });
    return { rows };
  } finally {
    await Promise.all(controllers.map((c) => c.stop()));
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
    await connection.close();
    await server.stop();
  }
}

/** The Markdown table, with what 1,000 rebuilds cost at `pricePerMillion` dollars. */
export function actionsTable(rows: LifecycleActions[], pricePerMillion: number): string {
  const lines = [
    '| lifecycle | Actions | per | main types |',
    '| --- | ---: | --- | --- |',
    ...rows.map((r) => {
      const types = Object.entries(r.byType)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 4)
        .map(([t, n]) => `${t} ${Math.round((n / r.groups) * 10) / 10}`)
        .join(', ');
      return `| ${r.lifecycle} | ${Math.round(r.actions * 10) / 10} | ${r.per} | ${types} |`;
    }),
  ];
  const rebuilds = rows.filter((r) => /rebuild/.test(r.lifecycle));
  const price = (actions: number) => `$${((actions * pricePerMillion) / 1e6).toFixed(2)}`;
  const notes = rebuilds.map(
    (r) =>
      `- 1,000 ${r.lifecycle.replace(' of 1 group', 's')}: ${Math.round(r.actions * 1000).toLocaleString('en')} Actions, ${price(r.actions * 1000)} at $${pricePerMillion} per million.`,
  );
  return [...lines, '', ...notes].join('\n');
}
