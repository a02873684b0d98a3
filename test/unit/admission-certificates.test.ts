import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { createServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import type * as k8s from '@kubernetes/client-node';
import {
  bundleFromSecret,
  bundleProblem,
  createCertificateAuthority,
  createServingBundle,
  createServingCertificate,
  ensureCertificateSecret,
  ensureWebhookCaBundle,
  RENEW_BEFORE_MS,
  secretData,
  type ServingBundle,
} from '../../src/admission/certificates.js';
import { serviceHosts } from '../../src/config/admission.js';
import { silentLogger } from '../../src/log.js';

const hosts = serviceHosts('lws-temporal-admission', 'lws-temporal-system');

/** GET https://<host>:<port>/ trusting only `ca`, with `servername` as the name to verify (SNI). */
function get(port: number, ca: string, servername: string, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path: '/', ca, servername, timeout: 5000 }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A status error as client-node's ApiException carries it. */
const apiError = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });

describe('admission/certificates: a CA of the webhook and its serving certificate', function () {
  // RSA key generation: tens of milliseconds each, more on a busy machine.
  this.timeout(30_000);
  let bundle: ServingBundle;

  before(async () => {
    bundle = await createServingBundle({ hosts: [...hosts, '127.0.0.1', '::1'] });
  });

  it('the CA is a self-signed CA that may sign certificates', () => {
    const ca = new X509Certificate(bundle.ca.cert);
    assert.equal(ca.ca, true);
    assert.ok(ca.checkIssued(ca) && ca.verify(ca.publicKey), 'self-signed');
    assert.match(ca.subject, /CN=lws-temporal-admission-ca/);
  });

  it('the serving certificate is signed by the CA, is no CA, and is for TLS servers', () => {
    const cert = new X509Certificate(bundle.cert);
    const ca = new X509Certificate(bundle.ca.cert);
    assert.ok(cert.checkIssued(ca));
    assert.ok(cert.verify(ca.publicKey));
    assert.equal(cert.ca, false);
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1'], 'extended key usage serverAuth');
    assert.ok(BigInt(`0x${cert.serialNumber}`) > 0n);
  });

  it('names every DNS name and IP in its subjectAltName', () => {
    const cert = new X509Certificate(bundle.cert);
    const san = cert.subjectAltName ?? '';
    for (const host of hosts) {
      assert.ok(san.includes(`DNS:${host}`), `${host} in ${san}`);
      assert.equal(cert.checkHost(host, { subject: 'never' }), host);
    }
    assert.equal(cert.checkIP('127.0.0.1'), '127.0.0.1');
    assert.ok(cert.checkIP('::1'));
    assert.equal(cert.checkHost('other.lws-temporal-system.svc', { subject: 'never' }), undefined);
    assert.equal(cert.checkIP('10.0.0.1'), undefined);
  });

  it('is valid from an hour ago for ten years', () => {
    const cert = new X509Certificate(bundle.cert);
    const from = new Date(cert.validFrom).getTime();
    const to = new Date(cert.validTo).getTime();
    assert.ok(from <= Date.now() - 59 * 60_000 && from > Date.now() - 61 * 60_000, cert.validFrom);
    assert.ok(Math.abs(to - Date.now() - 3650 * 86_400_000) < 120_000, cert.validTo);
  });

  it('node:https serves with it, and a client that trusts only the CA accepts it by name and by IP', async () => {
    const server = createServer({ cert: bundle.cert, key: bundle.key }, (_req, res) => res.end('hello'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      assert.equal(await get(port, bundle.ca.cert, 'lws-temporal-admission.lws-temporal-system.svc'), 'hello');
      // No servername: Node verifies the IP it connected to against the IP SANs.
      assert.equal(
        await new Promise<string>((resolve, reject) => {
          request({ host: '127.0.0.1', port, path: '/', ca: bundle.ca.cert }, (res) => {
            res.resume();
            res.on('end', () => resolve('ok'));
          })
            .on('error', reject)
            .end();
        }),
        'ok',
      );
      await assert.rejects(get(port, bundle.ca.cert, 'elsewhere.example'), /does not match|altnames/i);
      const otherCa = await createCertificateAuthority();
      await assert.rejects(get(port, otherCa.cert, hosts[0] ?? ''), /self[- ]signed|unable to verify|certificate/i);
    } finally {
      server.close();
    }
  });

  it('bundleProblem: a usable bundle has none; each defect is named', async () => {
    assert.equal(bundleProblem(bundle, hosts), undefined);
    const otherCa = await createCertificateAuthority();
    const foreign = { ...bundle, ...(await createServingCertificate(otherCa, { hosts })) };
    const cases: Array<[string, ServingBundle, string[], Date | undefined, RegExp]> = [
      ['a host it is not for', bundle, [...hosts, 'other.svc'], undefined, /not for other\.svc/],
      ['an IP it is not for', bundle, ['10.1.2.3'], undefined, /not for 10\.1\.2\.3/],
      ['signed by another CA', foreign, hosts, undefined, /not signed by the CA/],
      ['a key of another certificate', { ...bundle, key: otherCa.key }, hosts, undefined, /key does not match/],
      ['nothing stored', { ca: { cert: '', key: '' }, cert: '', key: '' }, hosts, undefined, /CA does not parse/],
      [
        'expiring within the renewal window',
        bundle,
        hosts,
        new Date(Date.now() + 3650 * 86_400_000 - RENEW_BEFORE_MS + 86_400_000),
        /expires .* within the renewal window/,
      ],
      ['not valid yet', bundle, hosts, new Date(Date.now() - 2 * 3_600_000), /not valid before/],
    ];
    for (const [what, b, h, now, problem] of cases) assert.match(bundleProblem(b, h, now) ?? '(none)', problem, what);
  });

  it('a Secret holds the bundle in base64 under ca.crt, ca.key, tls.crt, tls.key and gives it back', () => {
    const data = secretData(bundle);
    assert.deepEqual(Object.keys(data).sort(), ['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
    assert.deepEqual(bundleFromSecret({ data }), bundle);
  });

  describe('ensureCertificateSecret: one read, at most one write', () => {
    /** A CoreV1Api of one Secret, recording the calls. */
    function fakeCore(initial?: k8s.V1Secret, opts: { createConflict?: k8s.V1Secret; replaceConflict?: number } = {}) {
      let stored = initial;
      let replaceConflicts = opts.replaceConflict ?? 0;
      const calls: string[] = [];
      const core = {
        readNamespacedSecret: async () => {
          calls.push('read');
          if (!stored) throw apiError(404);
          return structuredClone(stored);
        },
        createNamespacedSecret: async ({ body }: { body: k8s.V1Secret }) => {
          calls.push('create');
          if (opts.createConflict) {
            stored = opts.createConflict;
            opts.createConflict = undefined;
            throw apiError(409);
          }
          stored = body;
          return body;
        },
        replaceNamespacedSecret: async ({ body }: { body: k8s.V1Secret }) => {
          calls.push('replace');
          if (replaceConflicts-- > 0) throw apiError(409);
          stored = body;
          return body;
        },
      };
      return { core: core as unknown as k8s.CoreV1Api, calls, stored: () => stored };
    }
    const target = { namespace: 'lws-temporal-system', name: 'certs', hosts, log: silentLogger };

    it('creates the Secret when there is none', async () => {
      const fake = fakeCore();
      const made = await ensureCertificateSecret(fake.core, target);
      assert.deepEqual(fake.calls, ['read', 'create']);
      assert.equal(bundleProblem(made, hosts), undefined);
      assert.deepEqual(bundleFromSecret(fake.stored() ?? {}), made);
      assert.equal(fake.stored()?.type, 'kubernetes.io/tls');
    });

    it('reads a usable Secret and writes nothing', async () => {
      const fake = fakeCore({ metadata: { name: 'certs' }, data: secretData(bundle) });
      assert.deepEqual(await ensureCertificateSecret(fake.core, target), bundle);
      assert.deepEqual(fake.calls, ['read']);
    });

    it('takes what another replica created first (409 on create)', async () => {
      const fake = fakeCore(undefined, { createConflict: { metadata: { name: 'certs' }, data: secretData(bundle) } });
      assert.deepEqual(await ensureCertificateSecret(fake.core, target), bundle);
      assert.deepEqual(fake.calls, ['read', 'create', 'read']);
    });

    it('renews a certificate for other names with the same CA (the caBundle stays right)', async () => {
      const old = { ...bundle, ...(await createServingCertificate(bundle.ca, { hosts: ['old.svc'] })) };
      const fake = fakeCore({ metadata: { name: 'certs', resourceVersion: '7' }, data: secretData(old) });
      const renewed = await ensureCertificateSecret(fake.core, target);
      assert.deepEqual(fake.calls, ['read', 'replace']);
      assert.equal(renewed.ca.cert, bundle.ca.cert);
      assert.equal(bundleProblem(renewed, hosts), undefined);
      assert.equal(fake.stored()?.metadata?.resourceVersion, '7', 'the replace is guarded by the read version');
    });

    it('starts over with a new CA when the stored one is unusable (an empty Secret made beforehand)', async () => {
      const fake = fakeCore({ metadata: { name: 'certs' }, type: 'Opaque' });
      const made = await ensureCertificateSecret(fake.core, target);
      assert.deepEqual(fake.calls, ['read', 'replace']);
      assert.equal(bundleProblem(made, hosts), undefined);
      assert.equal(fake.stored()?.type, 'Opaque', 'a Secret keeps its type');
    });

    it('reads again when the Secret changed between its read and the replace (409)', async () => {
      const fake = fakeCore({ metadata: { name: 'certs' } }, { replaceConflict: 1 });
      await ensureCertificateSecret(fake.core, target);
      assert.deepEqual(fake.calls, ['read', 'replace', 'read', 'replace']);
    });

    const owner = { apiVersion: 'v1', kind: 'Service', name: 'lws-temporal-admission', uid: 'svc-uid' };

    it('makes the Service the owner of a Secret it creates, so that an uninstall takes it', async () => {
      const fake = fakeCore();
      await ensureCertificateSecret(fake.core, { ...target, owner });
      assert.deepEqual(fake.stored()?.metadata?.ownerReferences, [owner]);
    });

    it('adds the owner to a usable Secret without one, and keeps its certificate', async () => {
      const fake = fakeCore({ metadata: { name: 'certs', resourceVersion: '3' }, data: secretData(bundle) });
      assert.deepEqual(await ensureCertificateSecret(fake.core, { ...target, owner }), bundle);
      assert.deepEqual(fake.calls, ['read', 'replace']);
      assert.deepEqual(fake.stored()?.metadata?.ownerReferences, [owner]);
      assert.deepEqual(bundleFromSecret(fake.stored() ?? {}), bundle);
      const again = fakeCore(fake.stored());
      await ensureCertificateSecret(again.core, { ...target, owner });
      assert.deepEqual(again.calls, ['read'], 'an owned Secret is left alone');
    });

    it('passes other failures on', async () => {
      const core = { readNamespacedSecret: async () => Promise.reject(apiError(403)) } as unknown as k8s.CoreV1Api;
      await assert.rejects(ensureCertificateSecret(core, target), /HTTP 403/);
    });
  });

  describe('ensureWebhookCaBundle', () => {
    const config = (caBundles: (string | undefined)[]): k8s.V1MutatingWebhookConfiguration => ({
      metadata: { name: 'lws-temporal-pods' },
      webhooks: caBundles.map((caBundle, i) => ({
        name: `w${i}.lws-temporal.dev`,
        clientConfig: { caBundle, service: { name: 's', namespace: 'n' } },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      })),
    });
    function fakeApi(initial: k8s.V1MutatingWebhookConfiguration) {
      const patches: unknown[] = [];
      const api = {
        readMutatingWebhookConfiguration: async () => structuredClone(initial),
        patchMutatingWebhookConfiguration: async ({ body }: { body: unknown }) => {
          patches.push(body);
          return initial;
        },
      };
      return { api: api as unknown as k8s.AdmissionregistrationV1Api, patches };
    }
    const want = () => Buffer.from(bundle.ca.cert).toString('base64');

    it('sets the caBundle of each webhook that lacks it, guarded by a test of its name', async () => {
      const fake = fakeApi(config([undefined, want(), 'c3RhbGU=']));
      assert.equal(await ensureWebhookCaBundle(fake.api, 'lws-temporal-pods', bundle.ca.cert, silentLogger), 2);
      assert.deepEqual(fake.patches, [
        [
          { op: 'test', path: '/webhooks/0/name', value: 'w0.lws-temporal.dev' },
          { op: 'add', path: '/webhooks/0/clientConfig/caBundle', value: want() },
          { op: 'test', path: '/webhooks/2/name', value: 'w2.lws-temporal.dev' },
          { op: 'add', path: '/webhooks/2/clientConfig/caBundle', value: want() },
        ],
      ]);
    });

    it('writes nothing when every caBundle is right', async () => {
      const fake = fakeApi(config([want()]));
      assert.equal(await ensureWebhookCaBundle(fake.api, 'lws-temporal-pods', bundle.ca.cert, silentLogger), 0);
      assert.deepEqual(fake.patches, []);
    });
  });
});
