// The Temporal server of a campaign, with the one fault it takes: kill -9 and a start on the same ports and data.
// The dev server keeps its SQLite file; the cluster's four services come back one by one, PostgreSQL untouched.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../src/log.js';
import { startDevServer, type DevServer } from '../../src/dev-server/dev-server.js';
import { stateDir } from '../stack/paths.js';
import { freePort, SERVER_PORTS } from '../../src/dev-server/processes.js';
import { killTemporalService, startTemporalService, type TemporalService } from '../stack/temporal-cluster.js';
import { startTemporal, type TemporalTarget } from '../stack/temporal-target.js';

export interface ChaosTemporal {
  target: TemporalTarget;
  address: string;
  namespace: string;
  kill(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const CLUSTER_SERVICES: TemporalService[] = ['history', 'matching', 'frontend', 'worker'];

export async function startChaosTemporal(target: TemporalTarget, log: Logger): Promise<ChaosTemporal> {
  if (target === 'cluster') {
    const running = await startTemporal('cluster', log);
    return {
      target,
      address: running.address,
      namespace: running.namespace,
      kill: async () => {
        await Promise.all(CLUSTER_SERVICES.map((s) => killTemporalService(s)));
      },
      start: async () => {
        for (const s of CLUSTER_SERVICES) await startTemporalService(s);
      },
      stop: () => running.stop(),
    };
  }
  const port = await freePort(SERVER_PORTS);
  const uiPort = await freePort(SERVER_PORTS);
  const dbFilename = join(stateDir, 'temporal', `chaos-${process.pid}.sqlite`);
  let server: DevServer = await startDevServer({ port, uiPort, dbFilename });
  return {
    target,
    address: server.address,
    namespace: 'default',
    kill: async () => {
      server.child.kill('SIGKILL');
      await new Promise<void>((resolve) =>
        server.child.exitCode !== null || server.child.signalCode !== null
          ? resolve()
          : server.child.once('exit', () => resolve()),
      );
    },
    start: async () => {
      server = await startDevServer({ port, uiPort, dbFilename });
    },
    stop: async () => {
      await server.stop();
      await rm(dbFilename, { force: true });
    },
  };
}
