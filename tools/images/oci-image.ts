import { createHash, randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { constants as zlibConstants, gzipSync } from 'node:zlib';

/**
 * Container images without a Docker daemon or a registry: an OCI image layout (oci-layout, index.json,
 * blobs/sha256/…) packed as one tar, which `ctr -n k8s.io images import` takes as it is. Every byte follows from the
 * inputs (mtime 0, uid and gid 0, sorted names, no timestamps in gzip or JSON), so the same inputs give the same
 * archive and the same image digest on every run.
 */

/** One file of a layer: its path in the image (absolute or not; its folders are implied) and its mode bits. */
export type ImageFile = { pathInImage: string; mode: number } & (
  { sourcePath: string; contents?: undefined } | { contents: Buffer; sourcePath?: undefined }
);

/** A layer is a list of files; the image's filesystem is its layers applied in order. */
export type ImageLayer = ImageFile[];

/** What the image's config says about running it (the OCI image config's `config` object). */
export interface ImageRunConfig {
  entrypoint: string[];
  cmd?: string[];
  /** NAME=value, in order. */
  env?: string[];
  /** uid[:gid] (numbers need no /etc/passwd in the image) or a name. */
  user?: string;
  workingDir?: string;
  labels?: Record<string, string>;
}

export interface OciImageSpec {
  /** The full reference the image is imported under: lws-temporal.local/model-server:dev. */
  ref: string;
  layers: ImageLayer[];
  config: ImageRunConfig;
  /** The OCI architecture; the host's (ociArch()) by default. */
  arch?: string;
}

export interface OciImage {
  /** The archive's bytes. */
  archive: Buffer;
  /** sha256:… of the manifest: the image's digest once imported (`ctr images ls` shows it). */
  manifestDigest: string;
  /** sha256:… of the config: the image ID the kubelet reports. */
  configDigest: string;
  /** sha256:… of each uncompressed layer (the config's rootfs.diff_ids), in order. */
  diffIds: string[];
}

export const MEDIA_TYPES = {
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: 'application/vnd.oci.image.layer.v1.tar+gzip',
} as const;

/** The annotation containerd's import names an image by (the full reference). */
export const CONTAINERD_IMAGE_NAME = 'io.containerd.image.name';
/** The OCI annotation of a layout's manifest: the tag only, as the image-layout spec has it. */
export const OCI_REF_NAME = 'org.opencontainers.image.ref.name';

/** The OCI architecture of Node's process.arch; other architectures are refused rather than guessed. */
export function ociArch(nodeArch: string = process.arch): string {
  const known: Record<string, string> = { x64: 'amd64', arm64: 'arm64' };
  const arch = known[nodeArch];
  if (!arch) throw new Error(`no OCI architecture known for Node's arch ${nodeArch}: add it to ociArch()`);
  return arch;
}

/**
 * The parts of a reference `name[:tag]`: the tag is what follows the last ':' after the last '/' ("latest" when
 * there is none, as for `docker pull`). Digest references are refused: an archive names a tag.
 */
export function parseImageRef(ref: string): { repository: string; tag: string } {
  if (ref.includes('@')) throw new Error(`image reference ${ref}: a digest reference cannot name an archive's image`);
  const slash = ref.lastIndexOf('/');
  const colon = ref.lastIndexOf(':');
  const [repository, tag] = colon > slash ? [ref.slice(0, colon), ref.slice(colon + 1)] : [ref, 'latest'];
  // The grammar of github.com/distribution/reference, loosely: an optional registry host[:port], then path parts.
  const parts = repository.split('/');
  const host = parts.length > 1 && /[.:]|^localhost$/.test(parts[0]!) ? parts.shift()! : undefined;
  if (
    (host !== undefined && !/^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]+)?$/.test(host)) ||
    !parts.every((p) => /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/.test(p))
  ) {
    throw new Error(`image reference ${ref}: ${repository} is no repository name ([host[:port]/]path, lowercase path)`);
  }
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(tag)) {
    throw new Error(`image reference ${ref}: ${tag} is no tag (letters, digits, _ . -; 128 at most)`);
  }
  return { repository, tag };
}

