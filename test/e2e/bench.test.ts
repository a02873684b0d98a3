import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProfileWindow } from '../../tools/bench/cpu-profile.js';
import { scaleScenarios, scenarios } from '../../tools/bench/run.js';
import { temporalCpuSeconds, type BenchResult } from '../../tools/bench/results.js';
import { repoRoot } from '../../tools/stack/paths.js';
import { versions } from '../../tools/stack/versions.js';
import { ensureCluster } from '../fixtures/cluster.js';

describe('npm run bench -- --quick', function () {
  this.timeout(600_000);

  const actionsOf = (counts: Record<string, number> | undefined) =>
    Object.values(counts ?? {}).reduce((a, b) => a + b, 0);

  /** Runs `npm run bench -- --quick --grace 2 <args>` into a fresh directory; its output and that directory. */
  async function quickBench(...args: string[]): Promise<{ text: string; out: string; result: BenchResult }> {
    await ensureCluster();
    const out = mkdtempSync(join(tmpdir(), 'lws-bench-'));
    const bench = join(repoRoot, 'scripts', 'bench.ts');
    const { code, text } = await new Promise<{ code: number | null; text: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', bench, '--quick', '--grace', '2', '--out', out, ...args],
        { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.stderr.on('data', (d: Buffer) => (text += d.toString()));
      child.on('exit', (c) => resolve({ code: c, text }));
    });
    assert.equal(code, 0, text);
    return { text, out, result: JSON.parse(readFileSync(join(out, 'benchmarks.json'), 'utf8')) as BenchResult };
  }

  /**
   * Every quick scenario and the smallest scale one, for this project and then for upstream: one run that the first
   * and the last test read, each for its own checks.
   */
  let everyScenario: ReturnType<typeof quickBench> | undefined;
  const everyScenarioAgainstUpstream = () =>
    (everyScenario ??= quickBench(
      '--against',
      'upstream',
      '--only',
      [...scenarios(true).map((s) => s.id), 'scale-4'].join(','),
    ));

  it('measures every scenario for both policies and writes JSON, Markdown and the chart', async () => {
    const { text, out, result } = await everyScenarioAgainstUpstream();
    assert.match(text, /\[1\/\d+\] one group rebuilt/, 'progress is shown');
    assert.equal(result.quick, true);
    const ours = result.scenarios.filter((s) => s.controller === undefined);
    for (const scenario of scenarios(true)) {
      for (const policy of ['Sequential', 'Parallel']) {
        const r = ours.find((s) => s.id === scenario.id && s.policy === policy);
        assert.ok(r, `no ${policy} result for ${scenario.id}`);
        assert.equal(r.samples.length, scenario.groups * scenario.rounds, `${scenario.id} ${policy} samples`);
        assert.ok(r.teardownP50Ms > 0 && r.teardownP95Ms >= r.teardownP50Ms);
        // The dev server's action counter, read around each policy's provisioning and rounds apart.
        assert.ok(actionsOf(r.provisionActions) > 0, `${scenario.id} ${policy}: provisioning Actions`);
        assert.ok(actionsOf(r.actions) >= r.samples.length, `${scenario.id} ${policy}: rounds' Actions`);
        // At least one trigger start per group (its provisioning), attributed to this scenario's LWS.
        assert.ok(r.reactionsMs.length >= scenario.groups, `${scenario.id} ${policy}: ${r.reactionsMs.length} starts`);
        if (scenario.kind === 'rebuild') {
          assert.ok((r.recoveryP50Ms ?? 0) >= r.teardownP50Ms * 0.5);
          // Each group rebuilt exactly once: one deleted leader, one new leader, no recreation storm.
          assert.deepEqual(
            r.samples.map((s) => s.newLeaders),
            r.samples.map(() => 1),
            `${scenario.id} ${policy}: new leader pods per group`,
          );
          // Each group's leader delete was answered, after its round started and before its old group was gone.
          for (const x of r.samples) {
            assert.ok(x.leaderDeletedMs !== undefined && x.leaderDeletedMs >= 0, `${scenario.id}: delete answered`);
            assert.ok(x.leaderDeletedMs <= x.teardownMs, `${scenario.id}: delete answered after the group was gone`);
          }
        } else if (scenario.kind === 'rolling-update') {
          // Every group rolled once onto the new template, within maxUnavailable, surge groups gone at the end.
          const limits = scenario.rollingUpdate!;
          assert.equal(r.rollout?.maxUnavailable, limits.maxUnavailable);
          assert.equal(r.rollout?.rounds.length, scenario.rounds, `${scenario.id} ${policy}: rollout rounds`);
          for (const round of r.rollout.rounds) {
            assert.ok(
              round.fewestReadyGroups >= scenario.groups - limits.maxUnavailable,
              `${scenario.id} ${policy}: ${round.fewestReadyGroups} groups Ready at the fewest`,
            );
          }
          assert.deepEqual(
            r.samples.map((s) => s.newLeaders),
            r.samples.map(() => 1),
            `${scenario.id} ${policy}: new leader pods per group`,
          );
          for (const x of r.samples) {
            assert.ok(x.updateToLeaderDeletionMs !== undefined && x.updateToLeaderDeletionMs >= 0, scenario.id);
            assert.ok(x.recoveryMs! >= x.teardownMs, `${scenario.id}: Ready before the old group was gone`);
            assert.ok(
              r.rollout.rounds[0]!.durationMs >= x.updateToLeaderDeletionMs + x.recoveryMs!,
              `${scenario.id}: the rollout ended before a group was Ready`,
            );
          }
          // At most maxUnavailable + maxSurge groups in flight (one with the defaults, or with a surge group and none
          // down): a leader goes only once a group before it is back, at least a grace period after that one went.
          const inFlight = Math.max(1, limits.maxUnavailable + limits.maxSurge);
          const deletions = r.samples.map((x) => x.updateToLeaderDeletionMs!).sort((a, b) => a - b);
          for (let i = inFlight; i < deletions.length; i++) {
            assert.ok(
              deletions[i]! - deletions[i - inFlight]! >= result.graceSeconds * 1000,
              `${scenario.id}: more than ${inFlight} groups in flight: ${deletions}`,
            );
          }
          if (inFlight > 1) {
            // And the first ones go together: a wide rollout does not step one group at a time.
            assert.ok(
              deletions[inFlight - 1]! - deletions[0]! < result.graceSeconds * 1000,
              `${scenario.id}: the first ${inFlight} groups did not go together: ${deletions}`,
            );
          }
        } else {
          assert.ok(
            r.samples.every((x) => x.leaderDeletedMs === undefined),
            `${scenario.id}: no leader is deleted one by one`,
          );
        }
      }
    }
    // Each round rebuilds one policy's groups alone: the other policy's round of that scenario starts only once
    // this one's groups are back (gone, for scale-down and LWS deletion).
    assert.equal(result.together, false);
    for (const scenario of scenarios(true)) {
      const spans = ours
        .filter((s) => s.id === scenario.id)
        .flatMap((s) =>
          s.samples.map((x) => ({
            policy: s.policy,
            from: x.roundStartedAt,
            to: x.roundStartedAt + (x.updateToLeaderDeletionMs ?? 0) + (x.recoveryMs ?? x.teardownMs),
          })),
        );
      assert.equal(
        new Set(spans.map((x) => x.from)).size,
        2 * scenario.rounds,
        `${scenario.id}: one start per round and policy`,
      );
      for (const a of spans.filter((x) => x.policy === 'Parallel')) {
        for (const b of spans.filter((x) => x.policy === 'Sequential')) {
          assert.ok(a.to <= b.from || b.to <= a.from, `${scenario.id}: a Parallel and a Sequential round overlapped`);
        }
      }
    }
    assert.ok(result.trigger.reactions > 0);
    assert.equal(result.trigger.eagerStarts, 0, 'two processes: no eager workflow start');
    const floor = result.temporalStartFloor;
    assert.equal(floor.burst, 2 * Math.max(...scenarios(true).map((s) => s.groups)), 'burst = the largest scenario');
    assert.ok(floor.singleP50Ms > 0 && floor.burstP99Ms >= floor.burstP50Ms && floor.burstP50Ms > 0);
    assert.ok(
      floor.burstServerCpuMs !== undefined && floor.burstServerCpuMs >= 0,
      "the server's CPU over the burst, from its pid",
    );
    assert.match(
      readFileSync(join(out, 'benchmarks.md'), 'utf8'),
      /The server used \d+ ms of CPU to answer that burst/,
    );
    for (const scenario of scenarios(true)) {
      const load = result.load[scenario.id];
      assert.ok(load, `no CPU load for ${scenario.id}`);
      assert.ok(load.seconds > 0 && load.machineBusyPercent > 0 && load.machineBusyPercent <= 100, scenario.id);
      for (const process of ['kube-apiserver', 'etcd', 'temporal', 'worker', 'trigger', 'bench']) {
        assert.ok(load.cpuSeconds[process] !== undefined, `${scenario.id}: no CPU time for ${process}`);
      }
      assert.ok(load.cpuSeconds['kube-apiserver']! > 0 && load.cpuSeconds.worker! > 0, scenario.id);
    }
    assert.match(readFileSync(join(out, 'benchmarks.md'), 'utf8'), /\| scenario \| wall time \| machine busy/);
    assert.match(readFileSync(join(out, 'benchmarks.md'), 'utf8'), /\| last leader delete answered \|/);
    assert.equal(result.oneProcess, false);
    assert.deepEqual(Object.keys(result.processes).sort(), ['trigger', 'worker']);
    assert.ok(result.processes.worker!.peakRssMb > 0 && result.processes.trigger!.cpuSeconds > 0);
    assert.ok(existsSync(join(out, 'bench-timeline.svg')));
    assert.match(readFileSync(join(out, 'benchmarks.md'), 'utf8'), /\| one group rebuilt \| 1 x 4 \|/);
  });

  it('--one-process measures worker and trigger in one process, the entry npm start runs; --together rebuilds both policies at once; --cpu-profile profiles it', async () => {
    // A folder that does not exist yet: the bench makes it.
    const profiles = join(mkdtempSync(join(tmpdir(), 'lws-cpu-profile-')), 'profiles');
    const { out, result } = await quickBench(
      '--one-process',
      '--together',
      '--only',
      'rebuild-1',
      '--cpu-profile',
      profiles,
    );
    assert.equal(result.oneProcess, true);
    assert.equal(result.together, true);
    // One process shares the worker's connection with the trigger: its starts ask for, and get, eager start.
    assert.ok((result.trigger.eagerStarts ?? 0) > 0, 'no eager workflow start in one process');
    assert.match(readFileSync(join(out, 'benchmarks.md'), 'utf8'), /\d+ of the starts were eager/);
    assert.match(result.command, /--together/);
    const startsOf = (policy: string) =>
      result.scenarios.find((x) => x.id === 'rebuild-1' && x.policy === policy)!.samples.map((x) => x.roundStartedAt);
    assert.deepEqual(startsOf('Sequential'), startsOf('Parallel'), 'both policies deleted in the same moment');
    assert.match(result.command, /--one-process/);
    assert.deepEqual(Object.keys(result.processes), ['worker+trigger']);
    assert.ok(result.processes['worker+trigger']!.peakRssMb > 0);
    assert.ok(result.load['rebuild-1']!.cpuSeconds['worker+trigger']! > 0, 'CPU of the one process');
    for (const policy of ['Sequential', 'Parallel']) {
      const r = result.scenarios.find((x) => x.id === 'rebuild-1' && x.policy === policy);
      assert.deepEqual(
        r?.samples.map((x) => x.newLeaders),
        [1],
        `${policy}: the round rebuilt the group once`,
      );
      assert.ok(r!.reactionsMs.length > 0, `${policy}: the trigger's starts are read from the one process's log`);
      assert.ok(actionsOf(r!.provisionActions) > 0, `${policy}: provisioning Actions`);
      assert.equal(r!.actions, undefined, `${policy}: rounds of both policies at once are neither's Actions`);
    }
    assert.match(readFileSync(join(out, 'benchmarks.md'), 'utf8'), /ran in one process \(`node dist\/main\.js`/);

    // The windows of what was measured, and a profile per thread of the process, written as it stopped.
    const windows = JSON.parse(readFileSync(join(profiles, 'windows.json'), 'utf8')) as ProfileWindow[];
    assert.deepEqual(
      windows.map((w) => w.label),
      ['rebuild-1 provisioning Sequential', 'rebuild-1 provisioning Parallel', 'rebuild-1 round 1 Sequential+Parallel'],
    );
    for (const w of windows) assert.ok(w.toUs > w.fromUs, `${w.label}: a span of the monotonic clock`);
    const threads = readdirSync(join(profiles, 'main')).filter((f) => f.endsWith('.cpuprofile'));
    assert.ok(threads.length >= 2, `the main thread and the workflow thread: ${threads.join(', ')}`);
    const summary = await new Promise<{ code: number | null; text: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', join(repoRoot, 'scripts', 'cpu-profile.ts'), profiles, '--window', 'provisioning'],
        { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.stderr.on('data', (d: Buffer) => (text += d.toString()));
      child.on('exit', (c) => resolve({ code: c, text }));
    });
    assert.equal(summary.code, 0, summary.text);
    const busy = /### main, main thread \(.*\): (\d+) ms busy in 2 window\(s\)/.exec(summary.text);
    assert.ok(busy && Number(busy[1]) > 0, `the main thread worked while both LWSs were provisioned:\n${summary.text}`);
    assert.match(summary.text, /\| [\d.]+ \| this project \|/, 'frames of dist/ named as this project');
  });

  it('--temporal cluster measures the same round on the production-shaped Temporal, its CPU over all of its processes', async () => {
    const { out, result } = await quickBench('--temporal', 'cluster', '--only', 'rebuild-1');
    assert.equal(result.temporal?.target, 'cluster');
    assert.match(result.command, / --temporal cluster/);
    assert.match(result.temporal.database, /^PostgreSQL \d+/);
    for (const policy of ['Sequential', 'Parallel']) {
      const r = result.scenarios.find((x) => x.id === 'rebuild-1' && x.policy === policy);
      assert.deepEqual(
        r?.samples.map((x) => x.newLeaders),
        [1],
        `${policy}: the round rebuilt the group once`,
      );
      assert.ok(r!.teardownP50Ms > 0 && r!.recoveryP50Ms! >= r!.teardownP50Ms, policy);
      assert.ok(r!.reactionsMs.length > 0, `${policy}: the trigger started workflows on the cluster`);
      // The cluster's four services' action counters, summed.
      assert.ok(actionsOf(r!.actions) > 0 && actionsOf(r!.provisionActions) > 0, `${policy}: Actions on the cluster`);
    }
    assert.match(
      readFileSync(join(out, 'benchmarks.md'), 'utf8'),
      /\| one group rebuilt \| [\d.]+ \/ [\d.]+ \| [\d.]+ \/ [\d.]+ \|/,
    );
    // Every process of the cluster measured, PostgreSQL with the backends it forks (its own process does little).
    const names = ['history', 'matching', 'frontend', 'worker', 'ui', 'postgres'].map((n) => `temporal-${n}`);
    assert.deepEqual([...result.temporal.processes].sort(), [...names].sort());
    const load = result.load['rebuild-1']!;
    for (const name of names) assert.ok(load.cpuSeconds[name] !== undefined, `no CPU time for ${name}`);
    assert.ok(load.cpuSeconds['temporal-postgres']! > 0, "PostgreSQL's backends counted");
    assert.ok(load.cpuSeconds['temporal-history']! > 0);
    assert.equal(load.cpuSeconds.temporal, undefined, 'no dev server');
    assert.ok(temporalCpuSeconds(load)! > 0);
    // Measured over the cluster's processes; --quick's burst of 2 starts can take less than one 10 ms tick of /proc.
    const burstCpu = result.temporalStartFloor.burstServerCpuMs;
    assert.ok(burstCpu !== undefined && burstCpu >= 0, "the cluster's CPU over the burst");
    const md = readFileSync(join(out, 'benchmarks.md'), 'utf8');
    assert.match(md, /Temporal server \S+ as a cluster/);
    assert.match(md, /\| one group rebuilt \| [\d.]+ s \| \d+ % \|.*\| [\d.]+ s \|\n/);
    assert.match(md, /Temporal's processes, each with its descendants/);
  });

  it('--against upstream measures the same scenarios with upstream LeaderWorkerSet, one controller at a time', async () => {
    const { text, out, result } = await everyScenarioAgainstUpstream();
    assert.match(result.command, / --against upstream/);
    const count = scenarios(true).length + 1;
    assert.match(text, new RegExp(`\\[upstream 1/${count}\\] one group rebuilt`), "upstream's progress is shown");
    for (const scenario of scenarios(true)) {
      const rows = result.scenarios.filter((x) => x.id === scenario.id);
      assert.deepEqual(
        rows.map((x) => `${x.controller ?? 'lws-temporal'} ${x.policy}`).sort(),
        ['lws-temporal Parallel', 'lws-temporal Sequential', 'upstream Sequential'],
        `${scenario.id}: every contender's row`,
      );
      for (const r of rows) {
        const who = `${scenario.id} ${r.controller ?? r.policy}`;
        assert.equal(r.samples.length, scenario.groups * scenario.rounds, `${who}: samples`);
        assert.ok(r.teardownP50Ms >= result.graceSeconds * 1000 * 0.9, `${who}: a teardown takes the grace period`);
        assert.ok((r.provisionMs ?? 0) > 0, `${who}: provisioned from nothing`);
        const phases = r.provisionPhases;
        assert.ok(phases, `${who}: where the provisioning spent its time`);
        assert.ok(phases.workersAfterLeaderMs.p50 > 0, `${who}: the workers come after their leader`);
        assert.ok(phases.leaderSeenMs.max < r.provisionMs!, `${who}: the leaders are seen within the provisioning`);
        const cpu = r.provisionLoad?.cpuSeconds;
        assert.ok(cpu?.['kube-apiserver'] !== undefined, `${who}: the CPU while it was provisioned`);
        assert.ok(
          cpu[r.controller === 'upstream' ? 'lws-upstream' : 'worker'] !== undefined,
          `${who}: its controller's`,
        );
        const creates = r.provisionPodCreates?.count ?? 0;
        assert.ok(creates >= r.groups * r.size, `${who}: the API server timed its ${r.groups * r.size} pod creates`);
        if (scenario.kind === 'rebuild' || scenario.kind === 'rolling-update') {
          assert.deepEqual(
            r.samples.map((x) => x.newLeaders),
            r.samples.map(() => 1),
            `${who}: each group rebuilt once`,
          );
          assert.ok(r.recoveryP50Ms! >= r.teardownP50Ms * 0.5, who);
        }
      }
      const upstream = rows.find((x) => x.controller === 'upstream')!;
      assert.deepEqual(upstream.reactionsMs, [], 'upstream has no trigger');
      assert.equal(upstream.actions, undefined, 'upstream uses no Temporal');
      const load = result.upstream?.load[scenario.id];
      assert.ok((load?.cpuSeconds['lws-upstream'] ?? 0) > 0, `${scenario.id}: upstream's CPU measured`);
      assert.equal(load?.cpuSeconds.worker, undefined, `${scenario.id}: this project's worker had stopped`);
    }
    // Upstream behaves as Sequential: its workers terminate only once the leader is gone.
    const up = result.scenarios.find((x) => x.id === 'rebuild-1' && x.controller === 'upstream')!;
    assert.ok(up.samples[0]!.workersTerminatingMs >= up.samples[0]!.leaderGoneMs, 'upstream: workers after leader');
    assert.ok(result.upstream!.process.peakRssMb > 0 && result.upstream!.process.cpuSeconds > 0);
    assert.equal(result.upstream!.version, versions.lwsUpstream);
    const md = readFileSync(join(out, 'benchmarks.md'), 'utf8');
    assert.match(md, /## Against upstream LeaderWorkerSet/);
    assert.match(md, /\| one group rebuilt \| 1 x 4 \| [\d.]+ s \/ [\d.]+ s \|/);
    assert.match(md, /Peak RSS over the whole run: upstream's controller \d+ MB/);

    // The scale scenario (4 groups standing, one rebuilt per round): Parallel and upstream, what each costs.
    const scale = scaleScenarios(true).find((x) => x.id === 'scale-4')!;
    const rows = result.scenarios.filter((x) => x.id === 'scale-4');
    assert.deepEqual(rows.map((x) => `${x.controller ?? 'lws-temporal'} ${x.policy}`).sort(), [
      'lws-temporal Parallel',
      'upstream Sequential',
    ]);
    for (const r of rows) {
      const who = `scale-4 ${r.controller ?? r.policy}`;
      assert.deepEqual(
        r.samples.map((x) => x.rebuiltAtOnce),
        scale.rebuiltPerRound,
        `${who}: one sample per group rebuilt`,
      );
      assert.deepEqual(
        r.samples.map((x) => x.newLeaders),
        [1, 1, 1, 1],
        `${who}: each group rebuilt once`,
      );
      const f = r.scale!;
      assert.ok(f, `${who}: scale figures`);
      assert.ok(
        Object.values(f.residentMb).every((mb) => mb > 0),
        `${who}: RSS ${JSON.stringify(f.residentMb)}`,
      );
      // Every controller writes to provision 4 groups (StatefulSets, or our workflows' Events and status) and to
      // rebuild them.
      assert.ok(f.apiRequests.provisioning > 0 && f.apiRequests.rounds > 0, `${who}: ${JSON.stringify(f.apiRequests)}`);
    }
    const ours = rows.find((x) => !x.controller)!.scale!;
    assert.deepEqual(Object.keys(ours.residentMb).sort(), ['trigger', 'worker']);
    assert.equal(ours.historyBytes?.provision?.runs, 4 + 4, 'one provisioning per group, and per group rebuilt');
    assert.ok((ours.historyBytes?.teardown?.runs ?? 0) >= 4, 'one teardown per group rebuilt');
    assert.ok(ours.historyBytes!.provision!.bytes > 1000, 'a provisioning history has its events');
    const provisionTasks = ours.workflowTasks?.provision;
    assert.equal(provisionTasks?.runs, 4 + 4, 'the workflow tasks of every provisioning counted');
    assert.ok(
      provisionTasks.completed >= provisionTasks.runs,
      `every provisioning completed a task: ${JSON.stringify(provisionTasks)}`,
    );
    assert.deepEqual(Object.keys(rows.find((x) => x.controller)!.scale!.residentMb), ['lws-upstream']);
    assert.match(md, /## How the cost grows with the groups standing/);
    assert.match(md, /\| 4 x 4 \| upstream \| lws-upstream \d+ = \d+ MB \|/);
  });
});
