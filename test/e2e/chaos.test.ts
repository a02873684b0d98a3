import assert from 'node:assert/strict';
import { runCampaign } from '../../tools/chaos/campaign.js';
import { FAULT_KINDS } from '../../tools/chaos/plan.js';
import { campaignMarkdown } from '../../tools/chaos/report.js';
import { ensureCluster } from '../fixtures/cluster.js';
import { testTemporalTargets } from '../fixtures/controller.js';

/**
 * A short seeded `npm run chaos` campaign on each Temporal target: every fault kind strikes once per policy, and
 * every trial must keep every invariant (docs/reliability.md has the full campaign's figures).
 */
const TRIALS = 8;

for (const temporal of testTemporalTargets()) {
  describe(`npm run chaos: a short seeded campaign (Temporal ${temporal})`, function () {
    this.timeout(30 * 60_000);

    it(`${TRIALS} trials keep every invariant`, async () => {
      await ensureCluster();
      const result = await runCampaign({
        seed: 2,
        trials: TRIALS,
        temporal,
        graceSeconds: 5,
        replicas: 3,
        size: 3,
        progress: (line) => console.log(`      ${line}`),
      });
      const report = campaignMarkdown(result);
      console.log(report.replace(/^/gm, '      '));
      assert.equal(result.trials.length, TRIALS);
      assert.deepEqual(new Set(result.trials.map((t) => t.plan.fault)), new Set(FAULT_KINDS), 'every fault kind');
      assert.deepEqual(
        result.trials.filter((t) => t.violations.length),
        [],
        report,
      );
    });
  });
}
