import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  open,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  stat,
  writeFile,
  lstat,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { rootCertificates } from 'node:tls';
import { promisify } from 'node:util';
import { createLogger, formatDuration, type Logger } from '../../src/log.js';
import { cacheDir, repoRoot } from '../stack/paths.js';
import { runCommand, StepError } from '../stack/run.js';
import { buildBaseImage, ensureHostTools, type BaseImage } from './base-image.js';

/**
 * The product's container image, built on this machine as a release builds it: the repository's Dockerfile, with
 * buildah instead of a Docker daemon (`buildah build --isolation chroot`, no daemon, no registry), on the base of
 * base-image.ts (the Dockerfile's NODE_IMAGE, given as an OCI archive). The result is an OCI archive that
 * `ctr -n k8s.io images import` takes, named lws-temporal.local/lws-temporal:<tag>.
 *
 * The tag is the first 12 hex characters of a sha256 over what the image is built from (productImageInputs and the
 * base image's key), so an unchanged tree reuses the cached archive without running buildah at all. When the tree
 * changed, buildah's layer cache (--layers) still skips the `npm ci` steps unless package.json or package-lock.json
 * changed.
 *
 * Where things are, under <cache>/images/ (cacheDir(): LWS_TEMPORAL_CACHE or ~/.cache/lws-temporal):
 *   lws-temporal/<tag>.oci.tar    the archive; <tag>.json its record; <tag>.build.log buildah's output
 *   buildah/storage/              buildah's image and layer storage (overlay), the layer cache between builds
 * and buildah's run state in /run/lws-temporal-buildah-<hash> (as containers/storage wants it: on tmpfs, cleared at boot).
 */

export const productImageRepository = 'lws-temporal.local/lws-temporal';

/** What the image is built from, relative to the repository: every COPY source of the Dockerfile, and it. */
export const productImageInputs = [
  'Dockerfile',
  '.dockerignore',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'docker/tsconfig.build.json',
  'src',
  'scripts/build.ts',
  'tools/build',
];

/** Bumped when the way the image is built here changes (buildah's flags), to build anew. */
const RECIPE = 'buildah build --isolation chroot --layers, v1';
/** Archives kept in the cache, newest first; older ones are deleted after a build. */
const KEEP_ARCHIVES = 3;

export interface ProductImage {
  /** lws-temporal.local/lws-temporal:<tag> */
  ref: string;
  archive: string;
  /** false: the archive of the same inputs was in the cache. */
  built: boolean;
  /** The archive's size (the image's compressed layers, config and manifest). */
  sizeBytes: number;
}

/** The record beside each archive. */
interface ArchiveRecord {
  ref: string;
  contentHash: string;
  base: { ref: string; key: string };
  sizeBytes: number;
  builtAt: string;
  buildMs: number;
}

const execFileAsync = promisify(execFile);

