// The optional payload codec from the environment. LWS_PAYLOAD_KEYS_DIR: a folder with one file per key (its name
// the key ID, its content 32 bytes in base64), as a Kubernetes Secret mounts; LWS_PAYLOAD_KEY_ID: the key that
// encrypts. Keys without a key ID only decrypt (a key retired from encryption, or encryption turned off while
// histories written with it remain).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PayloadCodec } from '@temporalio/common';
import { AesGcmCodec } from '../codec/aes-gcm-codec.js';
import { ConfigError } from './temporal.js';

export function payloadCodecsFromEnv(env: NodeJS.ProcessEnv = process.env): PayloadCodec[] {
  const dir = env.LWS_PAYLOAD_KEYS_DIR || undefined;
  const encryptWith = env.LWS_PAYLOAD_KEY_ID || undefined;
  if (!dir) {
    if (encryptWith) {
      throw new ConfigError(`LWS_PAYLOAD_KEY_ID=${encryptWith} needs LWS_PAYLOAD_KEYS_DIR, the folder of the keys`);
    }
    return [];
  }
  const keys = new Map<string, Buffer>();
  // A Secret's volume also holds `..data` links and dot-folders: only plain key names count.
  for (const name of existsSync(dir) ? readdirSync(dir).filter((n) => /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(n)) : []) {
    const key = Buffer.from(readFileSync(join(dir, name), 'utf8').trim(), 'base64');
    if (key.length !== 32) {
      throw new ConfigError(
        `LWS_PAYLOAD_KEYS_DIR=${dir}: key ${name} is ${key.length} bytes; each file must hold 32 bytes in base64 (openssl rand -base64 32)`,
      );
    }
    keys.set(name, key);
  }
  if (encryptWith && !keys.has(encryptWith)) {
    throw new ConfigError(
      `LWS_PAYLOAD_KEY_ID=${encryptWith}: no such key in LWS_PAYLOAD_KEYS_DIR=${dir} (keys: ${[...keys.keys()].join(', ') || 'none'})`,
    );
  }
  if (keys.size === 0) return [];
  return [new AesGcmCodec({ keys, ...(encryptWith ? { encryptWith } : {}) })];
}
