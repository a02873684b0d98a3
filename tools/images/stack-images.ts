import { createHash } from 'node:crypto';
import { access, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { createLogger, formatDuration, type Logger } from '../../src/log.js';
import { cacheDir, repoRoot } from '../stack/paths.js';
import { runCommand } from '../stack/run.js';
import { ociArch, writeOciImage, type OciImageSpec } from './oci-image.js';

/**
 * The local stack's own container images, for its real nodes: the pod sandbox's pause and the test workload
 * model-server. Both are static Go binaries of tools/images, each alone in an image built without a Docker daemon or
 * a registry, and kept by content under the cache: a tag is a digest of the image's inputs, so an unchanged source
 * builds nothing and a changed one is a new tag (a kubelet never runs a stale image under an old name).
 */

export type StackImageName = 'pause' | 'model-server';

export interface StackImage {
  name: StackImageName;
  /** lws-temporal.local/<name>:<content tag> */
  ref: string;
  /** The OCI archive, for `ctr -n k8s.io images import`. */
  archive: string;
  /** True when this call built it; false when the cache had it. */
  built: boolean;
}

export interface StackImages {
  pause: StackImage;
  modelServer: StackImage;
  /** True when either was built by this call. */
  built: boolean;
}

export const IMAGE_REGISTRY = 'lws-temporal.local';
export const imagesSourceDir = join(repoRoot, 'tools', 'images');

/** Where the archives are kept: one file per image and content tag. */
export function imagesCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheDir(env), 'images');
}

/**
 * Bumped when what this file or oci-image.ts makes of the same sources changes (the image config, the archive's
 * layout), so that the new output gets a new tag too.
 */
const RECIPE_VERSION = 1;

/** What each image holds and how it runs, apart from the binary's bytes. */
const recipes: Record<StackImageName, { user: string; labels: Record<string, string> }> = {
  // As upstream's registry.k8s.io/pause: a numeric user, so no /etc/passwd is needed.
  pause: { user: '65535:65535', labels: { 'org.opencontainers.image.title': 'pause' } },
  // Not root, so that it runs under the restricted Pod Security profile as it is.
  'model-server': { user: '65532:65532', labels: { 'org.opencontainers.image.title': 'model-server' } },
};

function imageSpec(name: StackImageName, ref: string, binary: string, arch: string): OciImageSpec {
  const recipe = recipes[name];
  return {
    ref,
    arch,
    layers: [[{ pathInImage: `/${name}`, sourcePath: binary, mode: 0o755 }]],
    config: { entrypoint: [`/${name}`], user: recipe.user, labels: recipe.labels },
  };
}

const goHint =
  'check that Go is installed (`go version`, needs the version in tools/images/go.mod or GOTOOLCHAIN=auto); the ' +
  'module has no dependencies, so no download is needed';

/** The environment of the image builds: static binaries for Linux on the host's architecture, no VCS stamp. */
function goEnv(env: NodeJS.ProcessEnv, arch: string): NodeJS.ProcessEnv {
  return {
    ...env,
    CGO_ENABLED: '0',
    GOOS: 'linux',
    GOARCH: arch,
    // -buildvcs=false: the commit would otherwise be stamped in, and change the binary with every commit.
    GOFLAGS: '-mod=readonly -buildvcs=false',
    // The module stands alone, whatever go.work a parent folder might have.
    GOWORK: 'off',
  };
}

/** Builds tools/images/<name> into `out` (a file path): a static, stripped binary. */
export async function buildImageCommand(
  name: StackImageName,
  out: string,
  opts: { log?: Logger; env?: NodeJS.ProcessEnv } = {},
): Promise<void> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? createLogger('images');
  await runCommand('go', ['build', '-trimpath', '-ldflags', '-s -w', '-o', out, `./${name}`], {
    cwd: imagesSourceDir,
    env: goEnv(env, ociArch()),
    step: `${name}: go build`,
    hint: goHint,
    progress: { log, what: `building ${name}`, heartbeatMs: 30_000 },
  });
}

/**
 * The sha256 of an image's inputs: go.mod (and go.sum, should it ever exist), the command's own Go sources, any Go
 * package of the module outside the command folders (shared code), the recipe and the architecture. Test files are
 * left out: they are not in the binary.
 */
export async function imageContentHash(name: StackImageName, arch: string = ociArch()): Promise<string> {
  const hash = createHash('sha256');
  const add = (label: string, data: string | Buffer) => {
    hash.update(`${label}\u0000${Buffer.byteLength(data)}\u0000`);
    hash.update(data);
  };
  add('recipe', JSON.stringify({ version: RECIPE_VERSION, arch, name, ...recipes[name] }));
  const commands = Object.keys(recipes);
  for (const file of await goSources(imagesSourceDir)) {
    const top = file.split('/')[0]!;
    if (file.includes('/') && commands.includes(top) && top !== name) continue;
    add(file, await readFile(join(imagesSourceDir, file)));
  }
  return hash.digest('hex');
}

/** go.mod, go.sum and the non-test .go files under `dir`, relative with '/', sorted. */
async function goSources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join('/'))
    .filter((f) => f === 'go.mod' || f === 'go.sum' || (f.endsWith('.go') && !f.endsWith('_test.go')))
    .sort();
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** The image's reference and archive path for the current sources, built if the cache has no archive for them. */
async function stackImage(
  name: StackImageName,
  opts: { log: Logger; env: NodeJS.ProcessEnv; arch: string },
): Promise<StackImage> {
  const tag = (await imageContentHash(name, opts.arch)).slice(0, 16);
  const ref = `${IMAGE_REGISTRY}/${name}:${tag}`;
  const dir = imagesCacheDir(opts.env);
  const archive = join(dir, `${name}-${tag}-${opts.arch}.oci.tar`);
  if (await exists(archive)) {
    opts.log.debug(`${ref}: cached`, { archive });
    return { name, ref, archive, built: false };
  }
  const started = Date.now();
  opts.log.info(`${ref}: building the image (a few seconds of Go build, longer when the build cache is cold)`);
  await mkdir(dir, { recursive: true });
  const work = await mkdtemp(join(dir, `.build-${name}-`));
  try {
    const binary = join(work, name);
    await buildImageCommand(name, binary, opts);
    const { manifestDigest } = await writeOciImage(imageSpec(name, ref, binary, opts.arch), archive);
    opts.log.info(`${ref}: done`, { archive, digest: manifestDigest, took: formatDuration(Date.now() - started) });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return { name, ref, archive, built: true };
}

/**
 * The stack's images for the host's architecture: built on the first call after their sources change, else taken
 * from the cache (imagesCacheDir) without running anything.
 */
export async function buildStackImages(opts: { log?: Logger; env?: NodeJS.ProcessEnv } = {}): Promise<StackImages> {
  const log = opts.log ?? createLogger('images');
  const env = opts.env ?? process.env;
  const arch = ociArch();
  const pause = await stackImage('pause', { log, env, arch });
  const modelServer = await stackImage('model-server', { log, env, arch });
  return { pause, modelServer, built: pause.built || modelServer.built };
}