/** Runs a command for its whole stdout (runCommand keeps only the tail). */
async function capture(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  step: string,
  hint: string,
): Promise<string> {
  try {
    const { stdout } = await execFileAsync(cmd, args, { env, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new StepError(
      step,
      [cmd, ...args].join(' '),
      hint,
      (e.stderr || e.message).trim().split('\n').slice(-25).join('\n'),
    );
  }
}

/**
 * sha256 over the inputs' paths, modes and contents (node_modules and .DS_Store skipped, as .dockerignore does), the
 * base image's key and the recipe.
 */
export async function productImageHash(baseKey: string): Promise<string> {
  const hash = createHash('sha256').update(`${RECIPE}\nbase ${baseKey}\n`);
  const visit = async (path: string): Promise<void> => {
    const info = await lstat(path).catch(() => undefined);
    const rel = relative(repoRoot, path);
    if (!info) {
      hash.update(`${rel}\0missing\n`);
    } else if (info.isDirectory()) {
      const names = (await readdir(path)).filter((n) => n !== 'node_modules' && n !== '.DS_Store').sort();
      for (const name of names) await visit(join(path, name));
    } else if (info.isSymbolicLink()) {
      hash.update(`${rel}\0link\0${await readlink(path)}\n`);
    } else {
      const content = createHash('sha256')
        .update(await readFile(path))
        .digest('hex');
      hash.update(`${rel}\0${info.mode & 0o111 ? 'x' : '-'}\0${content}\n`);
    }
  };
  for (const input of productImageInputs) await visit(join(repoRoot, input));
  return hash.digest('hex');
}

/** buildah's storage: under the cache (with the other caches; LWS_TEMPORAL_CACHE moves it), not the system's. */
export function buildahStorage(env: NodeJS.ProcessEnv = process.env): {
  root: string;
  runroot: string;
  driver: string;
} {
  const driver = env.LWS_BUILDAH_STORAGE_DRIVER || 'overlay';
  // A store keeps the driver it was made with: another driver gets a store of its own.
  const root = join(cacheDir(env), 'images', 'buildah', driver === 'overlay' ? 'storage' : `storage-${driver}`);
  const id = createHash('sha256').update(root).digest('hex').slice(0, 8);
  const uid = process.getuid?.() ?? 0;
  const runroot = uid === 0 ? `/run/lws-temporal-buildah-${id}` : join(tmpdir(), `lws-temporal-buildah-${uid}-${id}`);
  return { root, runroot, driver };
}

/** `buildah <these> …`: the storage above. */
export function buildahGlobalArgs(env: NodeJS.ProcessEnv = process.env): string[] {
  const s = buildahStorage(env);
  return ['--root', s.root, '--runroot', s.runroot, '--storage-driver', s.driver];
}

/**
 * npm in the build trusts what this machine's Node.js trusts: with NODE_EXTRA_CA_CERTS set (a proxy that signs
 * TLS with its own CA), Node's own roots plus that file, through an npmrc `cafile` mounted for the RUN steps only.
 * Nothing of it reaches a layer of the final stage, which has no RUN step.
 */
async function caMounts(env: NodeJS.ProcessEnv, dir: string, log: Logger): Promise<string[]> {
  const extra = env.NODE_EXTRA_CA_CERTS;
  if (!extra) return [];
  const pem = await readFile(extra, 'utf8').catch(() => undefined);
  if (!pem) {
    log.warn('NODE_EXTRA_CA_CERTS is set but unreadable: the build uses Node.js roots only', { file: extra });
    return [];
  }
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'ca.pem'), `${rootCertificates.join('\n')}\n${pem}`);
  await writeFile(join(dir, 'npmrc'), 'cafile=/run/lws-temporal-build-ca/ca.pem\n');
  log.info('the build trusts NODE_EXTRA_CA_CERTS too (an npmrc cafile mounted for RUN steps, not in the image)', {
    file: extra,
  });
  return [
    '--volume',
    `${dir}:/run/lws-temporal-build-ca:ro`,
    '--volume',
    `${join(dir, 'npmrc')}:/usr/local/etc/npmrc:ro`,
  ];
}

/** Logs each step buildah starts (from its log file), RUN and FROM at info, the rest at debug. */
function followBuildLog(path: string, log: Logger): { stop: () => Promise<void> } {
  let offset = 0;
  let partial = '';
  const read = async () => {
    const handle = await open(path, 'r').catch(() => undefined);
    if (!handle) return;
    try {
      const { size } = await handle.stat();
      if (size <= offset) return;
      const buf = Buffer.alloc(size - offset);
      await handle.read(buf, 0, buf.length, offset);
      offset = size;
      const lines = (partial + buf.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const m = /^\[(\d+\/\d+)\] STEP (\d+\/\d+): (.*)$/.exec(line);
        if (!m) continue;
        const text = m[3]!.length > 110 ? `${m[3]!.slice(0, 107)}...` : m[3]!;
        const level = /^(RUN|FROM) /.test(m[3]!) ? 'info' : 'debug';
        log[level](`build stage ${m[1]} step ${m[2]}: ${text}`);
      }
    } finally {
      await handle.close();
    }
  };
  let running = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(read).catch(() => undefined);
  }, 2000);
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
      await read().catch(() => undefined);
    },
  };
}

/** The last image of each stage but the final one, from buildah's log: "[n/m] STEP …: FROM … AS name" … "--> id". */
function stageImages(buildLog: string): { stage: string; id: string }[] {
  const names: string[] = [];
  const last: string[] = [];
  let current = -1;
  for (const line of buildLog.split('\n')) {
    const step = /^\[(\d+)\/(\d+)\] (?:STEP \d+\/\d+: (.*)|COMMIT)/.exec(line);
    if (step) {
      current = Number(step[1]) - 1;
      const from = /^FROM \S+ AS (\S+)/i.exec(step[3] ?? '');
      if (from) names[current] = from[1]!;
      continue;
    }
    const id = /^--> ([0-9a-f]{11,64})$/.exec(line);
    if (id && current >= 0) last[current] = id[1]!;
  }
  return names.flatMap((stage, i) => (i < names.length - 1 && last[i] ? [{ stage, id: last[i]! }] : []));
}

