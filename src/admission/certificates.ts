// The webhook's TLS: the API server calls a webhook only over HTTPS, and trusts the CA bundle of its
// MutatingWebhookConfiguration, not the cluster's CA. So the webhook brings its own small CA: a self-signed CA and a
// serving certificate it signs for the webhook's DNS names (the Service) or IPs (the local stack's 127.0.0.1).
//
// Node.js reads X.509 (crypto.X509Certificate) but cannot write it: node-forge builds the certificates; the RSA keys
// and the signatures come from node:crypto (forge's pure-JS key generation takes seconds, its signature 50-100 ms),
// the two keys of a bundle generated at once on libuv's threads.
//
// In a cluster the CA and the certificate live in one Secret that every replica shares (the first creates it, the
// others read it) and the CA goes into the MutatingWebhookConfiguration's caBundle, as upstream LWS's internal cert
// management (cert-controller's rotator) does: ensureCertificateSecret and ensureWebhookCaBundle, each one read and
// at most one write, idempotent.
import { X509Certificate, createPrivateKey, generateKeyPair, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import forge from 'node-forge';
import type { Logger } from '../log.js';

/** A certificate and its private key, both PEM. */
export interface CertificateAndKey {
  cert: string;
  key: string;
}

/** What the webhook serves with, and the CA that the API server must trust for it. */
export interface ServingBundle extends CertificateAndKey {
  ca: CertificateAndKey;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** As cert-controller: ten years for the CA and the certificate, renewed 90 days before the end. */
export const DEFAULT_VALIDITY_DAYS = 3650;
export const RENEW_BEFORE_MS = 90 * DAY_MS;
/** notBefore an hour back: a node whose clock runs a little behind still accepts a certificate made just now. */
const BACKDATE_MS = 60 * 60 * 1000;

/** The Secret's keys: the CA's certificate and key beside the usual kubernetes.io/tls pair. */
export const SECRET_KEYS = { caCert: 'ca.crt', caKey: 'ca.key', cert: 'tls.crt', key: 'tls.key' } as const;

interface KeyPair {
  publicPem: string;
  privatePem: string;
}

const generateRsa = promisify(generateKeyPair);

async function newKeyPair(): Promise<KeyPair> {
  const { publicKey, privateKey } = await generateRsa('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicPem: publicKey, privatePem: privateKey };
}

/**
 * Signs with SHA-256 and RSA through node:crypto. forge's sign() feeds the DER of the TBSCertificate to the digest it
 * is given and asks the key to sign that digest: this digest only collects the bytes, this key signs them.
 */
function signCertificate(cert: forge.pki.Certificate, privateKeyPem: string): void {
  let tbs = '';
  const digest = {
    algorithm: 'sha256',
    update(bytes: string) {
      tbs += bytes;
      return digest;
    },
  };
  const key = { sign: () => sign('sha256', Buffer.from(tbs, 'binary'), privateKeyPem).toString('binary') };
  cert.sign(key as unknown as forge.pki.rsa.PrivateKey, digest as unknown as forge.md.MessageDigest);
}

/**
 * A positive serial number of 16 random bytes. DER integers are minimal and signed: the first byte is kept between
 * 0x40 and 0x7f, so that it is neither a sign bit (Go refuses negative serials) nor a leading zero (Go refuses
 * non-minimal integers).
 */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x3f) | 0x40;
  return bytes.toString('hex');
}

function validity(cert: forge.pki.Certificate, now: Date, days: number): void {
  cert.validity.notBefore = new Date(now.getTime() - BACKDATE_MS);
  cert.validity.notAfter = new Date(now.getTime() + days * DAY_MS);
}

export interface CaOptions {
  commonName?: string;
  validityDays?: number;
  now?: Date;
}

/** A self-signed CA that may sign certificates only (pathLen 0). */
export async function createCertificateAuthority(opts: CaOptions = {}): Promise<CertificateAndKey> {
  return buildCertificateAuthority(await newKeyPair(), opts);
}

function buildCertificateAuthority({ publicPem, privatePem }: KeyPair, opts: CaOptions): CertificateAndKey {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicPem);
  cert.serialNumber = serialNumber();
  validity(cert, opts.now ?? new Date(), opts.validityDays ?? DEFAULT_VALIDITY_DAYS);
  const subject = [
    { name: 'commonName', value: opts.commonName ?? 'lws-temporal-admission-ca' },
    { name: 'organizationName', value: 'lws-temporal' },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  signCertificate(cert, privatePem);
  return { cert: forge.pki.certificateToPem(cert), key: privatePem };
}

export interface ServingOptions {
  /** DNS names and IP addresses (v4 or v6) the certificate is for, in its subjectAltName. At least one. */
  hosts: string[];
  validityDays?: number;
  now?: Date;
}

/** A TLS server certificate for `hosts`, signed by `ca`. */
export async function createServingCertificate(
  ca: CertificateAndKey,
  opts: ServingOptions,
): Promise<CertificateAndKey> {
  return buildServingCertificate(ca, await newKeyPair(), opts);
}

function buildServingCertificate(
  ca: CertificateAndKey,
  { publicPem, privatePem }: KeyPair,
  opts: ServingOptions,
): CertificateAndKey {
  if (opts.hosts.length === 0) throw new Error('a serving certificate needs at least one DNS name or IP address');
  const caCert = forge.pki.certificateFromPem(ca.cert);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicPem);
  cert.serialNumber = serialNumber();
  validity(cert, opts.now ?? new Date(), opts.validityDays ?? DEFAULT_VALIDITY_DAYS);
  // The name is informative: clients match the subjectAltName (Go ignores the common name).
  cert.setSubject([{ name: 'commonName', value: (opts.hosts[0] ?? '').slice(0, 64) }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: opts.hosts.map((host) => (isIP(host) ? { type: 7, ip: host } : { type: 2, value: host })),
    },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  signCertificate(cert, ca.key);
  return { cert: forge.pki.certificateToPem(cert), key: privatePem };
}

/** A new CA and a serving certificate for `hosts` signed by it. */
export async function createServingBundle(opts: ServingOptions): Promise<ServingBundle> {
  const [caKeys, servingKeys] = await Promise.all([newKeyPair(), newKeyPair()]);
  const ca = buildCertificateAuthority(caKeys, { now: opts.now, validityDays: opts.validityDays });
  return { ca, ...buildServingCertificate(ca, servingKeys, opts) };
}

/** Why `pair` is no usable certificate with its key at `now` (undefined: it is one). */
function pairProblem(what: string, pair: CertificateAndKey, now: Date): string | undefined {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(pair.cert);
    if (!x509.checkPrivateKey(createPrivateKey(pair.key))) return `the ${what}'s key does not match its certificate`;
  } catch (err) {
    return `the ${what} does not parse (${(err as Error).message})`;
  }
  if (new Date(x509.validFrom).getTime() > now.getTime()) return `the ${what} is not valid before ${x509.validFrom}`;
  if (new Date(x509.validTo).getTime() - now.getTime() < RENEW_BEFORE_MS) {
    return `the ${what} expires at ${x509.validTo}, within the renewal window`;
  }
  return undefined;
}