/** Builds the archive in memory (the stack's images are a few MB). */
export async function buildOciImage(spec: OciImageSpec): Promise<OciImage> {
  const { tag } = parseImageRef(spec.ref);
  const arch = spec.arch ?? ociArch();
  if (spec.layers.length === 0) throw new Error(`image ${spec.ref}: it needs at least one layer`);
  if (spec.config.entrypoint.length === 0) throw new Error(`image ${spec.ref}: its entrypoint is empty`);

  const blobs = new Map<string, Buffer>();
  const addBlob = (data: Buffer) => {
    const digest = sha256(data);
    blobs.set(digest, data);
    return { digest, size: data.length };
  };

  const diffIds: string[] = [];
  const layerDescriptors: Descriptor[] = [];
  for (const [i, layer] of spec.layers.entries()) {
    const tar = await layerTar(layer, `image ${spec.ref}, layer ${i + 1}`);
    diffIds.push(sha256(tar));
    // gzip's header carries no name and mtime 0 from Node; the level is fixed so that the bytes are too.
    const gz = gzipSync(tar, { level: zlibConstants.Z_BEST_COMPRESSION });
    layerDescriptors.push({ mediaType: MEDIA_TYPES.layer, ...addBlob(gz) });
  }

  const run = spec.config;
  const config = {
    // The epoch, not the build time: a timestamp would make every build a new image.
    created: '1970-01-01T00:00:00Z',
    architecture: arch,
    os: 'linux',
    config: {
      ...(run.user !== undefined && { User: run.user }),
      ...(run.env !== undefined && { Env: run.env }),
      Entrypoint: run.entrypoint,
      ...(run.cmd !== undefined && { Cmd: run.cmd }),
      ...(run.workingDir !== undefined && { WorkingDir: run.workingDir }),
      ...(run.labels !== undefined && { Labels: sortedObject(run.labels) }),
    },
    rootfs: { type: 'layers', diff_ids: diffIds },
    history: spec.layers.map(() => ({ created: '1970-01-01T00:00:00Z', created_by: 'tools/images/oci-image.ts' })),
  };
  const configDescriptor: Descriptor = { mediaType: MEDIA_TYPES.config, ...addBlob(json(config)) };

  const manifest = {
    schemaVersion: 2,
    mediaType: MEDIA_TYPES.manifest,
    config: configDescriptor,
    layers: layerDescriptors,
  };
  const manifestDescriptor = addBlob(json(manifest));
  const index = {
    schemaVersion: 2,
    mediaType: MEDIA_TYPES.index,
    manifests: [
      {
        mediaType: MEDIA_TYPES.manifest,
        ...manifestDescriptor,
        platform: { architecture: arch, os: 'linux' },
        annotations: { [CONTAINERD_IMAGE_NAME]: spec.ref, [OCI_REF_NAME]: tag },
      },
    ],
  };

  const entries: TarEntry[] = [
    { name: 'oci-layout', mode: 0o644, data: json({ imageLayoutVersion: '1.0.0' }) },
    { name: 'index.json', mode: 0o644, data: json(index) },
    { name: 'blobs', mode: 0o755 },
    { name: 'blobs/sha256', mode: 0o755 },
    ...[...blobs].map(([digest, data]) => ({
      name: `blobs/sha256/${digest.slice('sha256:'.length)}`,
      mode: 0o644,
      data,
    })),
  ];
  return {
    archive: tarArchive(entries),
    manifestDigest: manifestDescriptor.digest,
    configDigest: configDescriptor.digest,
    diffIds,
  };
}