/**
 * Keeps buildah's storage to the current build: the product's other tags go, then whatever no tag holds any more.
 * The build's earlier stages are tagged first (lws-temporal.local/lws-temporal-stage:<tag>-<stage>), so their layers
 * (`npm ci`'s above all) stay as the next build's cache. Best effort: a failure only leaves more in the storage.
 */
async function pruneStorage(tag: string, buildLog: string, env: NodeJS.ProcessEnv, log: Logger): Promise<void> {
  const global = buildahGlobalArgs(env);
  const step = 'buildah storage cleanup';
  const hint = `clean it by hand: buildah ${global.join(' ')} rmi --all`;
  try {
    const keep = new Set([`${productImageRepository}:${tag}`]);
    for (const { stage, id } of stageImages(buildLog)) {
      const name = `${productImageRepository}-stage:${tag}-${stage}`;
      await capture('buildah', [...global, 'tag', id, name], env, step, hint);
      keep.add(name);
    }
    const listed = await capture(
      'buildah',
      [...global, 'images', '--format', '{{.Name}}:{{.Tag}}', '--noheading'],
      env,
      step,
      hint,
    );
    const stale = listed
      .split('\n')
      .map((l) => l.trim())
      .filter((n) => n.startsWith(`${productImageRepository}:`) || n.startsWith(`${productImageRepository}-stage:`))
      .filter((n) => !keep.has(n));
    if (stale.length) await capture('buildah', [...global, 'rmi', ...stale], env, step, hint);
    // rmi --prune removes the images nothing refers to; their parents become such images in turn.
    for (let round = 0; round < 50; round++) {
      const out = await capture('buildah', [...global, 'rmi', '--prune'], env, step, hint);
      if (!/[0-9a-f]{12}/.test(out)) break;
    }
  } catch (err) {
    log.warn('could not clean buildah storage up', { error: err instanceof Error ? err.message : String(err) });
  }
}

async function readRecord(path: string): Promise<ArchiveRecord | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as ArchiveRecord;
  } catch {
    return undefined;
  }
}

/** Deletes all but the newest KEEP_ARCHIVES archives (with their records and logs). */
async function evictArchives(dir: string, current: string): Promise<void> {
  const entries = await readdir(dir).catch(() => [] as string[]);
  const archives = await Promise.all(
    entries.filter((n) => n.endsWith('.oci.tar')).map(async (n) => ({ n, mtime: (await stat(join(dir, n))).mtimeMs })),
  );
  archives.sort((a, b) => b.mtime - a.mtime);
  for (const { n } of archives.slice(KEEP_ARCHIVES)) {
    if (join(dir, n) === current) continue;
    const stem = n.slice(0, -'.oci.tar'.length);
    for (const f of [n, `${stem}.json`, `${stem}.build.log`]) await rm(join(dir, f), { force: true });
  }
}

/**
 * Builds lws-temporal.local/lws-temporal:<tag> from the repository's Dockerfile into an OCI archive in the cache,
 * or returns the cached archive of the same inputs. `tag`: another tag for the image (0.1.0); the archive is reused
 * only if it was built from the same inputs.
 */
