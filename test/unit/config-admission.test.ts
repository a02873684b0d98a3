import assert from 'node:assert/strict';
import { admissionConfigFromEnv, serviceHosts, type AdmissionConfig } from '../../src/config/admission.js';
import { ConfigError } from '../../src/config/temporal.js';

const noNamespaceFile = () => undefined;

describe('config/admission: the webhook process from environment variables', () => {
  const valid: Array<[string, NodeJS.ProcessEnv, AdmissionConfig, (() => string | undefined)?]> = [
    [
      'files: the port defaults to 9443, no configuration to patch',
      { ADMISSION_CERT_DIR: '/certs' },
      { port: 9443, bindAddress: undefined, certs: { kind: 'files', dir: '/certs' }, webhookConfiguration: undefined },
    ],
    [
      'files on loopback, a free port, a configuration to patch from ca.crt',
      {
        ADMISSION_CERT_DIR: '/certs',
        ADMISSION_PORT: '0',
        ADMISSION_BIND_ADDRESS: '127.0.0.1',
        ADMISSION_WEBHOOK_CONFIGURATION: 'mine',
      },
      { port: 0, bindAddress: '127.0.0.1', certs: { kind: 'files', dir: '/certs' }, webhookConfiguration: 'mine' },
    ],
    [
      'secret: the namespace from the service account, the default Service and configuration',
      { ADMISSION_CERT_SECRET: 'lws-temporal-admission-certs' },
      {
        port: 9443,
        bindAddress: undefined,
        certs: {
          kind: 'secret',
          namespace: 'lws-temporal-system',
          name: 'lws-temporal-admission-certs',
          service: 'lws-temporal-admission',
          hosts: serviceHosts('lws-temporal-admission', 'lws-temporal-system'),
        },
        webhookConfiguration: 'lws-temporal-pods',
      },
      () => 'lws-temporal-system\n',
    ],
    [
      'secret: ADMISSION_NAMESPACE and ADMISSION_SERVICE win',
      { ADMISSION_CERT_SECRET: 's', ADMISSION_NAMESPACE: 'ops', POD_NAMESPACE: 'x', ADMISSION_SERVICE: 'hook' },
      {
        port: 9443,
        bindAddress: undefined,
        certs: { kind: 'secret', namespace: 'ops', name: 's', service: 'hook', hosts: serviceHosts('hook', 'ops') },
        webhookConfiguration: 'lws-temporal-pods',
      },
      () => 'ignored',
    ],
  ];
  for (const [what, env, expected, readNamespace] of valid) {
    it(what, () => assert.deepEqual(admissionConfigFromEnv(env, readNamespace ?? noNamespaceFile), expected));
  }

  const invalid: Array<[string, NodeJS.ProcessEnv, RegExp]> = [
    ['no certificate source', {}, /set ADMISSION_CERT_DIR .* or ADMISSION_CERT_SECRET/],
    ['both sources', { ADMISSION_CERT_DIR: '/c', ADMISSION_CERT_SECRET: 's' }, /set one of them/],
    ['a port out of range', { ADMISSION_CERT_DIR: '/c', ADMISSION_PORT: '70000' }, /ADMISSION_PORT=70000/],
    ['a port that is no number', { ADMISSION_CERT_DIR: '/c', ADMISSION_PORT: '94x3' }, /ADMISSION_PORT=94x3/],
    ['a secret without a namespace', { ADMISSION_CERT_SECRET: 's' }, /needs a namespace/],
    ['a bad Secret name', { ADMISSION_CERT_SECRET: 'Certs!', POD_NAMESPACE: 'n' }, /not a valid Secret name/],
    ['a bad Service name', { ADMISSION_CERT_SECRET: 's', POD_NAMESPACE: 'n', ADMISSION_SERVICE: 'a.b' }, /Service/],
  ];
  for (const [what, env, message] of invalid) {
    it(`refuses ${what}`, () => {
      assert.throws(
        () => admissionConfigFromEnv(env, noNamespaceFile),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError);
          assert.match(err.message, message);
          return true;
        },
      );
    });
  }

  it('a certificate for a Service covers the name the API server calls, <service>.<namespace>.svc', () => {
    assert.deepEqual(serviceHosts('hook', 'ops'), ['hook.ops.svc', 'hook.ops.svc.cluster.local', 'hook.ops', 'hook']);
  });
});
