import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'mocha';
import { followApiKeyFile } from '../../src/config/api-key-file.js';
import { ConfigError, connectionOptions, temporalConfigFromEnv } from '../../src/config/temporal.js';
import { silentLogger } from '../../src/log.js';

describe('config: the API key from a file (TEMPORAL_API_KEY_PATH)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lws-api-key-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('reads the key without its trailing newline, and implies TLS as TEMPORAL_API_KEY does', () => {
    const path = file('key', 'secret-1\n');
    const config = temporalConfigFromEnv({ TEMPORAL_API_KEY_PATH: path }, 'c1');
    assert.equal(config.apiKey, 'secret-1');
    assert.equal(config.apiKeyPath, path);
    assert.deepEqual(connectionOptions(config).tls, {
      serverNameOverride: undefined,
      serverRootCACertificate: undefined,
      clientCertPair: undefined,
    });
  });

  it('no file (an optional Secret not created): no key, no TLS', () => {
    const config = temporalConfigFromEnv({ TEMPORAL_API_KEY_PATH: join(dir, 'absent') }, 'c1');
    assert.equal(config.apiKey, undefined);
    assert.equal(config.tls, undefined);
  });

  it('refuses both TEMPORAL_API_KEY and TEMPORAL_API_KEY_PATH, naming both', () => {
    assert.throws(
      () => temporalConfigFromEnv({ TEMPORAL_API_KEY: 'a', TEMPORAL_API_KEY_PATH: file('both', 'b') }, 'c1'),
      (err: unknown) => err instanceof ConfigError && /TEMPORAL_API_KEY and TEMPORAL_API_KEY_PATH/.test(err.message),
    );
  });

  it('gives a rotated key to the connection once, and keeps the current one while the file is unreadable', async () => {
    const path = file('rotating', 'old');
    const applied: string[] = [];
    const follower = followApiKeyFile({
      path,
      current: 'old',
      apply: (k) => applied.push(k),
      log: silentLogger,
      intervalMs: 10,
    });
    try {
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(applied, [], 'unchanged: nothing applied');
      writeFileSync(path, 'new\n');
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(applied, ['new']);
      rmSync(path);
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(applied, ['new'], 'a file gone mid-rotation changes nothing');
      writeFileSync(path, 'newer');
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(applied, ['new', 'newer']);
    } finally {
      follower.stop();
    }
  });
});
