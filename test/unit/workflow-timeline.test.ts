// The timeline's order: by instant, whatever the timestamps' precision.
import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { latestOf } from '../../src/shared/instants.js';
import { placeInTime, type TimelineEntry } from '../../src/workflows/timeline.js';

const entry = (event: TimelineEntry['event'], at: string): TimelineEntry => ({ event, at });

describe('workflows/timeline order', () => {
  const leaderGone = entry('leader gone', '2026-12-01T10:00:20.812Z');
  const cases: [string, TimelineEntry[], string, number][] = [
    ['a whole second before a fraction of that second', [leaderGone], '2026-12-01T10:00:20Z', 0],
    ['a later instant with fewer digits', [leaderGone], '2026-12-01T10:00:21Z', 1],
    ['the same instant goes after the entries already there', [leaderGone], '2026-12-01T10:00:20.812Z', 1],
    ['an empty timeline', [], '2026-12-01T10:00:20Z', 0],
  ];
  for (const [what, entries, at, index] of cases) {
    it(`places ${what}`, () => assert.equal(placeInTime(entries, at), index));
  }

  it('takes the latest instant, not the last string', () => {
    assert.equal(latestOf(['2026-12-01T10:00:20Z', '2026-12-01T10:00:19.999Z']), '2026-12-01T10:00:20Z');
    assert.equal(latestOf(['2026-12-01T10:00:20.5Z', '2026-12-01T10:00:20Z']), '2026-12-01T10:00:20.5Z');
    assert.equal(latestOf([undefined, '2026-12-01T10:00:20Z']), '2026-12-01T10:00:20Z');
    assert.equal(latestOf([undefined]), undefined);
  });
});
