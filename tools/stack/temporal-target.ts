// Which Temporal the demo, the bench and the end-to-end tests run on: the CLI's dev server (one process, SQLite), or
// the production-shaped cluster of `npm run temporal:up` (four services on PostgreSQL).
import type { Logger } from '../../src/log.js';
import { startDevServer } from '../../src/dev-server/dev-server.js';
import { devServerBinaries, temporalClusterBinaries } from './provision.js';
import {
  readTemporalClusterState,
  temporalClusterDown,
  temporalClusterUp,
  temporalMetricsUrls,
} from './temporal-cluster.js';

export const TEMPORAL_TARGETS = ['dev-server', 'cluster'] as const;
export type TemporalTarget = (typeof TEMPORAL_TARGETS)[number];

/** `--temporal dev-server|cluster` (`dev` is short for the dev server). */
export function parseTemporalTarget(value: string, flag = '--temporal'): TemporalTarget {
  if (value === 'dev') return 'dev-server';
  if ((TEMPORAL_TARGETS as readonly string[]).includes(value)) return value as TemporalTarget;
  throw new Error(`${flag} ${value}: expected one of ${TEMPORAL_TARGETS.join(', ')}`);
}

/** The binaries a target runs (provision.ts), for an entry point to provision only those. */
export function temporalBinaries(target: TemporalTarget): readonly string[] {
  return target === 'dev-server' ? devServerBinaries : temporalClusterBinaries;
}

export interface RunningTemporal {
  target: TemporalTarget;
  /** host:port of the frontend, for TEMPORAL_ADDRESS. */
  address: string;
  namespace: string;
  uiUrl: string;
  /** The server's own processes, for CPU and memory accounting (PostgreSQL counts its backends too). */
  pids: Record<string, number>;
  /** Its Prometheus pages (the `action` counter is summed over them): the dev server's with `metrics`, a cluster's four. */
  metricsUrls: string[];
  /** Stops what this call started: a cluster that was already up stays up. */
  stop(): Promise<void>;
}

export async function startTemporal(
  target: TemporalTarget,
  log: Logger,
  /** uiCodecEndpoint: the dev server's Web UI only (the cluster's UI server reads TEMPORAL_CODEC_ENDPOINT). */
  opts: { dbFilename?: string; uiCodecEndpoint?: string; metrics?: boolean; listenAddress?: string } = {},
): Promise<RunningTemporal> {
  if (target === 'dev-server') {
    const server = await startDevServer({
      ...(opts.dbFilename ? { dbFilename: opts.dbFilename } : {}),
      ...(opts.uiCodecEndpoint ? { uiCodecEndpoint: opts.uiCodecEndpoint } : {}),
      ...(opts.metrics ? { metrics: true } : {}),
      ...(opts.listenAddress ? { listenAddress: opts.listenAddress } : {}),
    });
    return {
      target,
      address: server.address,
      namespace: 'default',
      uiUrl: server.uiUrl,
      pids: server.child.pid === undefined ? {} : { temporal: server.child.pid },
      metricsUrls: server.metricsUrl ? [server.metricsUrl] : [],
      stop: () => server.stop(),
    };
  }
  const before = await readTemporalClusterState();
  const state = await temporalClusterUp(log);
  const startedHere = before?.pids['frontend'] !== state.pids['frontend'];
  return {
    target,
    address: state.address,
    namespace: state.namespace,
    uiUrl: state.uiUrl,
    pids: Object.fromEntries(Object.entries(state.pids).map(([name, pid]) => [`temporal-${name}`, pid])),
    metricsUrls: temporalMetricsUrls(state),
    stop: async () => {
      if (startedHere) await temporalClusterDown(log);
    },
  };
}
