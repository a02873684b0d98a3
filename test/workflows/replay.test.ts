// Replay compatibility: the histories in test/fixtures/histories were recorded from the workflow tests
// (`RECORD_HISTORIES=1 npx mocha test/workflows/<file>`) and replay against the code as it is now.
//
// The lifecycle workflows are pinned to the build that started them (Worker Versioning, docs/operations.md): when
// a change to one fails here, record its histories again. The reconcile moves to the new build while it runs: from
// the first release on, a change to it that fails here goes behind `patched()`, and the histories recorded before it
// stay. Until then nothing is released, and its histories too are recorded again.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
import { historiesDir, historyFromObject, workflowBundle } from './harness.js';

const files = readdirSync(historiesDir)
  .filter((f) => f.endsWith('.json'))
  .sort();

describe('replay: the kept histories of earlier versions replay against the workflows as they are now', function () {
  this.timeout(120_000);

  it('has a history of every workflow type to replay', () => {
    const types = new Set(files.map((f) => f.split('-')[0]));
    assert.deepEqual(
      [...types].sort(),
      ['provisionGroup', 'reconcileLeaderWorkerSet', 'recreateGroup', 'teardownGroup'],
      `kept histories: ${files.join(', ')}`,
    );
  });

  for (const file of files) {
    it(file, async () => {
      const { workflowId, history } = JSON.parse(readFileSync(join(historiesDir, file), 'utf8')) as {
        workflowId: string;
        history: unknown;
      };
      // Throws DeterminismViolationError when the code now makes other calls than the history recorded.
      await Worker.runReplayHistory(
        { workflowBundle: await workflowBundle(), replayName: file },
        historyFromObject(history),
        workflowId,
      );
    });
  }
});
