// The Temporal server's own floor for the trigger's reaction time: how long workflow starts take on the idle server
// (the dev server or the cluster), alone and in a burst as large as the benchmark's largest (both LeaderWorkerSets of
// the 50-group scenario). No worker polls the task queue; the workflows are terminated afterwards.
import { Client, Connection } from '@temporalio/client';
import { readProcTable, treeTicks, TICKS_PER_SECOND } from './cpu-load.js';
import { Lifecycle, LwsName, LwsNamespace } from '../../src/workflows/search-attributes.js';
import { percentile } from './results.js';

export interface StartFloor {
  /** One start at a time. */
  singleP50Ms: number;
  /** `burst` starts sent at once: the latency of each. */
  burst: number;
  burstP50Ms: number;
  burstP99Ms: number;
  /**
   * CPU time the server's processes used (all of them with their descendants: a cluster's four services, its UI and
   * PostgreSQL with its backends) from the burst's first start until its last was answered, when their pids are
   * known: divided by the cores, the least time the burst can take on this machine.
   */
  burstServerCpuMs?: number;
}

const taskQueue = 'bench-start-floor';

/** CPU ticks of every process given, with its descendants; undefined when none is known or one is gone. */
function serverTicks(pids: number[]): number | undefined {
  if (pids.length === 0) return undefined;
  const table = readProcTable();
  let sum = 0;
  for (const pid of pids) {
    const ticks = treeTicks(table, pid);
    if (ticks === undefined) return undefined;
    sum += ticks;
  }
  return sum;
}

export async function measureStartFloor(
  address: string,
  burst: number,
  opts: { namespace?: string; serverPids?: number[] } = {},
): Promise<StartFloor> {
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace: opts.namespace ?? 'default' });
  const pids = opts.serverPids ?? [];
  const ids: string[] = [];
  // The same shape as the trigger's starts: a summary, search attributes and a small argument.
  const startOne = async (id: string) => {
    ids.push(id);
    const t0 = Date.now();
    await client.workflow.start('teardownGroup', {
      taskQueue,
      workflowId: id,
      args: [{ namespace: 'bench', name: 'floor', groupIndex: 0 }],
      staticSummary: 'start floor',
      typedSearchAttributes: [
        { key: LwsNamespace, value: 'bench' },
        { key: LwsName, value: 'floor' },
        { key: Lifecycle, value: 'rebuild' },
      ],
    });
    return Date.now() - t0;
  };
  try {
    const single: number[] = [];
    for (let i = 0; i < 20; i++) single.push(await startOne(`floor/single/${i}`));
    const ticksBefore = serverTicks(pids);
    const burstTimes = await Promise.all(Array.from({ length: burst }, (_, i) => startOne(`floor/burst/${i}`)));
    const ticksAfter = serverTicks(pids);
    return {
      singleP50Ms: percentile(single, 50),
      burst,
      burstP50Ms: percentile(burstTimes, 50),
      burstP99Ms: percentile(burstTimes, 99),
      ...(ticksBefore !== undefined && ticksAfter !== undefined
        ? { burstServerCpuMs: Math.round(((ticksAfter - ticksBefore) * 1000) / TICKS_PER_SECOND) }
        : {}),
    };
  } finally {
    await Promise.all(
      ids.map((id) =>
        client.workflow
          .getHandle(id)
          .terminate('benchmark start floor measured')
          .catch(() => undefined),
      ),
    );
    await connection.close();
  }
}
