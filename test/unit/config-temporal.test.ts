import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { normalizeTlsConfig } from '@temporalio/common/lib/internal-non-workflow/tls-config.js';
import { after, before, describe, it } from 'mocha';
import {
  ConfigError,
  connectionOptions,
  temporalConfigFromEnv as temporalConfigOf,
  workerVersioningFromEnv as workerVersioningOf,
  type SetCurrentPolicy,
} from '../../src/config/temporal.js';

type Env = Record<string, string | undefined>;

/** The controller of cluster c1, and its task queue as the worker resolves it. */
const temporalConfigFromEnv = (env: Env) => temporalConfigOf(env, 'c1');
const workerVersioningFromEnv = (env: Env, defaults?: { setCurrent?: SetCurrentPolicy }) =>
  workerVersioningOf(env, temporalConfigFromEnv(env).taskQueue, defaults);

/** Asserts that the environment is rejected with a ConfigError whose message names every one of `names`. */
function assertRejected(env: Env, ...names: string[]): void {
  assertRejectedBy(temporalConfigFromEnv, env, ...names);
}

function assertRejectedBy(read: (env: Env) => unknown, env: Env, ...names: string[]): void {
  assert.throws(
    () => read(env),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
      for (const name of names) assert.ok(err.message.includes(name), `"${err.message}" does not name ${name}`);
      return true;
    },
  );
}

