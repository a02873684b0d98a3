// Peak memory and CPU time of a live process, from /proc (Linux).
import { readFileSync } from 'node:fs';
import { processTicks, TICKS_PER_SECOND } from './cpu-load.js';
import type { ProcessStats } from './results.js';

export function processStats(pid: number): ProcessStats {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const peakKb = Number(/VmHWM:\s*(\d+)/.exec(status)?.[1] ?? 0);
  const ticks = processTicks(pid) ?? 0;
  return { peakRssMb: Math.round(peakKb / 1024), cpuSeconds: Math.round((ticks / TICKS_PER_SECOND) * 10) / 10 };
}

/** VmRSS: the resident memory a live process has now, MB. */
export function residentMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s*(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}
