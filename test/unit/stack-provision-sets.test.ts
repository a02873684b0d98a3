// What each entry point provisions (tools/stack/provision.ts's sets) against what the code it runs starts, read from
// that code: a set that misses a binary would fail at the start on a cold cache, and one with a binary too many builds
// it for nothing (`npm run demo` cold built the Temporal server, the floor's Kubernetes, upstream LWS and Helm).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'mocha';
import { demoBinaries } from '../../tools/demo/demo.js';
import { FLOOR_SUFFIX, repoRoot } from '../../tools/stack/paths.js';
import {
  allBinaries,
  clusterBinaries,
  components,
  componentsFor,
  devServerBinaries,
  temporalClusterBinaries,
  upstreamLwsBinaries,
} from '../../tools/stack/provision.js';
import { TEMPORAL_TARGETS, temporalBinaries, type TemporalTarget } from '../../tools/stack/temporal-target.js';
import { UPSTREAM_LWS_BINARY } from '../../tools/stack/upstream-lws.js';
import { versions } from '../../tools/stack/versions.js';

const source = (...path: string[]) => readFileSync(join(repoRoot, ...path), 'utf8');
const sorted = (names: Iterable<string>) => [...new Set(names)].sort();

/** The string literals of the array (or Set) that `pattern`'s first group captures, asserted to be there. */
function literals(text: string, pattern: RegExp, where: string): string[] {
  const list = pattern.exec(text)?.[1];
  assert.ok(list !== undefined, `${where}: ${String(pattern)} no longer matches; update this test with the code`);
  return [...list.matchAll(/'([^']+)'/g)].map((m) => m[1]!);
}

/** The binaries a file runs from .lws-temporal/bin by name: binPath('<name>'). */
const binPathNames = (text: string) => [...text.matchAll(/binPath\('([^']+)'\)/g)].map((m) => m[1]!);

/** The provisioned binaries a shell script runs as commands (comments skipped). */
function scriptCommands(script: string): string[] {
  const code = script
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n');
  const escape = (s: string) => s.replace(/[-.]/g, '\\$&');
  return allBinaries.filter((b) => new RegExp(`(^|[\\s;&|(!])${escape(b)}(?=[\\s;)]|$)`, 'm').test(code));
}

/** What tools/stack/cluster.ts starts: its `components`, the control plane under FLOOR_SUFFIX on the floor. */
function clusterStarts(release: 'newest' | 'floor'): string[] {
  const text = source('tools', 'stack', 'cluster.ts');
  const started = literals(text, /const components = \[([^\]]*)\]/, 'cluster.ts');
  const controlPlane = literals(text, /const controlPlane = new Set<\w+>\(\[([^\]]*)\]\)/, 'cluster.ts');
  return started.map((name) => (release === 'floor' && controlPlane.includes(name) ? `${name}${FLOOR_SUFFIX}` : name));
}

/** What src/dev-server/dev-server.ts starts. */
const devServerStarts = () => binPathNames(source('src', 'dev-server', 'dev-server.ts'));

/** What tools/stack/temporal-cluster.ts starts, and what the scripts it runs with .lws-temporal/bin on PATH run. */
function temporalClusterStarts(): string[] {
  const text = source('tools', 'stack', 'temporal-cluster.ts');
  const scripts = [...text.matchAll(/'([\w-]+\.sh)'/g)].map((m) => m[1]!);
  assert.ok(scripts.length > 0, 'temporal-cluster.ts runs no docker/temporal/*.sh any more; update this test');
  return [...binPathNames(text), ...scripts.flatMap((s) => scriptCommands(source('docker', 'temporal', s)))];
}

/**
 * The modules of tools/stack/ that start server binaries, and which they start. Every other module the demo imports
 * from there starts none (NOT_STARTERS): a new import outside both lists fails below until it is placed.
 */
const STARTERS: Record<string, (target: TemporalTarget, release: 'newest' | 'floor') => string[]> = {
  'cluster.js': (_, release) => clusterStarts(release),
  'temporal-target.js': (target) => (target === 'dev-server' ? devServerStarts() : temporalClusterStarts()),
  'temporal-cluster.js': () => temporalClusterStarts(),
  'upstream-lws.js': () => [UPSTREAM_LWS_BINARY],
};
/** Node processes of the checkout's own (controller-processes.ts), or no process at all. */
const NOT_STARTERS = ['controller-processes.js', 'crd.js', 'sample-lws.js', 'paths.js', 'provision.js'];

