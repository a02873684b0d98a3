// RFC 3339 times compared as instants: as text, `...:20Z` sorts after `...:20.812Z`.

/** The latest instant among RFC 3339 times (any precision), or undefined if none is given. */
export function latestOf(times: (string | undefined)[]): string | undefined {
  let latest: string | undefined;
  for (const t of times)
    if (t !== undefined && (latest === undefined || Date.parse(t) > Date.parse(latest))) latest = t;
  return latest;
}
