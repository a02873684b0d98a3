import assert from 'node:assert/strict';
import { RestartBackoff } from '../../src/kube/restart-backoff.js';

describe('RestartBackoff: when a watch lists again', () => {
  const opts = { initialMs: 500, maxMs: 4000, stableMs: 30_000 };
  type Step = { at: number; listed?: true; delay?: number };
  const cases: { name: string; steps: Step[] }[] = [
    {
      name: 'an API server that is away: every list fails, the delay doubles up to its cap',
      steps: [500, 1000, 2000, 4000, 4000].map((delay, i) => ({ at: i * 10_000, delay })),
    },
    {
      name: 'a list that succeeds and a watch that fails at once: still backing off',
      steps: [
        { at: 0, delay: 500 },
        { at: 600, listed: true },
        { at: 700, delay: 1000 },
        { at: 1800, listed: true },
        { at: 1900, delay: 2000 },
      ],
    },
    {
      name: 'a watch that ran a while (the API server closing it) starts over from the shortest delay',
      steps: [
        { at: 0, delay: 500 },
        { at: 1000, delay: 1000 },
        { at: 2000, listed: true },
        { at: 2000 + 30_000, delay: 500 },
        { at: 32_600, delay: 1000 },
      ],
    },
  ];
  for (const { name, steps } of cases) {
    it(name, () => {
      const backoff = new RestartBackoff(opts);
      for (const step of steps) {
        if (step.listed) backoff.listed(step.at);
        else assert.equal(backoff.next(step.at), step.delay, `at ${step.at}`);
      }
    });
  }
});
