import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cpuSnapshot,
  loadBetween,
  parseStat,
  processTicks,
  processTreeTicks,
  readProcTable,
  treeTicks,
  type CpuSnapshot,
  type ProcStat,
} from '../../tools/bench/cpu-load.js';

const snapshot = (at: number, busyTicks: number, totalTicks: number, byProcess: CpuSnapshot['byProcess']) => ({
  at,
  busyTicks,
  totalTicks,
  byProcess,
});

describe('bench CPU load between two snapshots', () => {
  const cases: { name: string; from: CpuSnapshot; to: CpuSnapshot; want: ReturnType<typeof loadBetween> }[] = [
    {
      name: 'per-process seconds from ticks, machine busy share of all CPUs',
      from: snapshot(1_000, 500, 1_000, { worker: 100, 'kube-apiserver': 50 }),
      to: snapshot(11_000, 1_900, 3_000, { worker: 1_350, 'kube-apiserver': 750 }),
      want: { seconds: 10, machineBusyPercent: 70, cpuSeconds: { worker: 12.5, 'kube-apiserver': 7 } },
    },
    {
      name: 'seconds to the tick, so that sums over processes stay exact',
      from: snapshot(0, 0, 100, { 'temporal-history': 1, 'temporal-postgres': 2 }),
      to: snapshot(1_000, 50, 200, { 'temporal-history': 124, 'temporal-postgres': 9 }),
      want: { seconds: 1, machineBusyPercent: 50, cpuSeconds: { 'temporal-history': 1.23, 'temporal-postgres': 0.07 } },
    },
    {
      name: 'a process gone (or never started) is left out',
      from: snapshot(0, 0, 100, { worker: 10, trigger: undefined, kwok: 5 }),
      to: snapshot(2_500, 50, 300, { worker: 30, trigger: 7, kwok: undefined }),
      want: { seconds: 2.5, machineBusyPercent: 25, cpuSeconds: { worker: 0.2 } },
    },
    {
      name: 'no time passed: nothing busy',
      from: snapshot(0, 10, 100, {}),
      to: snapshot(0, 10, 100, {}),
      want: { seconds: 0, machineBusyPercent: 0, cpuSeconds: {} },
    },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(loadBetween(c.from, c.to), c.want));
  }

  it('reads this machine and this process from /proc', () => {
    const before = cpuSnapshot({ self: process.pid, gone: 2 ** 22 + 1 });
    const until = Date.now() + 50;
    while (Date.now() < until); // burn a little CPU
    const load = loadBetween(before, cpuSnapshot({ self: process.pid, gone: 2 ** 22 + 1 }));
    assert.ok(load.seconds >= 0.05);
    assert.ok(load.machineBusyPercent > 0 && load.machineBusyPercent <= 100);
    assert.ok(load.cpuSeconds.self !== undefined && load.cpuSeconds.self >= 0);
    assert.equal(load.cpuSeconds.gone, undefined);
  });
});

/** A /proc/<pid>/stat line: the fields up to cstime, the rest left out. */
const statLine = (pid: number, comm: string, ppid: number, [utime, stime, cutime, cstime]: number[]) =>
  `${pid} (${comm}) S ${ppid} ${pid} ${pid} 0 -1 4194560 100 0 0 0 ${utime} ${stime} ${cutime} ${cstime} 20 0 1 0\n`;

describe('bench CPU of a process tree', () => {
  it('reads ppid and ticks after a command name with spaces and parentheses', () => {
    assert.deepEqual(parseStat(42, statLine(42, 'postgres: temporal (idle)', 7, [5, 3, 11, 2])), {
      pid: 42,
      ppid: 7,
      ticks: 8,
      childTicks: 13,
    });
  });

  // runuser -> postmaster -> backends, as the cluster runs PostgreSQL as root; and a process outside the tree.
  const table = new Map<number, ProcStat>(
    (
      [
        [10, 1, 1, 0],
        [11, 10, 20, 5],
        [12, 11, 3, 0],
        [13, 11, 4, 1],
        [20, 1, 100, 100],
      ] as const
    ).map(([pid, ppid, ticks, childTicks]) => [pid, { pid, ppid, ticks, childTicks }]),
  );
  const cases: [what: string, pid: number, want: number | undefined][] = [
    ["the root, its children and theirs, each with its reaped children's ticks", 10, 1 + 25 + 3 + 5],
    ['a subtree alone', 11, 25 + 3 + 5],
    ['a leaf: its own ticks', 12, 3],
    ['a process gone: undefined', 99, undefined],
  ];
  for (const [what, pid, want] of cases) it(what, () => assert.equal(treeTicks(table, pid), want));

  it('reads a /proc of numbered folders, skipping others and stat files that went away', () => {
    const root = mkdtempSync(join(tmpdir(), 'fake-proc-'));
    try {
      const add = (name: string, stat?: string) => {
        mkdirSync(join(root, name));
        if (stat !== undefined) writeFileSync(join(root, name, 'stat'), stat);
      };
      add('1', statLine(1, 'init', 0, [1, 1, 0, 0]));
      add('5', statLine(5, 'postgres', 1, [2, 2, 10, 0]));
      add('6', statLine(6, 'postgres: walwriter', 5, [1, 0, 0, 0]));
      add('7'); // exited between the listing and the read
      add('self', statLine(6, 'postgres: walwriter', 5, [1, 0, 0, 0]));
      assert.deepEqual([...readProcTable(root).keys()].sort(), [1, 5, 6]);
      assert.equal(processTreeTicks(5, root), 15);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("counts a child of this process while it runs and, once reaped, through this process's children's times", async () => {
    // Busy for 300 ms of its own CPU time, however loaded the machine is.
    const child = spawn(process.execPath, [
      '-e',
      'for (;;) { const c = process.cpuUsage(); if (c.user + c.system > 300000) break; }',
    ]);
    const exited = once(child, 'exit');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const running = readProcTable();
    assert.equal(running.get(child.pid!)?.ppid, process.pid, 'the child is still busy, under this process');
    assert.ok(treeTicks(running, process.pid)! >= running.get(process.pid)!.ticks + running.get(child.pid!)!.ticks);
    await exited;
    const own = processTicks(process.pid)!;
    const tree = processTreeTicks(process.pid)!;
    assert.ok(tree - own >= 25, `the child's CPU: ${tree - own} ticks`);
    const snap = cpuSnapshot({ tree: process.pid, own: process.pid }, (name) => name === 'tree');
    assert.ok(snap.byProcess.tree! - snap.byProcess.own! >= 25);
  });
});