describe('config/temporal', () => {
  let dir = '';
  let certPath = '';
  let keyPath = '';
  let caPath = '';
  let missing = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'lws-temporal-config-'));
    certPath = join(dir, 'client.crt');
    keyPath = join(dir, 'client.key');
    caPath = join(dir, 'ca.crt');
    missing = join(dir, 'does-not-exist.pem');
    writeFileSync(certPath, 'CERT');
    writeFileSync(keyPath, 'KEY');
    writeFileSync(caPath, 'CA');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  describe('temporalConfigFromEnv', () => {
    it('defaults to localhost:7233, namespace default, task queue lws-temporal-<cluster>, no TLS', () => {
      assert.deepEqual(temporalConfigFromEnv({}), {
        address: 'localhost:7233',
        namespace: 'default',
        cluster: 'c1',
        taskQueue: 'lws-temporal-c1',
        apiKey: undefined,
        tls: undefined,
      });
    });

    // Two controllers on different task queues sharing one deployment: the server refuses to make the second current.
    it('gives each cluster its own default task queue and deployment', () => {
      assert.equal(temporalConfigOf({}, 'c2').taskQueue, 'lws-temporal-c2');
      const config = workerVersioningOf({}, temporalConfigOf({}, 'c2').taskQueue);
      assert.equal(config.enabled && config.deploymentName, 'lws-temporal-c2');
    });

    for (const [taskQueue, deploymentName] of [
      ['lws-temporal', 'lws-temporal'],
      ['lws-staging', 'lws-staging'],
      ['lws.prod', 'lws-prod'],
    ]) {
      it(`names the deployment after TEMPORAL_TASK_QUEUE=${taskQueue}: ${deploymentName}`, () => {
        const config = workerVersioningFromEnv({ TEMPORAL_TASK_QUEUE: taskQueue });
        assert.equal(config.enabled && config.deploymentName, deploymentName);
      });
    }

    it('takes TEMPORAL_WORKER_DEPLOYMENT over the task queue', () => {
      const config = workerVersioningFromEnv({ TEMPORAL_TASK_QUEUE: 'lws-a', TEMPORAL_WORKER_DEPLOYMENT: 'lws-b' });
      assert.equal(config.enabled && config.deploymentName, 'lws-b');
    });

    it('names the task queue when the deployment name it gives is refused', () => {
      assert.throws(
        () => workerVersioningFromEnv({ TEMPORAL_TASK_QUEUE: 'q'.repeat(256) }),
        /the task queue q+ \(the deployment name\): a deployment name is 256 characters long; at most 255/,
      );
    });

    it('treats empty variables as unset', () => {
      const config = temporalConfigFromEnv({
        TEMPORAL_ADDRESS: '',
        TEMPORAL_NAMESPACE: '',
        TEMPORAL_TASK_QUEUE: '',
        TEMPORAL_API_KEY: '',
        TEMPORAL_TLS: '',
        TEMPORAL_TLS_CERT_PATH: '',
        TEMPORAL_TLS_KEY_PATH: '',
        TEMPORAL_TLS_CA_PATH: '',
      });
      assert.deepEqual(config, temporalConfigFromEnv({}));
    });

    it('reads address, namespace and task queue', () => {
      const config = temporalConfigFromEnv({
        TEMPORAL_ADDRESS: 'temporal.example.com:443',
        TEMPORAL_NAMESPACE: 'prod',
        TEMPORAL_TASK_QUEUE: 'lws-prod',
      });
      assert.equal(config.address, 'temporal.example.com:443');
      assert.equal(config.namespace, 'prod');
      assert.equal(config.taskQueue, 'lws-prod');
    });

    for (const address of ['localhost:7233', '10.0.0.7:7233', 'my-ns.a1b2c.tmprl.cloud:7233', 'temporal-frontend:1']) {
      it(`accepts TEMPORAL_ADDRESS=${address}`, () => {
        assert.equal(temporalConfigFromEnv({ TEMPORAL_ADDRESS: address }).address, address);
      });
    }

    for (const address of [
      'localhost',
      'temporal.example.com',
      'localhost:',
      ':7233',
      'http://localhost:7233',
      'localhost:port',
      'local host:7233',
      'localhost:7233 ',
      'localhost:123456',
    ]) {
      it(`rejects TEMPORAL_ADDRESS=${JSON.stringify(address)} naming TEMPORAL_ADDRESS`, () => {
        assertRejected({ TEMPORAL_ADDRESS: address }, 'TEMPORAL_ADDRESS', address.trim());
      });
    }

    // The port must be a real one (1-65535): a wrong one fails at startup naming TEMPORAL_ADDRESS, not at connect time.
    for (const address of ['localhost:99999', 'localhost:65536', 'localhost:0']) {
      it(`rejects TEMPORAL_ADDRESS=${address} (port out of range)`, () => {
        assertRejected({ TEMPORAL_ADDRESS: address }, 'TEMPORAL_ADDRESS');
      });
    }

    // [TEMPORAL_TLS, TLS on]
    const flags: Array<[string, boolean]> = [
      ['true', true],
      ['TRUE', true],
      ['True', true],
      ['1', true],
      ['false', false],
      ['FALSE', false],
      ['0', false],
      ['', false],
    ];
    for (const [flag, on] of flags) {
      it(`turns TLS ${on ? 'on' : 'off'} for TEMPORAL_TLS=${JSON.stringify(flag)}`, () => {
        const config = temporalConfigFromEnv({ TEMPORAL_TLS: flag });
        assert.deepEqual(
          config.tls,
          on ? { serverName: undefined, ca: undefined, cert: undefined, key: undefined } : undefined,
        );
      });
    }

    for (const flag of ['maybe', 'yes', 'on', 'off', '2', ' true']) {
      it(`rejects TEMPORAL_TLS=${JSON.stringify(flag)} naming TEMPORAL_TLS`, () => {
        assertRejected({ TEMPORAL_TLS: flag }, 'TEMPORAL_TLS', flag);
      });
    }

    it('rejects a client certificate without a key, naming both variables', () => {
      assertRejected({ TEMPORAL_TLS_CERT_PATH: certPath }, 'TEMPORAL_TLS_CERT_PATH', 'TEMPORAL_TLS_KEY_PATH');
    });

    it('rejects a client key without a certificate, naming both variables', () => {
      assertRejected({ TEMPORAL_TLS_KEY_PATH: keyPath }, 'TEMPORAL_TLS_CERT_PATH', 'TEMPORAL_TLS_KEY_PATH');
    });

    for (const variable of ['TEMPORAL_TLS_CERT_PATH', 'TEMPORAL_TLS_KEY_PATH', 'TEMPORAL_TLS_CA_PATH']) {
      it(`rejects a missing file in ${variable}, naming the variable and the path`, () => {
        const env: Env = { TEMPORAL_TLS_CERT_PATH: certPath, TEMPORAL_TLS_KEY_PATH: keyPath, [variable]: missing };
        assertRejected(env, variable, missing);
      });
    }

    it('rejects a directory given as a file', () => {
      assertRejected({ TEMPORAL_TLS_CA_PATH: dir }, 'TEMPORAL_TLS_CA_PATH', dir);
    });

    it('reads certificate, key and CA files into the TLS settings (mTLS implies TLS)', () => {
      const config = temporalConfigFromEnv({
        TEMPORAL_TLS_CERT_PATH: certPath,
        TEMPORAL_TLS_KEY_PATH: keyPath,
        TEMPORAL_TLS_CA_PATH: caPath,
        TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
      });
      assert.equal(config.tls?.cert?.toString(), 'CERT');
      assert.equal(config.tls?.key?.toString(), 'KEY');
      assert.equal(config.tls?.ca?.toString(), 'CA');
      assert.equal(config.tls?.serverName, 'temporal.internal');
    });

    // [what, env, TLS on]
    const implied: Array<[string, () => Env, boolean]> = [
      ['an API key', () => ({ TEMPORAL_API_KEY: 'secret' }), true],
      ['a CA file', () => ({ TEMPORAL_TLS_CA_PATH: caPath }), true],
      ['a server name alone', () => ({ TEMPORAL_TLS_SERVER_NAME: 'x' }), false],
      ['an API key and TEMPORAL_TLS=false', () => ({ TEMPORAL_API_KEY: 'secret', TEMPORAL_TLS: 'false' }), false],
      ['an API key and TEMPORAL_TLS=0', () => ({ TEMPORAL_API_KEY: 'secret', TEMPORAL_TLS: '0' }), false],
      ['a CA file and TEMPORAL_TLS=false', () => ({ TEMPORAL_TLS_CA_PATH: caPath, TEMPORAL_TLS: 'false' }), false],
      ['an API key and TEMPORAL_TLS=true', () => ({ TEMPORAL_API_KEY: 'secret', TEMPORAL_TLS: 'true' }), true],
    ];
    for (const [what, env, on] of implied) {
      it(`TLS is ${on ? 'on' : 'off'} with ${what}`, () => {
        assert.equal(temporalConfigFromEnv(env()).tls !== undefined, on);
      });
    }

    it('keeps the API key', () => {
      assert.equal(temporalConfigFromEnv({ TEMPORAL_API_KEY: 'secret' }).apiKey, 'secret');
      assert.equal(temporalConfigFromEnv({ TEMPORAL_API_KEY: 'secret', TEMPORAL_TLS: 'false' }).apiKey, 'secret');
    });
  });

  describe('connectionOptions', () => {
    it('passes address and no TLS by default', () => {
      assert.deepEqual(connectionOptions(temporalConfigFromEnv({})), {
        address: 'localhost:7233',
        apiKey: undefined,
        tls: false,
      });
    });

    it('maps mTLS files, CA and server name to the SDK TLS options', () => {
      const options = connectionOptions(
        temporalConfigFromEnv({
          TEMPORAL_ADDRESS: 'temporal.internal:7233',
          TEMPORAL_TLS_CERT_PATH: certPath,
          TEMPORAL_TLS_KEY_PATH: keyPath,
          TEMPORAL_TLS_CA_PATH: caPath,
          TEMPORAL_TLS_SERVER_NAME: 'frontend',
        }),
      );
      assert.equal(options.address, 'temporal.internal:7233');
      assert.deepEqual(options.tls, {
        serverNameOverride: 'frontend',
        serverRootCACertificate: Buffer.from('CA'),
        clientCertPair: { crt: Buffer.from('CERT'), key: Buffer.from('KEY') },
      });
    });

    it('gives plain server TLS (no client pair) for TEMPORAL_TLS=true', () => {
      assert.deepEqual(connectionOptions(temporalConfigFromEnv({ TEMPORAL_TLS: 'true' })).tls, {
        serverNameOverride: undefined,
        serverRootCACertificate: undefined,
        clientCertPair: undefined,
      });
    });

    it('passes the API key with TLS on', () => {
      const options = connectionOptions(temporalConfigFromEnv({ TEMPORAL_API_KEY: 'secret' }));
      assert.equal(options.apiKey, 'secret');
      assert.ok(options.tls);
      // As the SDK reads it (Connection and NativeConnection both normalise tls this way).
      assert.ok(normalizeTlsConfig(options.tls, options.apiKey));
    });

    it('is off as the SDK reads it when TLS is off and there is no API key', () => {
      const options = connectionOptions(temporalConfigFromEnv({ TEMPORAL_TLS: 'false' }));
      assert.equal(normalizeTlsConfig(options.tls, options.apiKey), undefined);
    });

    // With an API key the SDK turns an undefined tls into TLS on; an explicit TEMPORAL_TLS=false must stay off.
    it('keeps TLS off as the SDK reads it for an API key with TEMPORAL_TLS=false', () => {
      const options = connectionOptions(temporalConfigFromEnv({ TEMPORAL_API_KEY: 'secret', TEMPORAL_TLS: 'false' }));
      assert.equal(options.apiKey, 'secret');
      assert.equal(normalizeTlsConfig(options.tls, options.apiKey), undefined);
    });
  });

  describe('workerVersioningFromEnv', () => {
    it('defaults to versioning on, deployment lws-temporal-<cluster>, the build ID from the bundle, set current if new', () => {
      assert.deepEqual(workerVersioningFromEnv({}), {
        enabled: true,
        deploymentName: 'lws-temporal-c1',
        buildId: undefined,
        setCurrent: 'if-new',
      });
    });

    it('treats empty variables as unset', () => {
      const env = {
        TEMPORAL_WORKER_VERSIONING: '',
        TEMPORAL_WORKER_DEPLOYMENT: '',
        TEMPORAL_WORKER_BUILD_ID: '',
        TEMPORAL_WORKER_SET_CURRENT: '',
      };
      assert.deepEqual(workerVersioningFromEnv(env), workerVersioningFromEnv({}));
    });

    it('reads the deployment name, the build ID and the set-current policy', () => {
      assert.deepEqual(
        workerVersioningFromEnv({
          TEMPORAL_WORKER_DEPLOYMENT: 'lws-prod',
          TEMPORAL_WORKER_BUILD_ID: '0.2.0-3f2a9c1d4e5b',
          TEMPORAL_WORKER_SET_CURRENT: 'never',
        }),
        { enabled: true, deploymentName: 'lws-prod', buildId: '0.2.0-3f2a9c1d4e5b', setCurrent: 'never' },
      );
    });

    for (const policy of ['if-new', 'always', 'never']) {
      it(`accepts TEMPORAL_WORKER_SET_CURRENT=${policy}`, () => {
        const config = workerVersioningFromEnv({ TEMPORAL_WORKER_SET_CURRENT: policy });
        assert.equal(config.enabled && config.setCurrent, policy);
      });
    }

    it("takes the caller's default policy, and the variable over it", () => {
      const config = workerVersioningFromEnv({}, { setCurrent: 'always' });
      assert.equal(config.enabled && config.setCurrent, 'always');
      const set = workerVersioningFromEnv({ TEMPORAL_WORKER_SET_CURRENT: 'never' }, { setCurrent: 'always' });
      assert.equal(set.enabled && set.setCurrent, 'never');
    });

    for (const flag of ['false', 'FALSE', '0']) {
      it(`turns versioning off for TEMPORAL_WORKER_VERSIONING=${flag}, whatever else is set`, () => {
        assert.deepEqual(
          workerVersioningFromEnv({ TEMPORAL_WORKER_VERSIONING: flag, TEMPORAL_WORKER_SET_CURRENT: 'sometimes' }),
          { enabled: false },
        );
      });
    }

    for (const flag of ['true', 'True', '1']) {
      it(`keeps versioning on for TEMPORAL_WORKER_VERSIONING=${flag}`, () => {
        assert.equal(workerVersioningFromEnv({ TEMPORAL_WORKER_VERSIONING: flag }).enabled, true);
      });
    }

    // [variable, value, what the message says]
    const rejected: Array<[string, string, string]> = [
      ['TEMPORAL_WORKER_VERSIONING', 'yes', 'expected true or false'],
      ['TEMPORAL_WORKER_VERSIONING', 'off', 'expected true or false'],
      ['TEMPORAL_WORKER_SET_CURRENT', 'sometimes', 'if-new, always, never'],
      ['TEMPORAL_WORKER_SET_CURRENT', 'ALWAYS', 'if-new, always, never'],
      ['TEMPORAL_WORKER_DEPLOYMENT', 'lws.temporal', 'cannot contain "."'],
      ['TEMPORAL_WORKER_DEPLOYMENT', 'lws temporal', 'spaces'],
      ['TEMPORAL_WORKER_DEPLOYMENT', 'x'.repeat(256), 'at most 255'],
      ['TEMPORAL_WORKER_BUILD_ID', '__unversioned__', 'cannot start with "__"'],
      ['TEMPORAL_WORKER_BUILD_ID', 'build 7', 'spaces'],
      ['TEMPORAL_WORKER_BUILD_ID', 'build\t7', 'control characters'],
      ['TEMPORAL_WORKER_BUILD_ID', 'b'.repeat(256), 'at most 255'],
    ];
    for (const [variable, value, says] of rejected) {
      it(`rejects ${variable}=${JSON.stringify(value.slice(0, 20))} naming the variable`, () => {
        assertRejectedBy(workerVersioningFromEnv, { [variable]: value }, variable, says);
      });
    }

    it('accepts a build ID with dots (the version is "<deployment>.<build ID>") and 255 characters', () => {
      for (const buildId of ['0.1.0-3f2a9c1d4e5b', 'b'.repeat(255), 'v1.2.3+git.abc']) {
        const config = workerVersioningFromEnv({ TEMPORAL_WORKER_BUILD_ID: buildId });
        assert.equal(config.enabled && config.buildId, buildId);
      }
    });
  });
});
