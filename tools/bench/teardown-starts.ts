// The controller's share of a teardown, split at the two points Temporal records: when the trigger's start reached
// the server, and when a worker took the teardown's first workflow task (whose first call deletes the workers under
// Parallel). Read from the histories after the rounds, so that the reads do not load the rounds they measure.
import type { Client } from '@temporalio/client';
// A CommonJS package: Node's ESM loader gives it as a default export only.
import protoPackage, { type temporal as proto } from '@temporalio/proto';

const { EventType } = protoPackage.temporal.api.enums.v1;

/** When a teardown's run started on the server and its first workflow task was taken, ms since the epoch. */
export interface TeardownStart {
  startedAt: number;
  firstTaskStartedAt: number;
}

/** From the first events of a history; undefined until its first task has started. */
export function teardownStartOf(events: proto.api.history.v1.IHistoryEvent[]): TeardownStart | undefined {
  const at = (type: number) => {
    const time = events.find((e) => e.eventType === type)?.eventTime;
    return time ? Number(time.seconds ?? 0) * 1000 + Math.floor((time.nanos ?? 0) / 1e6) : undefined;
  };
  const startedAt = at(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
  const firstTaskStartedAt = at(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED);
  return startedAt === undefined || firstTaskStartedAt === undefined ? undefined : { startedAt, firstTaskStartedAt };
}

/**
 * The starts of the given workflow IDs (each ID's latest run), a few at a time; an ID with no run, or no task
 * started yet, is left out.
 */
export async function teardownStarts(client: Client, workflowIds: string[]): Promise<Map<string, TeardownStart>> {
  const found = new Map<string, TeardownStart>();
  for (let i = 0; i < workflowIds.length; i += 16) {
    await Promise.all(
      workflowIds.slice(i, i + 16).map(async (workflowId) => {
        // A first task starts by the third event: ten also cover a start that came with signals.
        const page = await client.workflowService
          .getWorkflowExecutionHistory({
            namespace: client.options.namespace,
            execution: { workflowId },
            maximumPageSize: 10,
          })
          .catch(() => undefined);
        const start = page && teardownStartOf(page.history?.events ?? []);
        if (start) found.set(workflowId, start);
      }),
    );
  }
  return found;
}
