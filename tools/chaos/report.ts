// The campaign's figures per fault kind, as docs/reliability.md shows them.
import { percentile } from '../bench/results.js';
import { formatDuration } from '../../src/log.js';
import type { CampaignResult, TrialResult } from './campaign.js';
import { FAULT_KINDS } from './plan.js';

/** "p50 / max" of the values present, "-" without any. */
function range(values: (number | undefined)[], unit: (v: number) => string): string {
  const present = values.filter((v): v is number => v !== undefined);
  return present.length ? `${unit(percentile(present, 50))} / ${unit(Math.max(...present))}` : '-';
}

const ms = (v: number) => `${v} ms`;

/** The columns every campaign's table has, over the trials of one fault kind. */
export function trialFigures(
  of: { violations: string[]; settleMs?: number; parallelLagMs?: number; outageMs?: number }[],
): { trials: number; failed: number; settle: string; parallelLag: string; outage: string } {
  return {
    trials: of.length,
    failed: of.filter((t) => t.violations.length).length,
    settle: range(
      of.map((t) => t.settleMs),
      formatDuration,
    ),
    parallelLag: range(
      of.map((t) => t.parallelLagMs),
      ms,
    ),
    outage: range(
      of.map((t) => t.outageMs),
      formatDuration,
    ),
  };
}

export interface FaultRow {
  fault: string;
  trials: number;
  failed: number;
  settle: string;
  parallelLag: string;
  /** Parallel teardowns whose workers all terminated before their leader was gone. */
  parallelKept: string;
  /** Parallel, fault first: workers terminating after the killed process served again. */
  afterRecovery: string;
  outage: string;
}

export function faultRows(trials: TrialResult[]): FaultRow[] {
  return FAULT_KINDS.map((fault) => {
    const of = trials.filter((t) => t.plan.fault === fault);
    return {
      fault,
      ...trialFigures(of),
      parallelKept: (() => {
        const k = of.flatMap((t) => (t.parallelKept ? [t.parallelKept] : []));
        const sum = (f: (x: { kept: number; of: number }) => number) => k.reduce((a, x) => a + f(x), 0);
        return k.length ? `${sum((x) => x.kept)} of ${sum((x) => x.of)}` : '-';
      })(),
      afterRecovery: range(
        of.map((t) => t.afterRecoveryMs),
        ms,
      ),
    };
  }).filter((r) => r.trials > 0);
}

export function campaignMarkdown(result: CampaignResult): string {
  const rows = faultRows(result.trials);
  const lines = [
    `\`npm run chaos -- --seed ${result.seed} --trials ${result.trials.length} --temporal ${result.temporal} --grace ${result.graceSeconds}\`` +
      ` on ${result.date.slice(0, 10)}: ${result.replicas} groups of ${result.size}, G = ${result.graceSeconds} s,` +
      ` ${formatDuration(result.durationMs)}.`,
    '',
    '| kill -9 of | trials | failed | settle p50 / max | Parallel lag p50 / max | after the restart p50 / max | Parallel kept | outage p50 / max |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((r) =>
      [r.fault, r.trials, r.failed, r.settle, r.parallelLag, r.afterRecovery, r.parallelKept, r.outage]
        .join(' | ')
        .replace(/^/, '| ')
        .concat(' |'),
    ),
  ];
  const failures = result.trials.filter((t) => t.violations.length);
  if (failures.length) {
    lines.push('', 'Failed trials:', '');
    for (const t of failures) {
      lines.push(
        `- ${t.plan.index}: ${t.plan.lifecycle} (${t.plan.policy}), ${t.plan.fault} at +${t.plan.faultDelayMs} ms: ${t.violations.join('; ')}`,
      );
    }
  }
  return lines.join('\n') + '\n';
}
