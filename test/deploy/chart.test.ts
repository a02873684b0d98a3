// The Helm chart charts/lws-temporal: it lints, deploy/ is what it renders, each value reaches the process that reads
// it (rendered, then handed to that process's own configuration code), and what it installs by default, like the
// release manifest, is accepted by the local API server (server-side apply, dry run: nothing is changed).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import yaml from 'js-yaml';
import { admissionConfigFromEnv } from '../../src/config/admission.js';
import { resolveClusterName } from '../../src/config/cluster.js';
import { payloadCodecsFromEnv } from '../../src/config/payload-codec.js';
import { temporalConfigFromEnv, workerVersioningFromEnv } from '../../src/config/temporal.js';
import { checkLogSettings } from '../../src/log.js';
import { localKubeConfig } from '../../tools/stack/cluster.js';
import { crdPath, installCrd } from '../../tools/stack/crd.js';
import { binPath, kubeconfigPath, repoRoot, stateDir } from '../../tools/stack/paths.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { versions } from '../../tools/stack/versions.js';
import { chartCrdPath } from '../../scripts/generate-crd.js';
import { renderDeploy } from '../../scripts/generate-deploy.js';
import { releaseManifest, releaseVersion } from '../../scripts/release.js';
import {
  chartDir,
  containerEnvironment,
  helm,
  NAMESPACE,
  objectOf,
  renderChart,
  renderedLookups,
  writeValues,
  type ChartObject,
} from '../fixtures/chart.js';
import { ensureCluster } from '../fixtures/cluster.js';

const run = promisify(execFile);
const workDir = join(stateDir, 'deploy-test', `chart-${process.pid}`);
const PROCESSES = ['worker', 'trigger', 'admission'] as const;
const HELM_ONLY_LABELS = [
  'helm.sh/chart',
  'app.kubernetes.io/instance',
  'app.kubernetes.io/version',
  'app.kubernetes.io/managed-by',
];

const deployment = (objects: ChartObject[], process: string) =>
  objectOf<k8s.V1Deployment>(objects, 'Deployment', `lws-temporal-${process}`);
const podOf = (objects: ChartObject[], process: string) => deployment(objects, process).spec!.template.spec!;
const containerOf = (objects: ChartObject[], process: string) => podOf(objects, process).containers[0]!;

/** A case of the values table: what to set, the Secrets that exist, and where each value must arrive. */
interface ValuesCase {
  title: string;
  values: object;
  namespace?: string;
  secrets?: Record<string, Record<string, string>>;
  check(
    objects: ChartObject[],
    envOf: (process: (typeof PROCESSES)[number]) => Promise<Record<string, string>>,
  ): Promise<void> | void;
}

const payloadKey = randomBytes(32).toString('base64');