/** Why the CA cannot sign serving certificates any more (undefined: it can). */
export function caProblem(ca: CertificateAndKey, now = new Date()): string | undefined {
  const problem = pairProblem('CA', ca, now);
  if (problem) return problem;
  return new X509Certificate(ca.cert).ca ? undefined : 'the CA certificate is no CA';
}

/** Why `bundle` cannot serve `hosts` (undefined: it can): a bad CA, or a certificate not for them or not from it. */
export function bundleProblem(bundle: ServingBundle, hosts: string[], now = new Date()): string | undefined {
  const problem = caProblem(bundle.ca, now) ?? pairProblem('serving certificate', bundle, now);
  if (problem) return problem;
  const cert = new X509Certificate(bundle.cert);
  const ca = new X509Certificate(bundle.ca.cert);
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return 'the serving certificate is not signed by the CA';
  const missing = hosts.filter((h) =>
    isIP(h) ? cert.checkIP(h) === undefined : cert.checkHost(h, { subject: 'never' }) === undefined,
  );
  return missing.length > 0 ? `the serving certificate is not for ${missing.join(', ')}` : undefined;
}

// --- in-cluster: the Secret and the caBundle ---------------------------------------------------------------------

/** client-node's ApiException carries the HTTP status as `code`. */
function httpCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

const fromBase64 = (value: string | undefined) => (value ? Buffer.from(value, 'base64').toString('utf8') : '');
const toBase64 = (value: string) => Buffer.from(value, 'utf8').toString('base64');

export function bundleFromSecret(secret: k8s.V1Secret): ServingBundle {
  const data = secret.data ?? {};
  return {
    ca: { cert: fromBase64(data[SECRET_KEYS.caCert]), key: fromBase64(data[SECRET_KEYS.caKey]) },
    cert: fromBase64(data[SECRET_KEYS.cert]),
    key: fromBase64(data[SECRET_KEYS.key]),
  };
}

export function secretData(bundle: ServingBundle): Record<string, string> {
  return {
    [SECRET_KEYS.caCert]: toBase64(bundle.ca.cert),
    [SECRET_KEYS.caKey]: toBase64(bundle.ca.key),
    [SECRET_KEYS.cert]: toBase64(bundle.cert),
    [SECRET_KEYS.key]: toBase64(bundle.key),
  };
}

export interface SecretTarget {
  namespace: string;
  name: string;
  /** The names the serving certificate must cover: the Service's DNS names. */
  hosts: string[];
  /**
   * The Service, as the Secret's owner: the release's uninstall deletes the Service, and the garbage collector then
   * the Secret, which no manifest of the release names (the webhook made it).
   */
  owner?: k8s.V1OwnerReference;
  log: Logger;
  now?: () => Date;
}

