import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { kubernetesRelease } from '../../tools/stack/paths.js';

describe('stack/paths: which Kubernetes release the local cluster runs', () => {
  const rows: Array<[string | undefined, 'newest' | 'floor']> = [
    [undefined, 'newest'],
    ['', 'newest'],
    ['newest', 'newest'],
    ['floor', 'floor'],
  ];
  for (const [value, expected] of rows) {
    it(`LWS_KUBERNETES=${value ?? '(unset)'} runs ${expected}`, () => {
      assert.equal(kubernetesRelease(value === undefined ? {} : { LWS_KUBERNETES: value }), expected);
    });
  }

  it('refuses another value, naming the variable and what is allowed', () => {
    assert.throws(() => kubernetesRelease({ LWS_KUBERNETES: '1.30' }), /LWS_KUBERNETES=1\.30 .*newest .*floor/);
  });
});
