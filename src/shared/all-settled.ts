// Several calls at once, as one round: shared by the workflows (local activities) and the activities (API calls).

/**
 * Like Promise.all, but waits for every call to settle before it throws (the failure of the first call, in the
 * order given, that failed). A workflow that fails while one of its local activities is still running does not
 * fail: its workflow task is retried, and the whole round runs again.
 */
export async function allSettledOrThrow<T extends readonly unknown[]>(
  calls: readonly [...T],
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(calls);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as {
    -readonly [K in keyof T]: Awaited<T[K]>;
  };
}
