// `npm run admission`: the mutating admission webhook for LeaderWorkerSet pods (server.ts), configured by
// environment variables (src/config/admission.ts). With ADMISSION_CERT_SECRET it keeps its CA and certificate in a
// Secret and the CA in its MutatingWebhookConfiguration (certificates.ts); with ADMISSION_CERT_DIR it serves the
// files there (the local stack runs it so, for 127.0.0.1). Either way it reads the StatefulSet of each pod it admits
// (owner-check.ts).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { admissionConfigFromEnv, type AdmissionConfig } from '../config/admission.js';
import { checkLogSettings, createLogger, type Logger } from '../log.js';
import { AdmissionMetrics, serveMetrics } from '../observability/metrics.js';
import { createAdmissionServer, HEALTHZ_PATH, MUTATE_LWS_PATH, MUTATE_POD_PATH } from './server.js';
import { ownerCheck, type StatefulSetLookup } from './owner-check.js';

/** How often the certificate is looked at again: files are cheap to read, the Secret is two API requests. */
const REFRESH_MS = { files: 60_000, secret: 10 * 60_000 } as const;

interface Served {
  cert: string;
  key: string;
  /** The CA to put into the caBundle, when this process knows it. */
  ca?: string;
}

/** Reads the certificate (files) or ensures it (Secret); sets the caBundle when there is a configuration to set. */
type CertificateLoader = () => Promise<Served>;

async function fileLoader(config: AdmissionConfig, dir: string, log: Logger): Promise<CertificateLoader> {
  const caBundle = config.webhookConfiguration ? await caBundleSetter(config.webhookConfiguration, log) : undefined;
  return async () => {
    const [cert, key] = await Promise.all(['tls.crt', 'tls.key'].map((f) => readFile(join(dir, f), 'utf8')));
    const ca = await readFile(join(dir, 'ca.crt'), 'utf8').catch(() => undefined);
    if (caBundle && ca) await caBundle(ca);
    return { cert: cert ?? '', key: key ?? '', ca };
  };
}

/** The Kubernetes client is loaded only when needed: the local stack's process starts faster without it. */
async function caBundleSetter(name: string, log: Logger): Promise<(ca: string) => Promise<void>> {
  const [k8s, { loadKubeConfig }, { ensureWebhookCaBundle }] = await Promise.all([
    import('@kubernetes/client-node'),
    import('../config/kubernetes.js'),
    import('./certificates.js'),
  ]);
  const api = loadKubeConfig(process.env, 'admission').makeApiClient(k8s.AdmissionregistrationV1Api);
  return async (ca) => {
    await ensureWebhookCaBundle(api, name, ca, log);
  };
}

/**
 * The owner check's read of a pod's StatefulSet (owner-check.ts), with the process's Kubernetes identity; none
 * without a cluster to ask (then pods are admitted unchecked, as before the check).
 */
async function statefulSetLookup(log: Logger): Promise<StatefulSetLookup | undefined> {
  const [{ loadKubeConfig }, { statefulSetsJson }, { httpStatusOf }] = await Promise.all([
    import('../config/kubernetes.js'),
    import('../kube/kube-json.js'),
    import('../kube/api-errors.js'),
  ]);
  let statefulSets: ReturnType<typeof statefulSetsJson>;
  try {
    // Plain JSON over one shared HTTP/2 connection: with the typed client, provisioning 100 groups took 49 s instead
    // of 17 s.
    statefulSets = statefulSetsJson(loadKubeConfig(process.env, 'admission'));
  } catch (err) {
    log.warn('no cluster to read StatefulSets from: pods of a deleted StatefulSet are not refused', {
      error: err instanceof Error ? err.message : String(err),
    });
    return undefined;
  }
  return async (namespace, name) => {
    try {
      const { metadata } = await statefulSets.read({ namespace, name });
      return { uid: metadata?.uid, deletionTimestamp: metadata?.deletionTimestamp };
    } catch (err) {
      if (httpStatusOf(err) === 404) return null;
      throw err;
    }
  };
}

async function secretLoader(
  config: AdmissionConfig,
  target: { namespace: string; name: string; service: string; hosts: string[] },
  log: Logger,
): Promise<CertificateLoader> {
  const [k8s, { loadKubeConfig }, { ensureCertificateSecret }] = await Promise.all([
    import('@kubernetes/client-node'),
    import('../config/kubernetes.js'),
    import('./certificates.js'),
  ]);
  const core = loadKubeConfig(process.env, 'admission').makeApiClient(k8s.CoreV1Api);
  const caBundle = config.webhookConfiguration ? await caBundleSetter(config.webhookConfiguration, log) : undefined;
  const owner = await core.readNamespacedService({ namespace: target.namespace, name: target.service }).then(
    (service) => ({ apiVersion: 'v1', kind: 'Service', name: target.service, uid: service.metadata!.uid! }),
    (err: unknown) => {
      log.warn('the certificate Secret gets no owner: an uninstall leaves it', {
        service: `${target.namespace}/${target.service}`,
        error: err instanceof Error ? err.message : String(err),
      });
      return undefined;
    },
  );
  return async () => {
    const bundle = await ensureCertificateSecret(core, { ...target, ...(owner && { owner }), log });
    if (caBundle) await caBundle(bundle.ca.cert);
    return { cert: bundle.cert, key: bundle.key, ca: bundle.ca.cert };
  };
}

const log = createLogger('admission');
try {
  checkLogSettings();
  const config = admissionConfigFromEnv();
  const { certs } = config;
  const load =
    certs.kind === 'files' ? await fileLoader(config, certs.dir, log) : await secretLoader(config, certs, log);
  let served = await load();
  const lookup = await statefulSetLookup(log);
  const metrics = new AdmissionMetrics();
  const admission = createAdmissionServer({
    tls: served,
    log,
    metrics,
    ...(lookup && { ownerCheck: ownerCheck(lookup, log) }),
  });
  const port = await admission.listen(config.port, config.bindAddress);
  // Plain HTTP on METRICS_PORT (default 9466), as the worker's and the trigger's, for Prometheus.
  const metricsServer = await serveMetrics({ registry: metrics.registry, role: 'admission', healthy: () => true, log });
  log.info('admission webhook serving', {
    port,
    paths: `${MUTATE_POD_PATH} ${MUTATE_LWS_PATH} ${HEALTHZ_PATH}`,
    certificate: certs.kind === 'files' ? certs.dir : `secret ${certs.namespace}/${certs.name}`,
    webhookConfiguration: config.webhookConfiguration,
  });

  // A renewed certificate (cert-manager's files, another replica's Secret) is served without a restart; a caBundle
  // that someone reset is set again.
  const refresh = setInterval(() => {
    load().then(
      (next) => {
        if (next.cert === served.cert && next.key === served.key) return;
        admission.setCertificate(next);
        served = next;
        log.info('serving a renewed certificate');
      },
      (err: unknown) => log.warn('could not refresh the certificate; serving the current one', { error: err }),
    );
  }, REFRESH_MS[certs.kind]);
  refresh.unref();

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      clearInterval(refresh);
      admission.markUnhealthy();
      void metricsServer.close();
      void admission.close().then(() => process.exit(0));
      // Keep-alive connections of the API server are closed when idle; a request in flight gets a second.
      setTimeout(() => process.exit(0), 1000).unref();
    });
  }
} catch (err) {
  // A configuration error already says what to do: one line, no stack trace.
  log.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}
