// The Temporal server's own floor for the trigger's reaction time: how long workflow starts take on the idle dev
// server, alone and in a burst as large as the benchmark's largest (both LeaderWorkerSets of the 50-group scenario).
// No worker polls the task queue; the workflows are terminated afterwards.
import { Client, Connection } from '@temporalio/client';
import { processTicks, TICKS_PER_SECOND } from './cpu-load.js';
import { Lifecycle, LwsName, LwsNamespace } from '../workflows/search-attributes.js';
import { percentile } from './results.js';

export interface StartFloor {
  /** One start at a time. */
  singleP50Ms: number;
  /** `burst` starts sent at once: the latency of each. */
  burst: number;
  burstP50Ms: number;
  burstP99Ms: number;
  /**
   * CPU time the server process used from the burst's first start until its last was answered, when its pid is
   * known: divided by the cores, the least time the burst can take on this machine.
   */
  burstServerCpuMs?: number;
}

const taskQueue = 'bench-start-floor';

export async function measureStartFloor(address: string, burst: number, serverPid?: number): Promise<StartFloor> {
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
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
    const ticksBefore = serverPid === undefined ? undefined : processTicks(serverPid);
    const burstTimes = await Promise.all(Array.from({ length: burst }, (_, i) => startOne(`floor/burst/${i}`)));
    const ticksAfter = serverPid === undefined ? undefined : processTicks(serverPid);
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
