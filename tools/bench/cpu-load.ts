// How busy the machine and each process of the stack were while a scenario ran, from /proc (Linux): the figures
// that tell the controller's own latency from a machine with no CPU to spare.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScenarioLoad } from './results.js';

/** Clock ticks per second of /proc times: 100 on every Linux this runs on (sysconf CLK_TCK). */
export const TICKS_PER_SECOND = 100;

/** One line of /proc/<pid>/stat, the fields the CPU accounting reads. */
export interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime: the process's own threads. */
  ticks: number;
  /** cutime + cstime: its children that have exited and been waited for. */
  childTicks: number;
}

export function parseStat(pid: number, stat: string): ProcStat {
  // Fields after the parenthesised command name (which may hold spaces): state is the 3rd field of the line, ppid the
  // 4th, utime, stime, cutime and cstime the 14th to 17th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return {
    pid,
    ppid: Number(fields[1]),
    ticks: Number(fields[11]) + Number(fields[12]),
    childTicks: Number(fields[13]) + Number(fields[14]),
  };
}

/** User + system CPU ticks of a process (all its threads); undefined once it is gone. */
export function processTicks(pid: number): number | undefined {
  try {
    return parseStat(pid, readFileSync(`/proc/${pid}/stat`, 'utf8')).ticks;
  } catch {
    return undefined;
  }
}

/** Every process visible under `procRoot`, by pid; one that exits while it is read is left out. */
export function readProcTable(procRoot = '/proc'): Map<number, ProcStat> {
  const table = new Map<number, ProcStat>();
  for (const entry of readdirSync(procRoot)) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      table.set(Number(entry), parseStat(Number(entry), readFileSync(join(procRoot, entry, 'stat'), 'utf8')));
    } catch {
      /* gone meanwhile */
    }
  }
  return table;
}

/**
 * CPU ticks of a process and all of its descendants: their own, plus those of the children each has reaped, so a
 * short-lived child (PostgreSQL forks a backend per connection) still counts after it exits. undefined once the root
 * process is gone.
 */
export function treeTicks(table: Map<number, ProcStat>, pid: number): number | undefined {
  if (!table.has(pid)) return undefined;
  const children = new Map<number, number[]>();
  for (const p of table.values()) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p.pid]);
  let sum = 0;
  const seen = new Set<number>();
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    const p = table.get(next)!;
    sum += p.ticks + p.childTicks;
    queue.push(...(children.get(next) ?? []));
  }
  return sum;
}

/** treeTicks of one process, from a fresh read of /proc. */
export function processTreeTicks(pid: number, procRoot = '/proc'): number | undefined {
  return treeTicks(readProcTable(procRoot), pid);
}

export interface CpuSnapshot {
  at: number;
  /** Every CPU together, from the first line of /proc/stat. */
  busyTicks: number;
  totalTicks: number;
  byProcess: Record<string, number | undefined>;
}

/**
 * The machine's CPU and each named process's; those `asTree` picks are counted with their descendants (treeTicks),
 * from one read of /proc.
 */
export function cpuSnapshot(
  pids: Record<string, number | undefined>,
  asTree: (name: string) => boolean = () => false,
): CpuSnapshot {
  const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  // user nice system idle iowait irq softirq steal: idle and iowait are the time no CPU had work.
  const ticks = values.slice(0, 8).map(Number);
  const totalTicks = ticks.reduce((a, b) => a + b, 0);
  const busyTicks = totalTicks - (ticks[3] ?? 0) - (ticks[4] ?? 0);
  const table = Object.keys(pids).some(asTree) ? readProcTable() : undefined;
  const byProcess = Object.fromEntries(
    Object.entries(pids).map(([name, pid]) => [
      name,
      pid === undefined ? undefined : table && asTree(name) ? treeTicks(table, pid) : processTicks(pid),
    ]),
  );
  return { at: Date.now(), busyTicks, totalTicks, byProcess };
}

/** The load between two snapshots; a process missing from either is left out. */
export function loadBetween(from: CpuSnapshot, to: CpuSnapshot): ScenarioLoad {
  const cpuSeconds: Record<string, number> = {};
  for (const [name, before] of Object.entries(from.byProcess)) {
    const after = to.byProcess[name];
    if (before !== undefined && after !== undefined) {
      // Whole ticks are hundredths of a second: kept exact, so that a sum over processes (Temporal's) is too.
      cpuSeconds[name] = Math.round(after - before) / TICKS_PER_SECOND;
    }
  }
  const total = to.totalTicks - from.totalTicks;
  return {
    seconds: Math.round((to.at - from.at) / 100) / 10,
    machineBusyPercent: total > 0 ? Math.round((100 * (to.busyTicks - from.busyTicks)) / total) : 0,
    cpuSeconds,
  };
}
