import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { rewriteLwsValues } from '../../src/model/index.js';

describe('model/admission-rewrites: the values upstream rewrites on admission', () => {
  const spec = (lwt: Record<string, unknown>, rollout?: Record<string, unknown>) => ({
    spec: { leaderWorkerTemplate: lwt, ...(rollout && { rolloutStrategy: rollout }) },
  });
  const rows: Array<[string, unknown, unknown]> = [
    ['restartPolicy Default becomes None', spec({ restartPolicy: 'Default' }), spec({ restartPolicy: 'None' })],
    [
      'rolloutStrategy.type "" becomes RollingUpdate',
      spec({}, { type: '', rollingUpdateConfiguration: { maxSurge: 1 } }),
      spec({}, { type: 'RollingUpdate', rollingUpdateConfiguration: { maxSurge: 1 } }),
    ],
    [
      'both at once',
      spec({ restartPolicy: 'Default', size: 4 }, { type: '' }),
      spec({ restartPolicy: 'None', size: 4 }, { type: 'RollingUpdate' }),
    ],
    ['other restart policies stay', spec({ restartPolicy: 'RecreateGroupAfterStart' }), null],
    ['an absent type stays absent (the CRD defaults it)', spec({}, { rollingUpdateConfiguration: {} }), null],
    ['a null rolloutStrategy stays', { spec: { leaderWorkerTemplate: {}, rolloutStrategy: null } }, null],
    ['an object without a spec stays', { metadata: { name: 'x' } }, null],
    ['a value of the wrong type stays (the schema refuses it)', spec({ restartPolicy: 7 }), null],
  ];
  for (const [name, input, expected] of rows) {
    it(name, () => {
      const out = rewriteLwsValues(input);
      assert.deepEqual(out, expected ?? input);
      assert.deepEqual(rewriteLwsValues(out), out, 'a second call changes nothing');
    });
  }

  it('leaves its input alone', () => {
    const input = spec({ restartPolicy: 'Default' });
    rewriteLwsValues(input);
    assert.deepEqual(input, spec({ restartPolicy: 'Default' }));
  });
});
