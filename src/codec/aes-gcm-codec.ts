// An optional payload codec: every payload the worker, the trigger and the CLI exchange with Temporal is encrypted
// with AES-256-GCM, so a history shows names and numbers only to those who hold the key. Each payload names its key,
// so keys rotate: a new key encrypts, the older ones still decrypt the histories written with them.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID_METADATA = 'encryption-key-id';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface PayloadKeys {
  /** Key ID -> 32 bytes. */
  keys: ReadonlyMap<string, Buffer>;
  /** The key new payloads are encrypted with; undefined: decrypt only. */
  encryptWith?: string;
}

const text = (value: string) => new TextEncoder().encode(value);
const b64 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('base64');

/** A payload as bytes to encrypt: its metadata and data, base64 in JSON (no protobuf needed). */
function serialize(p: Payload): Buffer {
  const metadata = Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, b64(v)]));
  return Buffer.from(JSON.stringify({ metadata, data: b64(p.data) }));
}

function deserialize(bytes: Buffer): Payload {
  const parsed = JSON.parse(bytes.toString('utf8')) as { metadata: Record<string, string>; data: string };
  return {
    metadata: Object.fromEntries(
      Object.entries(parsed.metadata).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))]),
    ),
    data: new Uint8Array(Buffer.from(parsed.data, 'base64')),
  };
}

export class AesGcmCodec implements PayloadCodec {
  constructor(private readonly keys: PayloadKeys) {
    for (const [id, key] of keys.keys) {
      if (key.length !== 32) throw new Error(`payload key ${id}: ${key.length} bytes, AES-256 needs 32`);
    }
    if (keys.encryptWith !== undefined && !keys.keys.has(keys.encryptWith)) {
      throw new Error(`payload key ${keys.encryptWith} is not among the keys (${[...keys.keys.keys()].join(', ')})`);
    }
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const id = this.keys.encryptWith;
    if (id === undefined) return payloads;
    const key = this.keys.keys.get(id)!;
    return payloads.map((p) => {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const sealed = Buffer.concat([iv, cipher.update(serialize(p)), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: { encoding: text(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: text(id) },
        data: new Uint8Array(sealed),
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => {
      const encoding = p.metadata?.['encoding'];
      if (!encoding || Buffer.from(encoding).toString() !== ENCRYPTED_ENCODING) return p;
      const id = Buffer.from(p.metadata?.[KEY_ID_METADATA] ?? new Uint8Array()).toString();
      const key = this.keys.keys.get(id);
      if (!key) {
        throw new Error(
          `a payload is encrypted with key ${id}, which this process does not have: add it to LWS_PAYLOAD_KEYS_DIR`,
        );
      }
      const sealed = Buffer.from(p.data ?? new Uint8Array());
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      return deserialize(
        Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]),
      );
    });
  }
}