/**
 * The bundle in the Secret `namespace/name`, made (and stored) when the Secret does not exist yet, or renewed when it
 * cannot serve `hosts` (missing, foreign, expiring; a usable CA is kept, so the caBundle stays right). Replicas that
 * start together race: a create that finds the Secret made (409), or a replace that finds it changed (409), reads it
 * again and takes what the winner stored.
 */
export async function ensureCertificateSecret(core: k8s.CoreV1Api, target: SecretTarget): Promise<ServingBundle> {
  const { namespace, name, hosts, owner, log } = target;
  const now = () => target.now?.() ?? new Date();
  for (let attempt = 1; attempt <= 5; attempt++) {
    const existing = await core.readNamespacedSecret({ namespace, name }).catch((err: unknown) => {
      if (httpCode(err) === 404) return undefined;
      throw err;
    });
    if (!existing) {
      const bundle = await createServingBundle({ hosts, now: now() });
      const body: k8s.V1Secret = {
        metadata: {
          name,
          namespace,
          labels: { 'app.kubernetes.io/name': 'lws-temporal', 'app.kubernetes.io/component': 'admission' },
          ...(owner && { ownerReferences: [owner] }),
        },
        type: 'kubernetes.io/tls',
        data: secretData(bundle),
      };
      try {
        await core.createNamespacedSecret({ namespace, body });
        log.info('created the webhook certificate Secret', { secret: `${namespace}/${name}`, hosts: hosts.join(',') });
        return bundle;
      } catch (err) {
        if (httpCode(err) !== 409) throw err;
        continue;
      }
    }
    const stored = bundleFromSecret(existing);
    const problem = bundleProblem(stored, hosts, now());
    const unowned = owner && !existing.metadata?.ownerReferences?.some((ref) => ref.uid === owner.uid);
    if (!problem && !unowned) return stored;
    const metadata = unowned
      ? { ...existing.metadata, ownerReferences: [...(existing.metadata?.ownerReferences ?? []), owner] }
      : existing.metadata;
    if (!problem) {
      // A Secret of an earlier build, or one made by hand: owned from now on, its certificate kept.
      try {
        await core.replaceNamespacedSecret({ namespace, name, body: { ...existing, metadata } });
        return stored;
      } catch (err) {
        if (httpCode(err) !== 409) throw err;
        continue;
      }
    }
    const keepCa = caProblem(stored.ca, now()) === undefined;
    const bundle = keepCa
      ? { ca: stored.ca, ...(await createServingCertificate(stored.ca, { hosts, now: now() })) }
      : await createServingBundle({ hosts, now: now() });
    try {
      await core.replaceNamespacedSecret({
        namespace,
        name,
        body: { ...existing, metadata, data: { ...existing.data, ...secretData(bundle) } },
      });
      log.info('renewed the webhook certificate Secret', {
        secret: `${namespace}/${name}`,
        reason: problem,
        newCa: !keepCa,
      });
      return bundle;
    } catch (err) {
      if (httpCode(err) !== 409) throw err;
    }
  }
  throw new Error(`the Secret ${namespace}/${name} kept changing under us; giving up after 5 attempts`);
}

/**
 * Sets the caBundle of every webhook of the MutatingWebhookConfiguration `name` to `caPem`; resolves with how many
 * it changed (0: already right, nothing written). One JSON patch, each change guarded by a test of the webhook's name,
 * so that a configuration edited meanwhile fails the patch (422) and is read again rather than patched blindly.
 */
export async function ensureWebhookCaBundle(
  api: k8s.AdmissionregistrationV1Api,
  name: string,
  caPem: string,
  log: Logger,
): Promise<number> {
  const want = toBase64(caPem);
  for (let attempt = 1; attempt <= 3; attempt++) {
    const config = await api.readMutatingWebhookConfiguration({ name });
    const ops = (config.webhooks ?? []).flatMap((webhook, i) =>
      webhook.clientConfig.caBundle === want
        ? []
        : [
            { op: 'test', path: `/webhooks/${i}/name`, value: webhook.name },
            { op: 'add', path: `/webhooks/${i}/clientConfig/caBundle`, value: want },
          ],
    );
    if (ops.length === 0) return 0;
    try {
      await api.patchMutatingWebhookConfiguration(
        { name, body: ops },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
      );
      const changed = ops.length / 2;
      log.info('set the caBundle of the webhook configuration', { configuration: name, webhooks: changed });
      return changed;
    } catch (err) {
      if (httpCode(err) !== 422 && httpCode(err) !== 409) throw err;
    }
  }
  throw new Error(`the MutatingWebhookConfiguration ${name} kept changing under us; giving up after 3 attempts`);
}