const cases: ValuesCase[] = [
  {
    title: "clusterName: LWS_CLUSTER_NAME of the worker and the trigger, their workflow IDs' cluster and task queue",
    values: { clusterName: 'prod-eu-1' },
    async check(_objects, envOf) {
      for (const process of ['worker', 'trigger'] as const) {
        const env = await envOf(process);
        const cluster = await resolveClusterName(new k8s.KubeConfig(), env);
        assert.equal(cluster, 'prod-eu-1', process);
        assert.equal(temporalConfigFromEnv(env, cluster).taskQueue, 'lws-temporal-prod-eu-1', process);
      }
    },
  },
  {
    title: 'temporal.address, namespace and taskQueue: the connection of the worker and the trigger',
    values: { temporal: { address: 'ns.acct.tmprl.cloud:7233', namespace: 'ns.acct', taskQueue: 'lws-prod' } },
    async check(_objects, envOf) {
      for (const process of ['worker', 'trigger'] as const) {
        const config = temporalConfigFromEnv(await envOf(process), 'c');
        assert.deepEqual(
          [config.address, config.namespace, config.taskQueue, config.tls],
          ['ns.acct.tmprl.cloud:7233', 'ns.acct', 'lws-prod', undefined],
          process,
        );
      }
    },
  },
  {
    title: 'temporal.apiKey.secretName: the key of that Secret, read from its file (TLS implied)',
    values: { temporal: { apiKey: { secretName: 'cloud-api-key' } } },
    secrets: { 'cloud-api-key': { 'api-key': 'key-123\n' } },
    async check(_objects, envOf) {
      for (const process of ['worker', 'trigger'] as const) {
        const config = temporalConfigFromEnv(await envOf(process), 'c');
        assert.equal(config.apiKey, 'key-123', process);
        assert.ok(config.apiKeyPath, `${process}: a file, followed for rotation`);
        assert.ok(config.tls, `${process}: TLS`);
      }
    },
  },
  {
    title: 'temporal.tls (mTLS with a private CA and a server name): the certificate, key and CA of the Secret',
    values: {
      temporal: {
        tls: { secretName: 'temporal-client', clientCertificate: true, serverCA: true, serverName: 'frontend.example' },
      },
    },
    secrets: { 'temporal-client': { 'tls.crt': 'CERT', 'tls.key': 'KEY', 'ca.crt': 'CA' } },
    async check(_objects, envOf) {
      for (const process of ['worker', 'trigger'] as const) {
        const tls = temporalConfigFromEnv(await envOf(process), 'c').tls;
        assert.deepEqual(
          [tls?.cert?.toString(), tls?.key?.toString(), tls?.ca?.toString(), tls?.serverName],
          ['CERT', 'KEY', 'CA', 'frontend.example'],
          process,
        );
      }
    },
  },
  {
    title: 'temporal.tls.enabled alone: TLS with the system CAs, no files (the optional Secret absent)',
    values: { temporal: { tls: { enabled: true } } },
    async check(_objects, envOf) {
      const tls = temporalConfigFromEnv(await envOf('worker'), 'c').tls;
      assert.deepEqual(tls, { serverName: undefined, ca: undefined, cert: undefined, key: undefined });
    },
  },
  {
    title: 'payloadEncryption: the key of that ID, from the Secret of keys, encrypts',
    values: { payloadEncryption: { keyId: 'key-2026-12', secretName: 'payload-keys' } },
    secrets: { 'payload-keys': { 'key-2026-12': payloadKey } },
    async check(_objects, envOf) {
      for (const process of ['worker', 'trigger'] as const) {
        const [codec, ...more] = payloadCodecsFromEnv(await envOf(process));
        assert.ok(codec && more.length === 0, process);
        const [sealed] = await codec.encode([{ metadata: {}, data: new Uint8Array([1]) }]);
        assert.equal(Buffer.from(sealed!.metadata!['encryption-key-id']!).toString(), 'key-2026-12', process);
      }
    },
  },
  {
    title: 'log.format and log.level: the three processes',
    values: { log: { format: 'human', level: 'debug' } },
    async check(_objects, envOf) {
      for (const process of PROCESSES) {
        const env = await envOf(process);
        checkLogSettings(env);
        assert.deepEqual([env.LOG_FORMAT, env.LOG_LEVEL], ['human', 'debug'], process);
      }
    },
  },
  {
    title: 'replicas: each Deployment; a PodDisruptionBudget only with two or more',
    values: { worker: { replicas: 3 }, trigger: { replicas: 1 }, admission: { replicas: 0 } },
    check(objects) {
      const replicas = PROCESSES.map((p) => deployment(objects, p).spec?.replicas);
      assert.deepEqual(replicas, [3, 1, 0]);
      const budgets = objects.filter((o) => o.kind === 'PodDisruptionBudget').map((o) => o.metadata.name);
      assert.deepEqual(budgets, ['lws-temporal-worker']);
    },
  },
  {
    title: 'resources: each container, merged with the defaults as Helm merges maps',
    values: {
      worker: { resources: { requests: { cpu: '2', memory: '1Gi' }, limits: { memory: '2Gi' } } },
      trigger: { resources: { limits: { memory: '1Gi' } } },
      admission: { resources: { limits: { cpu: null } } },
    },
    check(objects) {
      assert.deepEqual(containerOf(objects, 'worker').resources, {
        requests: { cpu: '2', memory: '1Gi' },
        limits: { cpu: '1', memory: '2Gi' },
      });
      assert.deepEqual(containerOf(objects, 'trigger').resources, {
        requests: { cpu: '50m', memory: '128Mi' },
        limits: { cpu: '500m', memory: '1Gi' },
      });
      // null removes a default.
      assert.deepEqual(containerOf(objects, 'admission').resources, {
        requests: { cpu: '50m', memory: '64Mi' },
        limits: { memory: '256Mi' },
      });
    },
  },
  {
    title: "worker.heapMb and trigger.heapMb: V8's heap limit in each process's NODE_OPTIONS",
    values: { worker: { heapMb: 512 }, trigger: { heapMb: 384 } },
    async check(_objects, envOf) {
      assert.equal((await envOf('worker')).NODE_OPTIONS, '--max-old-space-size=512 --max-semi-space-size=1');
      assert.equal((await envOf('trigger')).NODE_OPTIONS, '--max-old-space-size=384 --max-semi-space-size=1');
    },
  },
  {
    title: 'image and imagePullSecrets: every container and pod',
    values: {
      image: { repository: 'registry.example/team/lws-temporal', tag: '1.2.3', pullPolicy: 'Always' },
      imagePullSecrets: [{ name: 'regcred' }],
    },
    check(objects) {
      for (const process of PROCESSES) {
        const c = containerOf(objects, process);
        assert.deepEqual([c.image, c.imagePullPolicy], ['registry.example/team/lws-temporal:1.2.3', 'Always']);
        assert.deepEqual(podOf(objects, process).imagePullSecrets, [{ name: 'regcred' }], process);
      }
    },
  },
  {
    title: "image.tag empty: the chart's appVersion",
    values: {},
    async check(objects) {
      const version = await releaseVersion();
      for (const process of PROCESSES) {
        assert.equal(containerOf(objects, process).image, `ghcr.io/lws-temporal/lws-temporal:${version}`);
      }
    },
  },
  {
    title: "metrics.serviceMonitor: a ServiceMonitor over a metrics Service per process, on each one's metrics port",
    values: { metrics: { serviceMonitor: { enabled: true, interval: '15s', labels: { release: 'prometheus' } } } },
    check(objects) {
      const monitor = objectOf<{
        metadata: { labels: Record<string, string> };
        spec: { selector: { matchLabels: Record<string, string> }; endpoints: { port: string; interval: string }[] };
      }>(objects, 'ServiceMonitor', 'lws-temporal');
      assert.equal(monitor.metadata.labels.release, 'prometheus');
      assert.deepEqual(
        monitor.spec.endpoints.map((e) => [e.port, e.interval]),
        [
          ['metrics', '15s'],
          ['sdk-metrics', '15s'],
        ],
      );
      for (const process of PROCESSES) {
        const service = objectOf<k8s.V1Service>(objects, 'Service', `lws-temporal-${process}-metrics`);
        for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels)) {
          assert.equal(service.metadata?.labels?.[k], v, `${process}: selected by the ServiceMonitor`);
        }
        const labels = deployment(objects, process).spec!.template.metadata!.labels!;
        for (const [k, v] of Object.entries(service.spec!.selector!)) assert.equal(labels[k], v, process);
        assert.ok(containerOf(objects, process).ports?.some((p) => p.name === service.spec?.ports?.[0]?.targetPort));
      }
    },
  },
  {
    title: 'metrics off (the default): neither the Services nor the ServiceMonitor',
    values: {},
    check(objects) {
      assert.deepEqual(
        objects.filter((o) => o.kind === 'ServiceMonitor' || o.metadata.name.endsWith('-metrics')),
        [],
      );
    },
  },
  {
    title: "worker.terminationGracePeriodSeconds and worker.setCurrent: the worker's pod and its Worker Versioning",
    values: { worker: { terminationGracePeriodSeconds: 120, setCurrent: 'never' } },
    async check(objects, envOf) {
      assert.equal(podOf(objects, 'worker').terminationGracePeriodSeconds, 120);
      const versioning = workerVersioningFromEnv(await envOf('worker'), 'lws-temporal-c');
      assert.ok(versioning.enabled && versioning.setCurrent === 'never');
    },
  },
  {
    title: 'worker.terminationGracePeriodSeconds defaults to 900, a bound on the drain of its pinned runs',
    values: {},
    check(objects) {
      assert.equal(podOf(objects, 'worker').terminationGracePeriodSeconds, 900);
    },
  },
  {
    title: 'nodeSelector, tolerations, affinity, priorityClassName, podAnnotations: every pod',
    values: {
      nodeSelector: { pool: 'system' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'system', effect: 'NoSchedule' }],
      affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] } },
      priorityClassName: 'system-cluster-critical',
      podAnnotations: { 'example.com/team': 'platform' },
    },
    check(objects) {
      for (const process of PROCESSES) {
        const pod = podOf(objects, process);
        assert.deepEqual(pod.nodeSelector, { pool: 'system' }, process);
        assert.equal(pod.tolerations?.[0]?.key, 'dedicated', process);
        assert.ok(pod.affinity?.nodeAffinity, process);
        assert.equal(pod.priorityClassName, 'system-cluster-critical', process);
        const annotations = deployment(objects, process).spec!.template.metadata!.annotations;
        assert.equal(annotations?.['example.com/team'], 'platform', process);
        // Its own spread over nodes stays.
        assert.equal(pod.topologySpreadConstraints?.[0]?.topologyKey, 'kubernetes.io/hostname', process);
      }
      assert.equal(
        deployment(objects, 'worker').spec!.template.metadata!.annotations?.['prometheus.io/scrape'],
        'true',
      );
    },
  },
  {
    title: "another namespace: the webhook's certificate and configuration, and every binding's subject, follow it",
    values: {},
    namespace: 'platform-lws',
    async check(objects, envOf) {
      const config = admissionConfigFromEnv(await envOf('admission'), () => undefined);
      assert.ok(config.certs.kind === 'secret');
      assert.equal(config.certs.namespace, 'platform-lws');
      assert.ok(config.certs.hosts.includes('lws-temporal-admission.platform-lws.svc'));
      assert.equal(config.certs.name, 'lws-temporal-admission-certs');
      const webhook = objectOf<k8s.V1MutatingWebhookConfiguration>(
        objects,
        'MutatingWebhookConfiguration',
        config.webhookConfiguration ?? '',
      );
      for (const w of webhook.webhooks ?? []) {
        assert.deepEqual(
          [w.clientConfig.service?.name, w.clientConfig.service?.namespace],
          ['lws-temporal-admission', 'platform-lws'],
        );
      }
      for (const binding of objects.filter((o) => o.kind.endsWith('RoleBinding')) as unknown as k8s.V1RoleBinding[]) {
        assert.equal(binding.subjects?.[0]?.namespace, 'platform-lws', binding.metadata?.name);
      }
      const namespaced = objects.filter((o) => o.metadata.namespace !== undefined);
      assert.ok(namespaced.length > 0 && namespaced.every((o) => o.metadata.namespace === 'platform-lws'));
    },
  },
  {
    title: 'admission.webhookConfiguration.create and admissionPolicy.create false: neither object, the rest stays',
    values: { admission: { webhookConfiguration: { create: false } }, admissionPolicy: { create: false } },
    check(objects) {
      const kinds = new Set(objects.map((o) => o.kind));
      for (const kind of [
        'MutatingWebhookConfiguration',
        'ValidatingAdmissionPolicy',
        'ValidatingAdmissionPolicyBinding',
      ]) {
        assert.ok(!kinds.has(kind), kind);
      }
      deployment(objects, 'admission');
      objectOf(objects, 'Service', 'lws-temporal-admission');
    },
  },
];