/** Builds the archive and writes it to `path` through a rename: a reader never sees half an archive. */
export async function writeOciImage(spec: OciImageSpec, path: string): Promise<Omit<OciImage, 'archive'>> {
  const { archive, ...rest } = await buildOciImage(spec);
  const tmp = `${path}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await writeFile(tmp, archive);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return rest;
}

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
}

const sha256 = (data: Buffer) => `sha256:${createHash('sha256').update(data).digest('hex')}`;
const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const sortedObject = (o: Record<string, string>) =>
  Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/** A layer's tar: its files with their folders, each folder once, parents before children. */
async function layerTar(files: ImageLayer, what: string): Promise<Buffer> {
  const entries = new Map<string, TarEntry>();
  for (const file of files) {
    const name = imagePath(file.pathInImage, what);
    if (!Number.isInteger(file.mode) || file.mode < 0 || file.mode > 0o7777) {
      throw new Error(`${what}: ${file.pathInImage} has mode ${file.mode}; give permission bits (0o755)`);
    }
    const existing = entries.get(name);
    if (existing) {
      throw new Error(`${what}: ${file.pathInImage} is ${existing.data ? 'listed twice' : 'a folder of another file'}`);
    }
    const parts = name.split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      const at = entries.get(dir);
      if (at?.data) throw new Error(`${what}: ${dir} is a file and a folder of ${file.pathInImage}`);
      if (!at) entries.set(dir, { name: dir, mode: 0o755 });
    }
    const data = file.contents !== undefined ? file.contents : await readFile(file.sourcePath);
    entries.set(name, { name, mode: file.mode, data });
  }
  return tarArchive([...entries.values()]);
}

/** A path in the image as a layer names it: relative, no '.', '..' or empty parts. */
function imagePath(path: string, what: string): string {
  const name = path.replace(/^\/+/, '');
  const parts = name.split('/');
  if (name === '' || parts.some((p) => p === '' || p === '.' || p === '..')) {
    throw new Error(`${what}: ${JSON.stringify(path)} is no file path in the image`);
  }
  return name;
}

/** A regular file when it has data, else a folder. */
interface TarEntry {
  name: string;
  mode: number;
  data?: Buffer;
}

const BLOCK = 512;

/**
 * A POSIX ustar archive of `entries`, sorted by name: owner 0:0 without names, mtime 0. Only what the images need,
 * regular files and folders; a name that ustar cannot hold (over 255 bytes, or no split at a '/' into 155 + 100) is
 * refused rather than written with an extension.
 */
export function tarArchive(entries: TarEntry[]): Buffer {
  const sorted = [...entries].sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
  const chunks: Buffer[] = [];
  for (const entry of sorted) {
    const size = entry.data?.length ?? 0;
    chunks.push(tarHeader(entry.data ? entry.name : `${entry.name}/`, entry.mode, size, entry.data ? '0' : '5'));
    if (entry.data) {
      chunks.push(entry.data);
      if (size % BLOCK) chunks.push(Buffer.alloc(BLOCK - (size % BLOCK)));
    }
  }
  // The end of the archive: two zero blocks.
  chunks.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(chunks);
}

function tarHeader(name: string, mode: number, size: number, type: '0' | '5'): Buffer {
  const header = Buffer.alloc(BLOCK);
  const [prefix, base] = splitName(name);
  const octal = (value: number, width: number, at: number) => {
    const digits = value.toString(8);
    if (digits.length > width - 1) throw new Error(`tar: ${name}: ${value} does not fit its header field`);
    header.write(digits.padStart(width - 1, '0'), at, 'ascii');
  };
  header.write(base, 0, 'utf8');
  octal(mode, 8, 100);
  octal(0, 8, 108); // uid
  octal(0, 8, 116); // gid
  octal(size, 12, 124);
  octal(0, 12, 136); // mtime
  header.write(type, 156, 'ascii');
  header.write('ustar\u000000', 257, 'ascii');
  header.write(prefix, 345, 'utf8');
  // The checksum is taken with its own field as spaces, then written as six octal digits, NUL, space.
  header.fill(' ', 148, 156);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 'ascii');
  return header;
}

/** ustar's name is 100 bytes, with a prefix of up to 155 before it, joined by an implied '/'. */
function splitName(name: string): [prefix: string, base: string] {
  const bytes = Buffer.byteLength(name);
  if (bytes <= 100) return ['', name];
  for (let i = name.indexOf('/'); i !== -1; i = name.indexOf('/', i + 1)) {
    const prefix = name.slice(0, i);
    const base = name.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(base) <= 100 && base !== '') return [prefix, base];
  }
  throw new Error(`tar: ${name} is too long for a ustar header (100 bytes, or 155 + 100 split at a '/')`);
}
