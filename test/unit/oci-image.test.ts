import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, it } from 'mocha';
import {
  buildOciImage,
  CONTAINERD_IMAGE_NAME,
  MEDIA_TYPES,
  OCI_REF_NAME,
  ociArch,
  parseImageRef,
  type OciImageSpec,
} from '../../tools/images/oci-image.js';

interface Entry {
  name: string;
  mode: number;
  uid: number;
  gid: number;
  mtime: number;
  type: string;
  data: Buffer;
}

/** A ustar reader written apart from the writer, so that the two do not share a misreading of the format. */
function readTar(tar: Buffer): Entry[] {
  const entries: Entry[] = [];
  const field = (block: Buffer, at: number, len: number) =>
    block
      .subarray(at, at + len)
      .toString('utf8')
      .split('\0')[0]!;
  const octal = (block: Buffer, at: number, len: number) => parseInt(field(block, at, len).trim() || '0', 8);
  let at = 0;
  while (at + 512 <= tar.length) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : header[i]!;
    assert.equal(octal(header, 148, 8), sum, `the header checksum at ${at}`);
    assert.equal(field(header, 257, 6), 'ustar');
    const prefix = field(header, 345, 155);
    const base = field(header, 0, 100);
    const size = octal(header, 124, 12);
    entries.push({
      name: prefix ? `${prefix}/${base}` : base,
      mode: octal(header, 100, 8),
      uid: octal(header, 108, 8),
      gid: octal(header, 116, 8),
      mtime: octal(header, 136, 12),
      type: field(header, 156, 1),
      data: tar.subarray(at + 512, at + 512 + size),
    });
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return entries;
}

const sha256 = (data: Buffer) => `sha256:${createHash('sha256').update(data).digest('hex')}`;

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  platform?: { architecture: string; os: string };
}

/** The archive's files by name, and its index, manifest and config read through their digests. */
function openLayout(archive: Buffer) {
  const files = new Map(readTar(archive).map((e) => [e.name, e]));
  const blob = (d: Descriptor) => {
    const entry = files.get(`blobs/sha256/${d.digest.replace(/^sha256:/, '')}`);
    assert.ok(entry, `a blob for ${d.digest}`);
    assert.equal(sha256(entry.data), d.digest, `the blob of ${d.digest} has that digest`);
    assert.equal(entry.data.length, d.size, `the blob of ${d.digest} has the size its descriptor gives`);
    return entry.data;
  };
  const index = JSON.parse(files.get('index.json')!.data.toString()) as { mediaType: string; manifests: Descriptor[] };
  assert.equal(index.manifests.length, 1);
  const manifestDescriptor = index.manifests[0]!;
  const manifest = JSON.parse(blob(manifestDescriptor).toString()) as {
    mediaType: string;
    config: Descriptor;
    layers: Descriptor[];
  };
  const config = JSON.parse(blob(manifest.config).toString()) as {
    architecture: string;
    os: string;
    config: Record<string, unknown>;
    rootfs: { type: string; diff_ids: string[] };
  };
  const layers = manifest.layers.map((d) => gunzipSync(blob(d)));
  return { files, index, manifestDescriptor, manifest, config, layers };
}

