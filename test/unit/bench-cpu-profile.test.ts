import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import {
  areaOf,
  formatSummary,
  summarizeProfile,
  type CallFrame,
  type CpuProfile,
} from '../../tools/bench/cpu-profile.js';

const frame = (functionName: string, url = '', lineNumber = 0): CallFrame => ({
  functionName,
  url,
  lineNumber,
  columnNumber: 0,
});
const app = 'file:///repo/dist/worker/main.js';

// (root) -> kubeCall -> JSON.parse; (root) -> handleActivation -> kubeCall -> kubeCall (recursing);
// (root) -> (garbage collector); (root) -> (idle).
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 4, 6, 7] },
    { id: 2, callFrame: frame('kubeCall', app, 60), children: [3] },
    { id: 3, callFrame: frame('parse') },
    {
      id: 4,
      callFrame: frame('handleActivation', 'file:///repo/node_modules/@temporalio/worker/lib/worker.js', 9),
      children: [5],
    },
    { id: 5, callFrame: frame('kubeCall', app, 60), children: [8] },
    { id: 8, callFrame: frame('kubeCall', app, 60) },
    { id: 6, callFrame: frame('(garbage collector)') },
    { id: 7, callFrame: frame('(idle)') },
  ],
  startTime: 1_000,
  endTime: 2_000,
  // At 1100 (parse under kubeCall), 1200 (handleActivation's kubeCall), 1500 (gc), 1900 (idle), 2000 (parse again).
  samples: [3, 8, 6, 7, 3],
  timeDeltas: [100, 100, 300, 400, 100],
};
// Maps the bundle's line 61 to its source, as scripts/cpu-profile.ts does with the source map.
const resolve = (f: CallFrame) => (f.url === app ? { file: 'src/kube/kube-json.ts', line: 61 } : undefined);

describe('bench: CPU profiles cut to the windows the bench measured', () => {
  const cases: [string, Parameters<typeof summarizeProfile>[1], number, [string, number][]][] = [
    [
      'no windows: the whole profile but idle',
      undefined,
      600,
      [
        ['this project', 100],
        ['garbage collection', 300],
        ['V8 and native code', 200],
      ],
    ],
    [
      'one window over the first two samples',
      [{ label: 'a', fromUs: 1_050, toUs: 1_250 }],
      200,
      [
        ['this project', 100],
        ['V8 and native code', 100],
      ],
    ],
    [
      'two windows; time outside both is left out',
      [
        { label: 'a', fromUs: 1_000, toUs: 1_150 },
        { label: 'b', fromUs: 1_400, toUs: 1_600 },
      ],
      400,
      [
        ['garbage collection', 300],
        ['V8 and native code', 100],
      ],
    ],
  ];
  for (const [name, windows, busyMs, areas] of cases) {
    it(name, () => {
      // Microseconds in, milliseconds out: scale the expectations.
      const s = summarizeProfile(profile, windows, resolve);
      assert.equal(s.busyMs, busyMs / 1000);
      assert.deepEqual(Object.fromEntries(s.byArea), Object.fromEntries(areas.map(([k, v]) => [k, v / 1000])));
    });
  }

  it('names bundle frames by their source, counts a function once per sample in its inclusive time', () => {
    const s = summarizeProfile(profile, undefined, resolve);
    const inclusive = Object.fromEntries(s.inclusive);
    assert.equal(inclusive['kubeCall src/kube/kube-json.ts:61'], 0.3, 'three samples under it, the recursion once');
    assert.equal(inclusive['handleActivation @temporalio/worker/lib/worker.js:10'], 0.1);
    assert.ok(!Object.keys(inclusive).some((k) => k.startsWith('(root)')), 'the root is not a function');
    assert.deepEqual(Object.fromEntries(s.self), {
      '(garbage collector)': 0.3,
      parse: 0.2,
      'kubeCall src/kube/kube-json.ts:61': 0.1,
    });
  });

  it('counts only the windows the profile spans', () => {
    const s = summarizeProfile(profile, [
      { label: 'before it started', fromUs: 0, toUs: 500 },
      { label: 'in it', fromUs: 1_000, toUs: 1_300 },
    ]);
    assert.equal(s.windows, 1);
    assert.match(formatSummary('worker, main thread', s), /^### worker, main thread: 0 ms busy in 1 window\(s\)/);
  });

  const areas: [string, CallFrame, string][] = [
    [
      'the Temporal core',
      frame('x', 'file:///r/node_modules/@temporalio/core-bridge/index.js'),
      'Temporal core (Rust)',
    ],
    ['the SDK', frame('x', 'file:///r/node_modules/@temporalio/worker/lib/worker.js'), 'Temporal SDK'],
    ["the SDK's task pipeline", frame('x', 'file:///r/node_modules/rxjs/dist/cjs/x.js'), 'Temporal SDK'],
    [
      'the Kubernetes client',
      frame('x', 'file:///r/node_modules/@kubernetes/client-node/dist/watch.js'),
      'Kubernetes client',
    ],
    ['another package', frame('x', 'file:///r/node_modules/prom-client/lib/histogram.js'), 'prom-client'],
    ['Node itself', frame('emit', 'node:events'), 'Node.js'],
    [
      'the workflow bundle',
      frame('x', 'file:///r/dist/workflow-bundle.js'),
      'workflow bundle (this project and the SDK)',
    ],
    ['native', frame('postMessage'), 'V8 and native code'],
  ];
  for (const [name, f, area] of areas) it(`puts ${name} in "${area}"`, () => assert.equal(areaOf(f), area));
});