describe('stack/provision: what each entry point provisions is what it starts', () => {
  it('the cluster set is what cluster.ts starts, on the newest release and on the floor', () => {
    assert.deepEqual(sorted(clusterBinaries({})), sorted(clusterStarts('newest')));
    assert.deepEqual(sorted(clusterBinaries({ LWS_KUBERNETES: 'floor' })), sorted(clusterStarts('floor')));
  });

  it("the dev server's set is what src/dev-server/dev-server.ts starts: the CLI, whose Web UI is its own", () => {
    assert.deepEqual(sorted(devServerBinaries), sorted(devServerStarts()));
    assert.deepEqual(sorted(devServerBinaries), ['temporal']);
  });

  it("temporal:up's set is what temporal-cluster.ts starts and its setup scripts run", () => {
    assert.deepEqual(sorted(temporalClusterBinaries), sorted(temporalClusterStarts()));
    assert.deepEqual(sorted(temporalBinaries('cluster')), sorted(temporalClusterBinaries));
    assert.deepEqual(sorted(temporalBinaries('dev-server')), sorted(devServerBinaries));
  });

  it("upstream LWS's set is the binary upstream-lws.ts starts", () => {
    assert.deepEqual(upstreamLwsBinaries, [UPSTREAM_LWS_BINARY]);
  });

  for (const target of TEMPORAL_TARGETS) {
    for (const release of ['newest', 'floor'] as const) {
      it(`the demo on ${target}, Kubernetes ${release}: exactly what the modules it imports start`, () => {
        const imports = [...source('tools', 'demo', 'demo.ts').matchAll(/from '\.\.\/stack\/([\w-]+\.js)'/g)].map(
          (m) => m[1]!,
        );
        const unplaced = imports.filter((m) => !(m in STARTERS) && !NOT_STARTERS.includes(m));
        assert.deepEqual(unplaced, [], 'demo.ts imports a module of tools/stack/ this test does not know: place it');
        const starts = imports.filter((m) => m in STARTERS).flatMap((m) => STARTERS[m]!(target, release));
        const env = release === 'floor' ? { LWS_KUBERNETES: 'floor' } : {};
        assert.deepEqual(sorted(demoBinaries(target, env)), sorted(starts));
      });
    }
  }

  it('every set names binaries a component provides', () => {
    const sets = [
      ...clusterBinaries({}),
      ...clusterBinaries({ LWS_KUBERNETES: 'floor' }),
      ...devServerBinaries,
      ...temporalClusterBinaries,
      ...upstreamLwsBinaries,
    ];
    assert.deepEqual(
      sets.filter((b) => !allBinaries.includes(b)),
      [],
    );
  });
});

describe('stack/provision: which components a set builds', () => {
  const folders = (only?: readonly string[]) => componentsFor(only).map((c) => c.folder);

  it('cold, the demo on the dev server builds the cluster and fetches the CLI, nothing more', () => {
    assert.deepEqual(folders(demoBinaries('dev-server', {})), [
      `temporal-cli-${versions.temporalCli}`,
      `etcd-v${versions.etcd}`,
      `kwok-v${versions.kwok}`,
      `kubernetes-v${versions.kubernetes}`,
    ]);
  });

  it('the demo on the Temporal cluster adds the Temporal server and the Web UI server', () => {
    assert.deepEqual(folders(demoBinaries('cluster', {})), [
      `temporal-cli-${versions.temporalCli}`,
      `etcd-v${versions.etcd}`,
      `kwok-v${versions.kwok}`,
      `kubernetes-v${versions.kubernetes}`,
      `temporal-server-v${versions.temporalServer}`,
      `temporal-ui-server-v${versions.temporalUi}`,
    ]);
  });

  it('without a list, every component (npm run provision, npm test)', () => {
    assert.deepEqual(folders(), folders(allBinaries));
    assert.equal(folders().length, components.length);
  });

  it('refuses a name no component provides, rather than building nothing for it', () => {
    assert.throws(
      () => componentsFor(['temporal', 'kube-apiserver-flor']),
      /no component provides kube-apiserver-flor/,
    );
  });
});
