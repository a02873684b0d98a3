import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { RecentLeaderWorkerSets } from '../../src/activities/recent-lws.js';
import type { LwsTarget } from '../../src/model/index.js';
import { sampleLws } from './model-fixtures.js';

describe('the LWSs a worker read lately: what a worker StatefulSet build may reuse', () => {
  const lws = sampleLws();
  const ref = { namespace: 'default', name: 'demo' };
  const target: LwsTarget = { ref, uid: 'lws-uid-1', generation: 3 };
  const cases: [string, LwsTarget, number, boolean][] = [
    ['the target, read 1 s ago: reused', target, 1_000, true],
    ['the target, read 5 s ago: still reused (the TTL is inclusive)', target, 5_000, true],
    ['the target, read 5.001 s ago: read again', target, 5_001, false],
    ['a newer generation decided on: read again', { ...target, generation: 4 }, 0, false],
    ['an LWS created again under the name (another uid): read again', { ...target, uid: 'lws-uid-2' }, 0, false],
    ['another LWS: nothing to reuse', { ...target, ref: { namespace: 'default', name: 'other' } }, 0, false],
    [
      'the same name in another namespace: nothing to reuse',
      { ...target, ref: { namespace: 'ns2', name: 'demo' } },
      0,
      false,
    ],
  ];
  for (const [what, wanted, after, reused] of cases) {
    it(what, () => {
      let now = 10_000;
      const recent = new RecentLeaderWorkerSets(5_000, () => now);
      recent.remember(ref, lws);
      now += after;
      assert.equal(recent.target(wanted), reused ? lws : undefined);
    });
  }

  it('a read that found no LWS forgets the one remembered', () => {
    const recent = new RecentLeaderWorkerSets(5_000, () => 0);
    recent.remember(ref, lws);
    recent.remember(ref, null);
    assert.equal(recent.target(target), undefined);
  });

  it('holds only the reads of the last TTL: older ones go at the next read', () => {
    let now = 0;
    const recent = new RecentLeaderWorkerSets(5_000, () => now);
    recent.remember(ref, lws);
    now = 6_000;
    recent.remember({ namespace: 'ns2', name: 'demo' }, { ...lws, metadata: { ...lws.metadata, namespace: 'ns2' } });
    assert.equal(recent.size, 1);
  });
});
