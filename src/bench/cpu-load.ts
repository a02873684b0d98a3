// How busy the machine and each process of the stack were while a scenario ran, from /proc (Linux): the figures
// that tell the controller's own latency from a machine with no CPU to spare.
import { readFileSync } from 'node:fs';
import type { ScenarioLoad } from './results.js';

/** Clock ticks per second of /proc times: 100 on every Linux this runs on (sysconf CLK_TCK). */
export const TICKS_PER_SECOND = 100;

/** User + system CPU ticks of a process (all its threads); undefined once it is gone. */
export function processTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th fields of the line.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

export interface CpuSnapshot {
  at: number;
  /** Every CPU together, from the first line of /proc/stat. */
  busyTicks: number;
  totalTicks: number;
  byProcess: Record<string, number | undefined>;
}

export function cpuSnapshot(pids: Record<string, number | undefined>): CpuSnapshot {
  const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  // user nice system idle iowait irq softirq steal: idle and iowait are the time no CPU had work.
  const ticks = values.slice(0, 8).map(Number);
  const totalTicks = ticks.reduce((a, b) => a + b, 0);
  const busyTicks = totalTicks - (ticks[3] ?? 0) - (ticks[4] ?? 0);
  const byProcess = Object.fromEntries(
    Object.entries(pids).map(([name, pid]) => [name, pid === undefined ? undefined : processTicks(pid)]),
  );
  return { at: Date.now(), busyTicks, totalTicks, byProcess };
}

/** The load between two snapshots; a process missing from either is left out. */
export function loadBetween(from: CpuSnapshot, to: CpuSnapshot): ScenarioLoad {
  const cpuSeconds: Record<string, number> = {};
  for (const [name, before] of Object.entries(from.byProcess)) {
    const after = to.byProcess[name];
    if (before !== undefined && after !== undefined) {
      cpuSeconds[name] = Math.round(((after - before) / TICKS_PER_SECOND) * 10) / 10;
    }
  }
  const total = to.totalTicks - from.totalTicks;
  return {
    seconds: Math.round((to.at - from.at) / 100) / 10,
    machineBusyPercent: total > 0 ? Math.round((100 * (to.busyTicks - from.busyTicks)) / total) : 0,
    cpuSeconds,
  };
}
