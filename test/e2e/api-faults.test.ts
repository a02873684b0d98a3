import assert from 'node:assert/strict';
import { API_FAULT_KINDS, apiCampaignMarkdown, runApiCampaign } from '../../tools/chaos/api-campaign.js';
import { ensureCluster } from '../fixtures/cluster.js';

const PROXY_FAULTS = API_FAULT_KINDS.filter((kind) => !kind.endsWith('-restart'));

/**
 * A short seeded `npm run api-chaos` campaign: two trials per fault the proxy injects, one per policy (the controller
 * behind the fault proxy; the restarts of the API server and etcd are `npm run api-chaos`'s), small groups and a short grace period to keep it
 * to a few minutes. Every trial must keep every invariant, and under 429s and 5xx the controller's own metrics must
 * have counted its retries: it slowed down and dropped nothing.
 */
describe('npm run api-chaos: a short seeded campaign', function () {
  this.timeout(15 * 60_000);

  it('keeps every invariant under every API fault, and counts the retries', async () => {
    await ensureCluster();
    const result = await runApiCampaign({
      seed: 3,
      trialsPerFault: 2,
      // The restarts of the API server and etcd broke invariants here (an extra worker pod during an LWS deletion; no
      // group provisioned after etcd came back) and left the shared test cluster unusable: `npm run api-chaos` runs
      // them, npm test does not until that is understood (docs/reliability.md).
      faults: PROXY_FAULTS,
      temporal: 'dev-server',
      graceSeconds: 2,
      replicas: 2,
      size: 2,
      progress: (line) => console.log(`      ${line}`),
    });
    const report = apiCampaignMarkdown(result);
    console.log(report.replace(/^/gm, '      '));
    assert.deepEqual(new Set(result.trials.map((t) => t.plan.fault)), new Set(PROXY_FAULTS), 'every proxy fault kind');
    assert.deepEqual(
      result.trials.filter((t) => t.violations.length),
      [],
      report,
    );
    for (const fault of ['429', '5xx'] as const) {
      const trials = result.trials.filter((t) => t.plan.fault === fault);
      assert.ok(
        trials.every((t) => (t.injected ?? 0) > 0),
        `${fault}: the proxy injected faults\n${report}`,
      );
      const counted = trials.flatMap((t) => Object.entries(t.retries)).filter(([key]) => key.endsWith(`/${fault}`));
      assert.ok(
        counted.reduce((sum, [, n]) => sum + n, 0) > 0,
        `${fault}: lws_kube_api_retries_total counted the retries\n${report}`,
      );
    }
  });
});