export async function buildProductImage(
  opts: { log?: Logger; env?: NodeJS.ProcessEnv; tag?: string } = {},
): Promise<ProductImage> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? createLogger('image');
  const base: BaseImage = await buildBaseImage({ log, env });
  const contentHash = await productImageHash(base.key);
  const tag = opts.tag ?? contentHash.slice(0, 12);
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(tag)) {
    throw new Error(
      `${tag} is not an image tag: letters, digits, '_', '.' and '-', 128 at most, not starting with . or -`,
    );
  }
  const ref = `${productImageRepository}:${tag}`;
  const dir = join(cacheDir(env), 'images', 'lws-temporal');
  const archive = join(dir, `${tag}.oci.tar`);
  const recordPath = join(dir, `${tag}.json`);
  const record = await readRecord(recordPath);
  const size = await stat(archive).then(
    (s) => s.size,
    () => undefined,
  );
  if (record?.contentHash === contentHash && size === record.sizeBytes) {
    log.info(`image ${ref}: cached`, { archive });
    return { ref, archive, built: false, sizeBytes: size };
  }

  await ensureHostTools(['buildah'], log, env);
  await mkdir(dir, { recursive: true });
  const started = Date.now();
  const buildLog = join(dir, `${tag}.build.log`);
  await rm(buildLog, { force: true });
  const global = buildahGlobalArgs(env);
  const scratch = await mkdtemp(join(tmpdir(), 'lws-image-build-'));
  log.info(
    `(1/2) image ${ref}: buildah build of the Dockerfile (3-5 minutes cold; about a minute with the npm ci layers cached)`,
    {
      base: base.ref,
      log: buildLog,
    },
  );
  const follower = followBuildLog(buildLog, log);
  try {
    await runCommand(
      'buildah',
      [
        ...global,
        'build',
        '--isolation',
        'chroot',
        '--network',
        'host',
        '--layers',
        '--logfile',
        buildLog,
        '--build-arg',
        `NODE_IMAGE=oci-archive:${base.archive}`,
        ...(await caMounts(env, join(scratch, 'ca'), log)),
        '--file',
        join(repoRoot, 'Dockerfile'),
        '--tag',
        ref,
        repoRoot,
      ],
      {
        env,
        step: `image ${ref}: buildah build`,
        hint: `read ${buildLog}; the build needs the npm registry (npm ci). If buildah's storage is the problem (overlay on overlay, in a container), try LWS_BUILDAH_STORAGE_DRIVER=vfs, or delete ${buildahStorage(env).root}`,
        progress: { log, what: `building ${ref}`, heartbeatMs: 60_000 },
      },
    ).catch(async (err: unknown) => {
      // buildah writes its output to the log file: show its end.
      if (!(err instanceof StepError)) throw err;
      const tail = await readFile(buildLog, 'utf8').catch(() => '');
      const output = [err.output, tail.trim().split('\n').slice(-25).join('\n')].filter(Boolean).join('\n');
      throw new StepError(err.step, err.command, err.hint, output);
    });
    await follower.stop();

    log.info(`(2/2) image ${ref}: writing the OCI archive`);
    const partial = `${archive}.partial-${process.pid}`;
    await rm(partial, { force: true });
    await runCommand('buildah', [...global, 'push', '--quiet', ref, `oci-archive:${partial}:${ref}`], {
      env,
      step: `image ${ref}: buildah push to an OCI archive`,
      hint: `check free space in ${dir}`,
      progress: { log, what: 'writing the archive' },
    });
    await rename(partial, archive);
  } finally {
    await follower.stop();
    await rm(scratch, { recursive: true, force: true });
  }
  const sizeBytes = (await stat(archive)).size;
  const buildMs = Date.now() - started;
  const newRecord: ArchiveRecord = {
    ref,
    contentHash,
    base: { ref: base.ref, key: base.key },
    sizeBytes,
    builtAt: new Date().toISOString(),
    buildMs,
  };
  await writeFile(recordPath, JSON.stringify(newRecord, null, 2) + '\n');
  await pruneStorage(tag, await readFile(buildLog, 'utf8').catch(() => ''), env, log);
  await evictArchives(dir, archive);
  log.info(`image ${ref}: built`, { took: formatDuration(buildMs), archive, mb: Math.round(sizeBytes / 1e5) / 10 });
  return { ref, archive, built: true, sizeBytes };
}

export interface ProductImageCheck {
  /** The unpacked filesystem's size (du -sb). */
  unpackedBytes: number;
  /** What was checked, one line each. */
  checks: string[];
}

/** The image config's fields that the Deployments and runAsNonRoot rely on. */
const expectedConfig = {
  User: '1000:1000',
  Entrypoint: ['node'],
  Cmd: ['dist/worker/main.js'],
  WorkingDir: '/app',
};

const expectedFiles = [
  'app/package.json',
  'app/dist/worker/main.js',
  'app/dist/trigger/main.js',
  'app/dist/main.js',
  'app/dist/admission/main.js',
  'app/dist/workflow-bundle.js',
  'app/node_modules/@temporalio/core-bridge/package.json',
];

