import assert from 'node:assert/strict';
import { allSettledOrThrow } from '../../src/shared/all-settled.js';

const after = <T>(ms: number, value: T, fail = false) =>
  new Promise<T>((resolve, reject) => setTimeout(() => (fail ? reject(new Error(String(value))) : resolve(value)), ms));

describe('allSettledOrThrow: one round of calls', () => {
  it('gives every result in order, of every type', async () => {
    const [a, b, c] = await allSettledOrThrow([after(5, 'x'), after(1, 2), undefined]);
    assert.deepEqual([a, b, c], ['x', 2, undefined]);
  });

  it('throws the first failure only once every call has settled', async () => {
    let slowDone = false;
    const slow = after(30, 'slow').then((v) => {
      slowDone = true;
      return v;
    });
    await assert.rejects(allSettledOrThrow([after(1, 'boom', true), slow]), /boom/);
    assert.equal(slowDone, true, 'threw while a call of the round was still running');
  });

  it('throws the failure of the earliest call in the round when several fail', async () => {
    await assert.rejects(allSettledOrThrow([after(20, 'first', true), after(1, 'second', true)]), /first/);
  });
});