describe('the Helm chart charts/lws-temporal', function () {
  this.timeout(120_000);

  after(async () => {
    await rm(workDir, { recursive: true, force: true });
  });

  it('passes `helm lint --strict`, with its defaults and with every optional object on', async () => {
    await helm(['lint', '--strict', chartDir]);
    const file = await writeValues(join(workDir, 'lint'), {
      metrics: { serviceMonitor: { enabled: true } },
      temporal: { tls: { enabled: true, clientCertificate: true, serverCA: true } },
      imagePullSecrets: [{ name: 'regcred' }],
    });
    await helm(['lint', '--strict', chartDir, '-f', file]);
  });

  it("has one version, package.json's, as its version and appVersion; requires the oldest Kubernetes tested", async () => {
    const chart = yaml.load(await readFile(join(chartDir, 'Chart.yaml'), 'utf8')) as { kubeVersion: string };
    await releaseVersion();
    const [major, minor] = versions.kubernetesFloor.split('.');
    assert.equal(chart.kubeVersion, `>=${major}.${minor}.0-0`);
  });

  it('carries the CRD in crds/, the same file as deploy/crd (npm run generate:crd writes both)', async () => {
    assert.ok(
      (await readFile(chartCrdPath, 'utf8')) === (await readFile(crdPath, 'utf8')),
      'charts/lws-temporal/crds differs from deploy/crd: run `npm run generate:crd`',
    );
  });

  it('deploy/ is what it renders with its defaults (npm run generate:deploy), without Helm labels', async () => {
    const stale: string[] = [];
    for (const [path, text] of await renderDeploy()) {
      const onDisk = await readFile(join(repoRoot, path), 'utf8').catch(() => '(missing)');
      if (onDisk !== text) stale.push(path);
      for (const doc of yaml.loadAll(text) as ChartObject[]) {
        for (const label of HELM_ONLY_LABELS)
          assert.equal(doc.metadata.labels?.[label], undefined, `${path}: ${label}`);
      }
    }
    assert.deepEqual(stale, [], 'deploy/ is stale: run `npm run generate:deploy` and commit the result');
  });

  it("labels every object as Helm's, and selects pods by the labels deploy/ selects them by", async () => {
    const objects = await renderChart();
    for (const o of objects) {
      for (const label of HELM_ONLY_LABELS) assert.ok(o.metadata.labels?.[label], `${o.kind} ${o.metadata.name}`);
    }
    for (const process of PROCESSES) {
      assert.deepEqual(deployment(objects, process).spec?.selector.matchLabels, {
        'app.kubernetes.io/name': 'lws-temporal',
        'app.kubernetes.io/component': process,
      });
    }
  });

  describe('each value reaches the process that reads it', () => {
    for (const c of cases) {
      it(c.title, async () => {
        const namespace = c.namespace ?? NAMESPACE;
        const objects = await renderChart(c.values, namespace);
        const lookups = renderedLookups(objects, c.secrets);
        let n = 0;
        const envOf = async (process: (typeof PROCESSES)[number]) =>
          containerEnvironment({
            deployment: deployment(objects, process),
            namespace,
            ...lookups,
            dir: join(workDir, 'env', `${process}-${n++}`),
          });
        await c.check(objects, envOf);
      });
    }
  });

  describe('on the local API server (server-side apply, dry run)', () => {
    let kc: k8s.KubeConfig;
    let namespaceCreated = false;
    const kubectl = (args: string[]) =>
      run(binPath('kubectl'), ['--kubeconfig', kubeconfigPath, ...args], { cwd: repoRoot, maxBuffer: 64 << 20 });

    before(async function () {
      this.timeout(240_000);
      await ensureCluster();
      kc = localKubeConfig();
      await installCrd(kc);
      const core = kc.makeApiClient(k8s.CoreV1Api);
      // A namespace another suite deleted a moment ago may still be terminating.
      const existing = await waitFor(
        `namespace ${NAMESPACE} usable`,
        async () => {
          const ns = await core.readNamespace({ name: NAMESPACE }).catch(() => null);
          return ns?.metadata?.deletionTimestamp ? undefined : ns;
        },
        { timeoutMs: 120_000, intervalMs: 500 },
      );
      if (!existing) {
        // Labelled as the install guide says, so that Pod Security admission warns about a pod it would refuse.
        const labels = { 'pod-security.kubernetes.io/enforce': 'restricted' };
        await core.createNamespace({ body: { metadata: { name: NAMESPACE, labels } } });
        namespaceCreated = true;
      }
    });

    after(async () => {
      if (namespaceCreated) await kc.makeApiClient(k8s.CoreV1Api).deleteNamespace({ name: NAMESPACE });
    });

    /** Dry-runs `objects`; the webhook configuration under a test-only name (the local stack has one of its own). */
    async function dryRun(label: string, objects: ChartObject[]): Promise<void> {
      const applied = objects.map((o) =>
        o.kind === 'MutatingWebhookConfiguration'
          ? { ...o, metadata: { ...o.metadata, name: `${o.metadata.name}-test` } }
          : o,
      );
      await mkdir(workDir, { recursive: true });
      const file = join(workDir, `${label}.yaml`);
      await writeFile(file, applied.map((o) => yaml.dump(o, { lineWidth: -1 })).join('---\n'));
      const { stdout, stderr } = await kubectl([
        'apply',
        '--server-side',
        '--dry-run=server',
        '--force-conflicts',
        '--field-manager=lws-temporal-chart-test',
        '-f',
        file,
      ]);
      for (const o of applied) {
        const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : '';
        const ref = `${o.kind.toLowerCase()}${group ? `.${group}` : ''}/${o.metadata.name}`;
        assert.ok(stdout.includes(`${ref} serverside-applied (server dry run)`), `${label}: ${ref} not applied`);
      }
      assert.equal(stderr.trim(), '', `${label}: warnings from the API server`);
    }

    it("accepts the chart's default render, its CRD included, without warnings", async () => {
      const { stdout } = await helm(['template', 'lws-temporal', chartDir, '--namespace', NAMESPACE, '--include-crds']);
      const objects = yaml.loadAll(stdout).filter(Boolean) as ChartObject[];
      assert.ok(objects.some((o) => o.kind === 'CustomResourceDefinition'));
      await dryRun('chart', objects);
    });

    it('accepts the release manifest, namespace and CRD included, without warnings', async () => {
      const objects = yaml.loadAll(await releaseManifest(await releaseVersion())).filter(Boolean) as ChartObject[];
      assert.deepEqual(
        ['Namespace', 'CustomResourceDefinition'].filter((kind) => !objects.some((o) => o.kind === kind)),
        [],
      );
      await dryRun('release', objects);
    });
  });
});
