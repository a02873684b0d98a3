import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import type { Fields, Logger } from '../../src/log.js';
import { sdkLogger } from '../../src/worker/sdk-logging.js';

function recording(): { log: Logger; lines: [string, string, Fields | undefined][] } {
  const lines: [string, string, Fields | undefined][] = [];
  const log: Logger = {
    debug: (m, f) => lines.push(['debug', m, f]),
    info: (m, f) => lines.push(['info', m, f]),
    warn: (m, f) => lines.push(['warn', m, f]),
    error: (m, f) => lines.push(['error', m, f]),
    child: () => log,
  };
  return { log, lines };
}

describe('worker/sdk-logging: the SDK logs through our logger', () => {
  it('passes INFO, WARN and ERROR on at their level, with their fields', () => {
    const { log, lines } = recording();
    const sdk = sdkLogger(log);
    sdk.info('Worker state changed', { sdkComponent: 'worker', state: 'RUNNING' });
    sdk.log('WARN', 'Activity failed', { activityType: 'deletePod' });
    sdk.error('Worker failed');
    assert.deepEqual(lines, [
      ['info', 'Worker state changed', { sdkComponent: 'worker', state: 'RUNNING' }],
      ['warn', 'Activity failed', { activityType: 'deletePod' }],
      ['error', 'Worker failed', {}],
    ]);
  });

  it("drops the SDK's DEBUG and TRACE lines, as its default logger does", () => {
    const { log, lines } = recording();
    const sdk = sdkLogger(log);
    sdk.debug('Activity started');
    sdk.trace('poll');
    sdk.log('DEBUG', 'Workflow started');
    assert.deepEqual(lines, []);
  });
});
