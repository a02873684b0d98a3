// The command-line checks the fault campaigns share (scripts/chaos.ts, scripts/api-chaos.ts).

/** `--<flag> <value>` as a whole number within [min, max]. */
export function wholeFlag(flag: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`--${flag} ${value}: expected a whole number from ${min} to ${max}`);
  }
  return n;
}

/** `--<flag> a,b,c`, each one of `allowed`. */
export function kindsFlag<K extends string>(flag: string, value: string, allowed: readonly K[]): K[] {
  const kinds = value.split(',').filter(Boolean);
  for (const k of kinds) {
    if (!(allowed as readonly string[]).includes(k))
      throw new Error(`--${flag} ${k}: expected some of ${allowed.join(', ')}`);
  }
  return kinds as K[];
}
