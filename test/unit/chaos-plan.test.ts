import assert from 'node:assert/strict';
import { CHAOS_LIFECYCLES, FAULT_KINDS, planTrials } from '../../tools/chaos/plan.js';

describe('chaos planTrials', () => {
  const opts = { seed: 7, trials: 32, replicas: 3, graceSeconds: 10 };

  it('is the same campaign for the same seed, another for another', () => {
    assert.deepEqual(planTrials(opts), planTrials(opts));
    assert.notDeepEqual(planTrials(opts), planTrials({ ...opts, seed: 8 }));
  });

  it('covers every lifecycle, policy and fault once per 32 trials', () => {
    const combos = new Set(planTrials(opts).map((t) => `${t.lifecycle}/${t.policy}/${t.fault}`));
    assert.equal(combos.size, CHAOS_LIFECYCLES.length * 2 * FAULT_KINDS.length);
  });

  it('covers every fault and lifecycle under both policies in the first 8 trials, whatever the seed', () => {
    for (const seed of [1, 2, 3, 99]) {
      const plans = planTrials({ ...opts, seed, trials: 8 });
      assert.equal(new Set(plans.map((t) => t.fault)).size, FAULT_KINDS.length, `seed ${seed}`);
      assert.equal(new Set(plans.map((t) => t.lifecycle)).size, CHAOS_LIFECYCLES.length, `seed ${seed}`);
      assert.equal(new Set(plans.map((t) => t.policy)).size, 2, `seed ${seed}`);
    }
  });

  it('strikes within the first 300 ms in about half the trials, and never after 1 x grace', () => {
    const plans = planTrials({ ...opts, trials: 400 });
    const early = plans.filter((t) => t.faultDelayMs <= 300).length;
    assert.ok(early > 150 && early < 250, `${early} of 400 early`);
    assert.ok(plans.every((t) => t.faultDelayMs >= 0 && t.faultDelayMs <= 10_000));
    assert.ok(plans.every((t) => t.groupIndex >= 0 && t.groupIndex < 3));
  });

  it('draws only the fault kinds asked for', () => {
    const plans = planTrials({ ...opts, faults: ['trigger'] });
    assert.deepEqual(new Set(plans.map((t) => t.fault)), new Set(['trigger']));
  });
});
