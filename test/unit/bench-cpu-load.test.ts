import assert from 'node:assert/strict';
import { cpuSnapshot, loadBetween, type CpuSnapshot } from '../../src/bench/cpu-load.js';

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
