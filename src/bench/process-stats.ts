// Peak memory and CPU time of a live process, from /proc (Linux).
import { readFileSync } from 'node:fs';
import type { ProcessStats } from './results.js';

/** Clock ticks per second of /proc/<pid>/stat times: 100 on every Linux this runs on (sysconf CLK_TCK). */
const TICKS_PER_SECOND = 100;

export function processStats(pid: number): ProcessStats {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const peakKb = Number(/VmHWM:\s*(\d+)/.exec(status)?.[1] ?? 0);
  // Fields after the parenthesised command name; utime and stime are the 14th and 15th fields of the line.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { peakRssMb: Math.round(peakKb / 1024), cpuSeconds: Math.round((ticks / TICKS_PER_SECOND) * 10) / 10 };
}
