import { readFileSync } from 'node:fs';
import { ConfigError } from './temporal.js';

/**
 * The admission webhook's settings (`npm run admission`, src/admission/main.ts), from environment variables:
 *
 * - ADMISSION_PORT: the HTTPS port (default 9443; 0 picks a free one).
 * - ADMISSION_BIND_ADDRESS: the address to listen on (default: every interface).
 * - Where the serving certificate comes from, one of:
 *   - ADMISSION_CERT_DIR: a directory holding tls.crt and tls.key (a mounted kubernetes.io/tls Secret, e.g.
 *     cert-manager's; the local stack's). Read again every minute, so a renewed certificate is served without a
 *     restart. Whoever issues it sets the caBundle, unless ADMISSION_WEBHOOK_CONFIGURATION is set and the directory
 *     also holds ca.crt.
 *   - ADMISSION_CERT_SECRET: the name of a Secret in which the webhook keeps a CA and a serving certificate of its own
 *     (created by the first replica, read by the others, renewed before it expires), in the namespace
 *     ADMISSION_NAMESPACE (default: POD_NAMESPACE, else the pod's service account namespace). The certificate is for
 *     the Service ADMISSION_SERVICE (default lws-temporal-admission): `<service>.<namespace>.svc` and its longer and
 *     shorter forms.
 * - ADMISSION_WEBHOOK_CONFIGURATION: the MutatingWebhookConfiguration whose caBundle the process sets at start (and
 *   keeps set) to its CA. Default lws-temporal-pods with ADMISSION_CERT_SECRET; none with ADMISSION_CERT_DIR.
 */
export type AdmissionCertSource =
  | { kind: 'files'; dir: string }
  | { kind: 'secret'; namespace: string; name: string; service: string; hosts: string[] };

export interface AdmissionConfig {
  port: number;
  bindAddress?: string;
  certs: AdmissionCertSource;
  webhookConfiguration?: string;
}

export const DEFAULT_ADMISSION_PORT = 9443;
export const DEFAULT_ADMISSION_SERVICE = 'lws-temporal-admission';
export const DEFAULT_WEBHOOK_CONFIGURATION = 'lws-temporal-pods';
const SERVICE_ACCOUNT_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** A DNS-1123 label (a Service or namespace name) or subdomain (a Secret or configuration name). */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function checkName(variable: string, value: string, pattern: RegExp, what: string): string {
  if (!pattern.test(value)) throw new ConfigError(`${variable}=${value}: not a valid ${what}`);
  return value;
}

/** The names a Service is called by in the cluster; the API server calls `<service>.<namespace>.svc`. */
export function serviceHosts(service: string, namespace: string): string[] {
  return [
    `${service}.${namespace}.svc`,
    `${service}.${namespace}.svc.cluster.local`,
    `${service}.${namespace}`,
    service,
  ];
}

function podNamespace(env: NodeJS.ProcessEnv, readNamespaceFile: () => string | undefined): string {
  const fromEnv = env.ADMISSION_NAMESPACE || env.POD_NAMESPACE;
  if (fromEnv) return checkName('ADMISSION_NAMESPACE', fromEnv, DNS_LABEL, 'namespace name');
  const fromFile = readNamespaceFile()?.trim();
  if (fromFile) return fromFile;
  throw new ConfigError(
    'ADMISSION_CERT_SECRET needs a namespace: set ADMISSION_NAMESPACE (or POD_NAMESPACE), or run in a pod',
  );
}

function readServiceAccountNamespace(): string | undefined {
  try {
    return readFileSync(SERVICE_ACCOUNT_NAMESPACE_FILE, 'utf8');
  } catch {
    return undefined;
  }
}

export function admissionConfigFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  readNamespaceFile: () => string | undefined = readServiceAccountNamespace,
): AdmissionConfig {
  const rawPort = env.ADMISSION_PORT || String(DEFAULT_ADMISSION_PORT);
  const port = Number(rawPort);
  if (!/^\d+$/.test(rawPort) || port > 65535) {
    throw new ConfigError(`ADMISSION_PORT=${rawPort}: expected a port from 0 to 65535 (0 picks a free one)`);
  }
  const dir = env.ADMISSION_CERT_DIR || undefined;
  const secret = env.ADMISSION_CERT_SECRET || undefined;
  if (dir && secret) {
    throw new ConfigError(
      'ADMISSION_CERT_DIR and ADMISSION_CERT_SECRET are two sources of the certificate: set one of them',
    );
  }
  let certs: AdmissionCertSource;
  if (dir) {
    certs = { kind: 'files', dir };
  } else if (secret) {
    const namespace = podNamespace(env, readNamespaceFile);
    const service = checkName(
      'ADMISSION_SERVICE',
      env.ADMISSION_SERVICE || DEFAULT_ADMISSION_SERVICE,
      DNS_LABEL,
      'Service name',
    );
    certs = {
      kind: 'secret',
      namespace,
      name: checkName('ADMISSION_CERT_SECRET', secret, DNS_SUBDOMAIN, 'Secret name'),
      service,
      hosts: serviceHosts(service, namespace),
    };
  } else {
    throw new ConfigError(
      'no serving certificate: set ADMISSION_CERT_DIR (a directory with tls.crt and tls.key) or ADMISSION_CERT_SECRET ' +
        '(a Secret in which the webhook keeps a CA and a certificate of its own)',
    );
  }
  const webhookConfiguration =
    env.ADMISSION_WEBHOOK_CONFIGURATION || (certs.kind === 'secret' ? DEFAULT_WEBHOOK_CONFIGURATION : undefined);
  if (webhookConfiguration) {
    checkName('ADMISSION_WEBHOOK_CONFIGURATION', webhookConfiguration, DNS_SUBDOMAIN, 'configuration name');
  }
  return { port, bindAddress: env.ADMISSION_BIND_ADDRESS || undefined, certs, webhookConfiguration };
}
