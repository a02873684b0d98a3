// Before each measured round: wait until the controller has finished its group workflows. A round that starts the
// moment the pods look Ready otherwise lands on a controller still finishing the previous work (the last Events,
// status writes, the teardowns' reports), part of why a first 50-group round measured slower than the second
// (Parallel teardown p50 24.32 s against 16.25 s).
import type { Client } from '@temporalio/client';

/** Running group workflows on the controller's task queue (the reconcile workflows run for the LWS's lifetime). */
function busyQuery(taskQueue: string): string {
  return `ExecutionStatus = "Running" AND TaskQueue = "${taskQueue}" AND WorkflowType != "reconcileLeaderWorkerSet"`;
}

export async function settle(
  client: Client,
  taskQueue: string,
  progress: (line: string) => void,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { count } = await client.workflow.count(busyQuery(taskQueue));
    if (count === 0) return;
    if (Date.now() > deadline) {
      progress(`  WARNING ${count} group workflows still running after ${timeoutMs / 1000} s; measuring anyway`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