describe('tools/images/oci-image: an OCI image layout archive for `ctr images import`', () => {
  const spec = (): OciImageSpec => ({
    ref: 'lws-temporal.local/model-server:dev',
    arch: 'amd64',
    layers: [
      [
        { pathInImage: '/usr/bin/model-server', contents: Buffer.from('#!binary\n'.repeat(100)), mode: 0o755 },
        { pathInImage: 'etc/model/config.json', contents: Buffer.from('{}\n'), mode: 0o640 },
      ],
      [{ pathInImage: '/data/weights.bin', contents: Buffer.alloc(700, 7), mode: 0o600 }],
    ],
    config: {
      entrypoint: ['/usr/bin/model-server'],
      cmd: ['--serve'],
      env: ['PORT=8080', 'A=1'],
      user: '65532:65532',
      workingDir: '/data',
      labels: { b: '2', a: '1' },
    },
  });

  it('gives the same bytes for the same inputs, and other bytes for another file mode', async () => {
    const first = await buildOciImage(spec());
    const second = await buildOciImage(spec());
    assert.ok(first.archive.equals(second.archive), 'two builds of the same spec are byte for byte the same');
    assert.equal(first.manifestDigest, second.manifestDigest);
    const changed = spec();
    changed.layers[1]![0]!.mode = 0o644;
    assert.notEqual((await buildOciImage(changed)).manifestDigest, first.manifestDigest);
  });

  it('writes a layout whose index, manifest, config and layers match their digests and sizes', async () => {
    const image = await buildOciImage(spec());
    const { files, index, manifestDescriptor, manifest, config, layers } = openLayout(image.archive);
    assert.deepEqual(JSON.parse(files.get('oci-layout')!.data.toString()), { imageLayoutVersion: '1.0.0' });
    assert.equal(index.mediaType, MEDIA_TYPES.index);
    assert.equal(manifestDescriptor.mediaType, MEDIA_TYPES.manifest);
    assert.equal(manifestDescriptor.digest, image.manifestDigest);
    assert.deepEqual(manifestDescriptor.platform, { architecture: 'amd64', os: 'linux' });
    assert.equal(manifest.mediaType, MEDIA_TYPES.manifest);
    assert.equal(manifest.config.mediaType, MEDIA_TYPES.config);
    assert.equal(manifest.config.digest, image.configDigest);
    assert.ok(manifest.layers.every((l) => l.mediaType === MEDIA_TYPES.layer));
    assert.deepEqual(
      config.rootfs,
      { type: 'layers', diff_ids: layers.map(sha256) },
      'diff_ids are the uncompressed layers',
    );
    assert.deepEqual(image.diffIds, config.rootfs.diff_ids);
    assert.equal(config.architecture, 'amd64');
    assert.equal(config.os, 'linux');
    assert.deepEqual(config.config, {
      User: '65532:65532',
      Env: ['PORT=8080', 'A=1'],
      Entrypoint: ['/usr/bin/model-server'],
      Cmd: ['--serve'],
      WorkingDir: '/data',
      Labels: { a: '1', b: '2' },
    });
    // Every blob is referenced: nothing in the archive that the import would have to skip.
    const blobs = [...files.values()].filter((e) => e.type === '0' && e.name.startsWith('blobs/sha256/'));
    assert.equal(blobs.length, 2 + manifest.layers.length);
  });

  it("lists each layer's files with their modes and implied folders, owned by 0:0 at mtime 0, sorted", async () => {
    const { layers } = openLayout((await buildOciImage(spec())).archive);
    const listing = (layer: Buffer) =>
      readTar(layer).map((e) => [e.name, e.type, e.mode.toString(8), e.uid, e.gid, e.mtime, e.data.length]);
    assert.deepEqual(listing(layers[0]!), [
      ['etc/', '5', '755', 0, 0, 0, 0],
      ['etc/model/', '5', '755', 0, 0, 0, 0],
      ['etc/model/config.json', '0', '640', 0, 0, 0, 3],
      ['usr/', '5', '755', 0, 0, 0, 0],
      ['usr/bin/', '5', '755', 0, 0, 0, 0],
      ['usr/bin/model-server', '0', '755', 0, 0, 0, 900],
    ]);
    assert.deepEqual(listing(layers[1]!), [
      ['data/', '5', '755', 0, 0, 0, 0],
      ['data/weights.bin', '0', '600', 0, 0, 0, 700],
    ]);
    assert.ok(readTar(layers[1]!)[1]!.data.equals(Buffer.alloc(700, 7)));
  });

  it('writes tars that GNU tar reads as they were meant', async function () {
    const { layers } = openLayout((await buildOciImage(spec())).archive);
    const dir = await mkdtemp(join(tmpdir(), 'oci-image-test-'));
    try {
      await writeFile(join(dir, 'layer.tar'), layers[0]!);
      let listing: string;
      try {
        listing = execFileSync('tar', ['--numeric-owner', '--utc', '-tvf', join(dir, 'layer.tar')], {
          encoding: 'utf8',
        });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') this.skip();
        throw err;
      }
      const lines = listing.trim().split('\n');
      assert.deepEqual(
        lines.map((l) => l.split(/\s+/)),
        [
          ['drwxr-xr-x', '0/0', '0', '1970-01-01', '00:00', 'etc/'],
          ['drwxr-xr-x', '0/0', '0', '1970-01-01', '00:00', 'etc/model/'],
          ['-rw-r-----', '0/0', '3', '1970-01-01', '00:00', 'etc/model/config.json'],
          ['drwxr-xr-x', '0/0', '0', '1970-01-01', '00:00', 'usr/'],
          ['drwxr-xr-x', '0/0', '0', '1970-01-01', '00:00', 'usr/bin/'],
          ['-rwxr-xr-x', '0/0', '900', '1970-01-01', '00:00', 'usr/bin/model-server'],
        ],
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads a file from its source path as from a buffer', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'oci-image-test-'));
    try {
      await writeFile(join(dir, 'bin'), 'same bytes');
      const fromPath = await buildOciImage({
        ...spec(),
        layers: [[{ pathInImage: '/bin', sourcePath: join(dir, 'bin'), mode: 0o755 }]],
      });
      const fromBuffer = await buildOciImage({
        ...spec(),
        layers: [[{ pathInImage: '/bin', contents: Buffer.from('same bytes'), mode: 0o755 }]],
      });
      assert.ok(fromPath.archive.equals(fromBuffer.archive));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("annotates the manifest with the full reference (containerd's name) and the tag (OCI's ref.name)", async () => {
    const { manifestDescriptor } = openLayout((await buildOciImage(spec())).archive);
    assert.deepEqual(manifestDescriptor.annotations, {
      [CONTAINERD_IMAGE_NAME]: 'lws-temporal.local/model-server:dev',
      [OCI_REF_NAME]: 'dev',
    });
  });

  it('splits references into repository and tag, and refuses what is no reference', () => {
    assert.deepEqual(parseImageRef('lws-temporal.local/pause:0123abcd'), {
      repository: 'lws-temporal.local/pause',
      tag: '0123abcd',
    });
    assert.deepEqual(parseImageRef('localhost:5000/a/b'), { repository: 'localhost:5000/a/b', tag: 'latest' });
    assert.deepEqual(parseImageRef('busybox:1.36'), { repository: 'busybox', tag: '1.36' });
    assert.throws(() => parseImageRef('lws-temporal.local/Model:dev'), /no repository name/);
    assert.throws(() => parseImageRef('a/b@sha256:00'), /digest reference/);
    assert.throws(() => parseImageRef('a/b:'), /no tag/);
  });

  it('refuses paths outside the image, a file listed twice, a file that is also a folder, and bad modes', async () => {
    const withFiles = (files: OciImageSpec['layers'][number]): OciImageSpec => ({ ...spec(), layers: [files] });
    const file = (pathInImage: string, mode = 0o644) => ({ pathInImage, contents: Buffer.from('x'), mode });
    await assert.rejects(buildOciImage(withFiles([file('/../etc/passwd')])), /no file path in the image/);
    await assert.rejects(buildOciImage(withFiles([file('/a//b')])), /no file path in the image/);
    await assert.rejects(buildOciImage(withFiles([file('/a'), file('a')])), /listed twice/);
    await assert.rejects(buildOciImage(withFiles([file('/a/b'), file('/a')])), /a folder of another file/);
    await assert.rejects(buildOciImage(withFiles([file('/a'), file('/a/b')])), /is a file and a folder/);
    await assert.rejects(buildOciImage(withFiles([file('/a', 0o10000)])), /mode/);
    await assert.rejects(buildOciImage({ ...spec(), layers: [] }), /at least one layer/);
  });

  it('keeps long paths in the ustar prefix field, and refuses one ustar cannot hold', async () => {
    const long = `/${'d'.repeat(90)}/${'e'.repeat(90)}/file`;
    const { layers } = openLayout(
      (await buildOciImage({ ...spec(), layers: [[{ pathInImage: long, contents: Buffer.from('x'), mode: 0o644 }]] }))
        .archive,
    );
    assert.ok(readTar(layers[0]!).some((e) => e.name === long.slice(1)));
    const tooLong = `/${'f'.repeat(120)}`;
    await assert.rejects(
      buildOciImage({ ...spec(), layers: [[{ pathInImage: tooLong, contents: Buffer.from('x'), mode: 0o644 }]] }),
      /too long for a ustar header/,
    );
  });

  it("maps Node's architectures to OCI's, and refuses one it does not know", () => {
    assert.equal(ociArch('x64'), 'amd64');
    assert.equal(ociArch('arm64'), 'arm64');
    assert.throws(() => ociArch('ia32'), /no OCI architecture known/);
  });
});