/** Run as uid 1000 in the unpacked image: the package, the Temporal core's native library, the bundles parse. */
const inImageCheck = [
  'cd /app',
  `node -e "$CHECK_JS"`,
  ...['worker/main', 'trigger/main', 'main', 'admission/main', 'workflow-bundle'].map(
    (f) => `node --check dist/${f}.js`,
  ),
  `node --input-type=module -e "await import('@temporalio/worker')"`,
].join(' && ');
const checkJs = [
  "const pkg = require('/app/package.json');",
  "const bridge = require('@temporalio/core-bridge');",
  "if (pkg.type !== 'module') throw new Error('package.json has no type: module');",
  "if (!bridge.native || Object.keys(bridge.native).length === 0) throw new Error('the core bridge has no native functions');",
  "if (process.getuid() !== 1000 || process.getgid() !== 1000) throw new Error('not uid and gid 1000');",
].join(' ');

/**
 * Checks an archive the way a container runtime would see it, without one: unpacks it (umoci), reads its config,
 * and runs node in it with chroot as uid 1000. A few seconds plus the unpack.
 */
export async function checkProductImage(
  archive: string,
  opts: { log?: Logger; env?: NodeJS.ProcessEnv } = {},
): Promise<ProductImageCheck> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? createLogger('image');
  await ensureHostTools(['umoci', 'tar', 'chroot'], log, env);
  const tmp = await mkdtemp(join(tmpdir(), 'lws-image-check-'));
  const step = `checking ${archive}`;
  const fail = (what: string) => new StepError(step, what, 'the Dockerfile or the build changed what the image holds');
  try {
    const layout = join(tmp, 'layout');
    await mkdir(layout);
    await runCommand('tar', ['-xf', archive, '-C', layout], { step, hint: 'is the archive complete? build it again' });
    const blob = async (digest: string) =>
      JSON.parse(await readFile(join(layout, 'blobs', ...digest.split(':')), 'utf8')) as Record<string, unknown>;
    const index = JSON.parse(await readFile(join(layout, 'index.json'), 'utf8')) as {
      manifests: { digest: string; annotations?: Record<string, string> }[];
    };
    const entry = index.manifests[0];
    const name = entry?.annotations?.['org.opencontainers.image.ref.name'];
    if (!entry || !name) throw fail('index.json names no image');
    const manifest = (await blob(entry.digest)) as { config: { digest: string } };
    const config = ((await blob(manifest.config.digest)) as { config: Record<string, unknown> }).config;
    const checks: string[] = [`index.json names ${name}`];
    for (const [field, want] of Object.entries(expectedConfig)) {
      if (JSON.stringify(config[field]) !== JSON.stringify(want)) {
        throw fail(`config ${field} is ${JSON.stringify(config[field])}, not ${JSON.stringify(want)}`);
      }
      checks.push(`config ${field} ${JSON.stringify(want)}`);
    }

    const rootfs = join(tmp, 'rootfs');
    log.info('unpacking the image to check it (umoci raw unpack)');
    await runCommand('umoci', ['raw', 'unpack', '--image', `${layout}:${name}`, rootfs], {
      step,
      hint: 'run the same umoci command by hand to see why',
      progress: { log, what: 'unpacking the image' },
    });
    for (const file of expectedFiles) {
      if (!(await stat(join(rootfs, file)).catch(() => undefined))) throw fail(`/${file} is missing`);
    }
    const releases = await readdir(join(rootfs, 'app/node_modules/@temporalio/core-bridge/releases'));
    if (releases.length !== 1)
      throw fail(`the core bridge keeps ${releases.length} native builds, not 1: ${releases.join(', ')}`);
    checks.push(`files ${expectedFiles.map((f) => `/${f}`).join(' ')}; one native core build (${releases[0]})`);

    const imageEnv = Object.fromEntries(
      ((config.Env as string[] | undefined) ?? []).map((e) => [
        e.slice(0, e.indexOf('=')),
        e.slice(e.indexOf('=') + 1),
      ]),
    );
    await runCommand('chroot', ['--userspec=1000:1000', rootfs, '/bin/sh', '-c', inImageCheck], {
      env: { ...imageEnv, CHECK_JS: checkJs },
      step: `${step}: node in the image, as uid 1000`,
      hint: 'the output above says which check failed',
    });
    checks.push(
      'as uid 1000: package.json, the core bridge native library, node --check of the bundles, @temporalio/worker loads',
    );
    const du = await capture('du', ['-sb', rootfs], env, step, 'needs GNU du');
    return { unpackedBytes: Number(du.split(/\s/)[0]), checks };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
