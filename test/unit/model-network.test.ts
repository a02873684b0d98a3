import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { applySpecDefaults, publishNotReadyAddresses, type LeaderWorkerSetSpec } from '../../src/model/index.js';

const leaderWorkerTemplate = { workerTemplate: { spec: { containers: [{ name: 'w', image: 'nginx' }] } } };

describe('model/network', () => {
  const rows: Array<[string, LeaderWorkerSetSpec, boolean]> = [
    ['no networkConfig: true, as LWS always did', { leaderWorkerTemplate }, true],
    [
      'networkConfig without the field: true',
      { leaderWorkerTemplate, networkConfig: { subdomainPolicy: 'Shared' } },
      true,
    ],
    ['set true', { leaderWorkerTemplate, networkConfig: { publishNotReadyAddresses: true } }, true],
    ['set false', { leaderWorkerTemplate, networkConfig: { publishNotReadyAddresses: false } }, false],
    [
      'set false under UniquePerReplica',
      { leaderWorkerTemplate, networkConfig: { subdomainPolicy: 'UniquePerReplica', publishNotReadyAddresses: false } },
      false,
    ],
    [
      'JSON null: unset, so true',
      { leaderWorkerTemplate, networkConfig: { publishNotReadyAddresses: null } } as unknown as LeaderWorkerSetSpec,
      true,
    ],
    ['networkConfig null: true', { leaderWorkerTemplate, networkConfig: null } as unknown as LeaderWorkerSetSpec, true],
  ];
  for (const [name, spec, expected] of rows) {
    it(`publishNotReadyAddresses: ${name}`, () => {
      assert.equal(publishNotReadyAddresses(spec), expected);
      // The defaulted spec, which most model code reads, gives the same answer.
      assert.equal(publishNotReadyAddresses(applySpecDefaults(spec)), expected);
    });
  }
});
