// Where a controller's threads spend their time while the bench measures something: V8 CPU profiles of the worker's
// and the trigger's threads (`npm run bench -- --cpu-profile <dir>`) cut to the bench's windows (each provisioning from
// nothing, each round), then summed by area (this project, the Temporal SDK, the Kubernetes client, GC) and by
// function. V8 samples on a wall clock: on a saturated machine a thread's time preempted or blocked in a native call
// counts too, so /proc (cpu-load.ts) stays the measure of CPU. Pure: the files and source maps are
// scripts/cpu-profile.ts's.

/** The parts of a `.cpuprofile` (Chrome DevTools' format, as `node --cpu-prof` writes it) that the summary reads. */
export interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[];
  /** Microseconds of the monotonic clock (process.hrtime), as are the windows. */
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface CallFrame {
  functionName: string;
  url: string;
  /** 0-based, as V8 reports them. */
  lineNumber: number;
  columnNumber: number;
}

/** A span the bench measured, in microseconds of the monotonic clock that the profiles use. */
export interface ProfileWindow {
  label: string;
  fromUs: number;
  toUs: number;
}

/** The monotonic clock of the profiles' timestamps, in microseconds. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** Where a frame of a bundle came from: its original file (relative to the repository) and line, when a map says. */
export type SourceResolver = (frame: CallFrame) => { file: string; line: number } | undefined;

export interface CpuSummary {
  /** The thread's sampled time inside the windows, its idle event loop left out (wall time, see above). */
  busyMs: number;
  /** How many of the windows the profile spans. */
  windows: number;
  byArea: [string, number][];
  /** Time spent in the function itself. */
  self: [string, number][];
  /** Time with the function on the stack (each function once per sample, however deep it recurs). */
  inclusive: [string, number][];
}

const IDLE = '(idle)';

/** The area a frame's time is put in: one line each in the summary. */
export function areaOf(frame: CallFrame, resolved?: { file: string }): string {
  const { functionName, url } = frame;
  if (functionName === '(garbage collector)') return 'garbage collection';
  if (functionName === '(program)' || functionName === '(root)') return 'V8 and native code';
  if (resolved && !resolved.file.includes('node_modules/')) return 'this project';
  const where = resolved?.file ?? url;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where)?.[1];
  if (pkg?.startsWith('@temporalio/'))
    return pkg === '@temporalio/core-bridge' ? 'Temporal core (Rust)' : 'Temporal SDK';
  if (pkg === '@kubernetes/client-node') return 'Kubernetes client';
  if (pkg === 'rxjs') return 'Temporal SDK'; // the worker's task pipeline is built on it
  if (pkg !== undefined) return pkg;
  if (url.startsWith('node:')) return 'Node.js';
  if (url.includes('workflow-bundle')) return 'workflow bundle (this project and the SDK)';
  if (url === '') return 'V8 and native code';
  return url.includes('/dist/') || url.includes('/src/') ? 'this project' : url;
}

function frameName(frame: CallFrame, resolved?: { file: string; line: number }): string {
  const fn = frame.functionName || '(anonymous)';
  if (resolved) return `${fn} ${resolved.file}:${resolved.line}`;
  if (!frame.url) return fn;
  const short = frame.url.replace(/^file:\/\//, '').replace(/.*node_modules\//, '');
  return `${fn} ${short}:${frame.lineNumber + 1}`;
}

/** The profile's CPU inside the windows (all of it without windows), by area and function, largest first. */
export function summarizeProfile(
  profile: CpuProfile,
  windows: ProfileWindow[] | undefined,
  resolve: SourceResolver = () => undefined,
  top = 20,
): CpuSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n.id);
  const inside = (t: number) => windows === undefined || windows.some((w) => t >= w.fromUs && t <= w.toUs);

  // Time per node first (a sample's delta is the time up to it), then per name: far fewer nodes than samples.
  const perNode = new Map<number, number>();
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    if (!inside(t)) continue;
    const id = profile.samples[i]!;
    perNode.set(id, (perNode.get(id) ?? 0) + dt);
  }
  const names = new Map<number, { name: string; area: string }>();
  const described = (id: number) => {
    let d = names.get(id);
    if (!d) {
      const frame = byId.get(id)!.callFrame;
      const resolved = resolve(frame);
      d = { name: frameName(frame, resolved), area: areaOf(frame, resolved) };
      names.set(id, d);
    }
    return d;
  };
  const area = new Map<string, number>();
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, us: number) => m.set(k, (m.get(k) ?? 0) + us);
  let busy = 0;
  for (const [id, us] of perNode) {
    if (byId.get(id)!.callFrame.functionName === IDLE) continue;
    busy += us;
    const d = described(id);
    add(area, d.area, us);
    add(self, d.name, us);
    const onStack = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parentOf.get(cur)) {
      const { name } = described(cur);
      if (!onStack.has(name)) add(inclusive, name, us);
      onStack.add(name);
    }
  }
  const ms = (m: Map<string, number>, n: number): [string, number][] =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => [k, Math.round(us / 100) / 10]);
  const spanned = windows?.filter((w) => w.toUs >= profile.startTime && w.fromUs <= profile.endTime).length;
  return {
    busyMs: Math.round(busy / 100) / 10,
    windows: spanned ?? 1,
    byArea: ms(area, Infinity),
    self: ms(self, top),
    inclusive: ms(inclusive, top).filter(([k]) => !k.startsWith('(root)')),
  };
}

/** A Markdown section per profile: busy time per window, areas, then the top functions. */
export function formatSummary(title: string, s: CpuSummary): string {
  const per = s.windows > 1 ? ` (${(s.busyMs / s.windows).toFixed(0)} ms per window)` : '';
  const rows = (pairs: [string, number][]) => pairs.map(([k, v]) => `| ${v.toFixed(1)} | ${k.replace(/\|/g, '\\|')} |`);
  return [
    `### ${title}: ${s.busyMs.toFixed(0)} ms busy in ${s.windows} window(s)${per}`,
    '',
    '| ms | area |',
    '| ---: | --- |',
    ...rows(s.byArea),
    '',
    '| ms self | function |',
    '| ---: | --- |',
    ...rows(s.self),
    '',
    '| ms inclusive | function |',
    '| ---: | --- |',
    ...rows(s.inclusive),
    '',
  ].join('\n');
}
