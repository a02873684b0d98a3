import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { AesGcmCodec, ENCRYPTED_ENCODING } from '../../src/codec/aes-gcm-codec.js';
import { serveCodec } from '../../src/codec/codec-server.js';
import { payloadCodecsFromEnv } from '../../src/config/payload-codec.js';
import { createLogger } from '../../src/log.js';

const k1 = randomBytes(32);
const k2 = randomBytes(32);
const secret = { env: [{ name: 'HF_TOKEN', value: 'hf_secret_123' }] };
const plain = (): Payload => defaultPayloadConverter.toPayload(secret)!;
const bytes = (p: Payload) => Buffer.from(p.data ?? new Uint8Array()).toString('latin1');

describe('AesGcmCodec: payloads encrypted with AES-256-GCM', () => {
  it('encrypts so the value is unreadable, and decrypts it back exactly', async () => {
    const codec = new AesGcmCodec({ keys: new Map([['k1', k1]]), encryptWith: 'k1' });
    const [sealed] = await codec.encode([plain()]);
    assert.equal(Buffer.from(sealed!.metadata!['encoding']!).toString(), ENCRYPTED_ENCODING);
    assert.doesNotMatch(bytes(sealed!), /hf_secret_123|HF_TOKEN/);
    const [opened] = await codec.decode([sealed!]);
    assert.deepEqual(defaultPayloadConverter.fromPayload(opened!), secret);
  });

  it('rotates keys: a payload sealed with the old key still opens once a new key encrypts', async () => {
    const old = new AesGcmCodec({ keys: new Map([['k1', k1]]), encryptWith: 'k1' });
    const [sealedOld] = await old.encode([plain()]);
    const rotated = new AesGcmCodec({
      keys: new Map([
        ['k1', k1],
        ['k2', k2],
      ]),
      encryptWith: 'k2',
    });
    const [sealedNew] = await rotated.encode([plain()]);
    assert.equal(Buffer.from(sealedNew!.metadata!['encryption-key-id']!).toString(), 'k2');
    for (const p of [sealedOld!, sealedNew!]) {
      assert.deepEqual(defaultPayloadConverter.fromPayload((await rotated.decode([p]))[0]!), secret);
    }
  });

  it('without a key to encrypt with, leaves new payloads as they are and still decrypts', async () => {
    const [sealed] = await new AesGcmCodec({ keys: new Map([['k1', k1]]), encryptWith: 'k1' }).encode([plain()]);
    const decryptOnly = new AesGcmCodec({ keys: new Map([['k1', k1]]) });
    assert.deepEqual(await decryptOnly.encode([plain()]), [plain()]);
    assert.deepEqual(defaultPayloadConverter.fromPayload((await decryptOnly.decode([sealed!]))[0]!), secret);
  });

  it('refuses a tampered payload and names a missing key', async () => {
    const codec = new AesGcmCodec({ keys: new Map([['k1', k1]]), encryptWith: 'k1' });
    const [sealed] = await codec.encode([plain()]);
    const tampered = { ...sealed!, data: new Uint8Array(sealed!.data!) };
    tampered.data[20] = tampered.data[20]! ^ 1;
    await assert.rejects(codec.decode([tampered]));
    await assert.rejects(
      new AesGcmCodec({ keys: new Map([['k2', k2]]) }).decode([sealed!]),
      /key k1.*LWS_PAYLOAD_KEYS_DIR/,
    );
  });
});

describe('payloadCodecsFromEnv: the keys of LWS_PAYLOAD_KEYS_DIR', () => {
  const keysDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'lws-keys-'));
    writeFileSync(join(dir, 'k1'), k1.toString('base64') + '\n');
    writeFileSync(join(dir, 'k2'), k2.toString('base64'));
    return dir;
  };
  const cases: { name: string; env: (dir: string) => NodeJS.ProcessEnv; codecs?: number; error?: RegExp }[] = [
    { name: 'no variable: no codec', env: () => ({}), codecs: 0 },
    {
      name: 'keys and a key ID: one codec',
      env: (dir) => ({ LWS_PAYLOAD_KEYS_DIR: dir, LWS_PAYLOAD_KEY_ID: 'k2' }),
      codecs: 1,
    },
    { name: 'keys only: a codec that decrypts', env: (dir) => ({ LWS_PAYLOAD_KEYS_DIR: dir }), codecs: 1 },
    {
      name: 'a key ID without the folder',
      env: () => ({ LWS_PAYLOAD_KEY_ID: 'k1' }),
      error: /LWS_PAYLOAD_KEY_ID=k1 needs LWS_PAYLOAD_KEYS_DIR/,
    },
    {
      name: 'a key ID not in the folder',
      env: (dir) => ({ LWS_PAYLOAD_KEYS_DIR: dir, LWS_PAYLOAD_KEY_ID: 'k9' }),
      error: /LWS_PAYLOAD_KEY_ID=k9: no such key .*keys: k1, k2/,
    },
    {
      name: 'a key of the wrong size',
      env: (dir) => {
        writeFileSync(join(dir, 'short'), randomBytes(16).toString('base64'));
        return { LWS_PAYLOAD_KEYS_DIR: dir };
      },
      error: /key short is 16 bytes; each file must hold 32 bytes in base64/,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const env = c.env(keysDir());
      if (c.error) assert.throws(() => payloadCodecsFromEnv(env), c.error);
      else assert.equal(payloadCodecsFromEnv(env).length, c.codecs);
    });
  }
});

describe('serveCodec: the codec server the Web UI calls', () => {
  it('decodes and encodes protobuf-JSON payloads, with CORS only for the origins it is told', async () => {
    const codec = new AesGcmCodec({ keys: new Map([['k1', k1]]), encryptWith: 'k1' });
    const server = await serveCodec({
      codecs: [codec],
      port: 0,
      allowOrigins: ['http://ui.test'],
      log: createLogger('codec-test'),
    });
    try {
      const [sealed] = await codec.encode([plain()]);
      const json = (p: Payload) => ({
        metadata: Object.fromEntries(
          Object.entries(p.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
        ),
        data: Buffer.from(p.data!).toString('base64'),
      });
      const res = await fetch(`${server.url}/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: 'http://ui.test', 'x-namespace': 'default' },
        body: JSON.stringify({ payloads: [json(sealed!)] }),
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('access-control-allow-origin'), 'http://ui.test');
      const { payloads } = (await res.json()) as { payloads: { data: string }[] };
      assert.deepEqual(JSON.parse(Buffer.from(payloads[0]!.data, 'base64').toString()), secret);
      const other = await fetch(`${server.url}/decode`, {
        method: 'OPTIONS',
        headers: { origin: 'http://evil.test' },
      });
      assert.equal(other.headers.get('access-control-allow-origin'), null);
      assert.equal((await fetch(`${server.url}/other`, { method: 'POST' })).status, 404);
    } finally {
      await server.close();
    }
  });
});
