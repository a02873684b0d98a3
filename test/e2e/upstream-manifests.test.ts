// Upstream LeaderWorkerSet's own sample manifests (test/fixtures/upstream, copied unchanged from kubernetes-sigs/lws)
// applied with `kubectl apply --server-side` to the real stack: the local cluster with the pod admission webhook, the
// dev Temporal server, the worker and the trigger. For each manifest, in a fresh namespace, it checks what upstream's
// controller and webhook would have made of it: the leader and worker StatefulSets with upstream's labels, every
// pod's labels, annotations and LWS env, and per feature the exclusive-placement affinity, the TPU env and the volume
// claims; then it deletes the LWS and checks that nothing of it is left.
//
// The fake nodes of the local cluster have no GPUs, TPUs, ephemeral storage, TPU or node-pool labels: the manifests
// that need them run on fake nodes of their own (KWOK-managed, created here with that capacity and those labels,
// schedulable only while such a manifest runs, removed at the end). Manifests run one after the other, replicas as
// upstream wrote them. Each takes a minute or two, most of it the teardown: upstream's pods keep Kubernetes' 30 s
// grace period, and the Sequential policy ends the leader before its workers.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import yaml from 'js-yaml';
import type { LeaderWorkerSet } from '../../src/model/index.js';
import { binPath, kubeconfigPath } from '../../tools/stack/paths.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { ExtraFakeNodes } from '../../tools/stack/fake-nodes.js';
import { PROVISIONER_NAME } from '../../tools/stack/volume-provisioner.js';
import { startController, type Controller } from '../fixtures/controller.js';
import { LwsClient } from '../fixtures/lws.js';
import { ANNOTATION, LABEL, TPU } from '../fixtures/upstream-e2e.js';
import { createTestNamespace, deleteTestNamespace } from '../fixtures/namespace.js';

const fixturesDir = fileURLToPath(new URL('../fixtures/upstream/', import.meta.url));

const L = LABEL;
const A = ANNOTATION;
const GPU = 'nvidia.com/gpu';
const NODE_POOL = 'cloud.google.com/gke-nodepool';

/** What each manifest needs besides the LWS itself; the order puts those that need the own nodes first. */
interface ManifestRun {
  path: string;
  /** An upstream HorizontalPodAutoscaler manifest that targets this LWS: applied once it is Ready. */
  hpa?: string;
  /** A ServiceAccount the pods name, created first (upstream's rbac.yaml beside the manifest has it). */
  serviceAccount?: string;
}
const runs: ManifestRun[] = [
  { path: 'config/samples/leaderworkerset_exclusiveplacement.yaml' },
  { path: 'docs/examples/sample/lws-exclusive-placement.yaml' },
  { path: 'config/samples/leaderworkerset_tpu.yaml' },
  { path: 'docs/examples/vllm/TPU/lws.yaml' },
  { path: 'docs/examples/vllm/GPU/lws.yaml' },
  { path: 'docs/examples/sglang/lws.yaml' },
  { path: 'docs/examples/tensorrt-llm/lws.yaml', serviceAccount: 'tensorrt-sa' },
  { path: 'config/samples/leaderworkerset_v1_leaderworkerset.yaml', hpa: 'config/samples/hpaexample.yaml' },
  { path: 'config/samples/leaderworkerset_multi_template.yaml' },
  { path: 'docs/examples/llamacpp/k8s/lws.yaml' },
  { path: 'docs/examples/sample/lws.yaml', hpa: 'docs/examples/sample/horizontal-pod-autoscaler.yaml' },
  { path: 'docs/examples/sample/lws-multi-template.yaml' },
  { path: 'docs/examples/sample/lws-restart-policy.yaml' },
  { path: 'docs/examples/sample/lws-rollout-strategy.yaml' },
  { path: 'docs/examples/sample/lws-volume-claim-templates.yaml' },
];
/** Fixtures not applied here, and why. */
const notRun: Record<string, string> = {
  'docs/examples/sample/gang-scheduling/lws-sample-volcano.yaml':
    'schedulerName: volcano: its pods wait for the Volcano scheduler (and its PodGroups), which this cluster has not',
};

type Json = Record<string, unknown>;

function fixtureFiles(dir = fixturesDir): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return fixtureFiles(path);
    return /\.ya?ml$/.test(entry) ? [relative(fixturesDir, path)] : [];
  });
}

/** The file's YAML documents as text, unchanged, with what each holds. */
function documents(path: string): { text: string; object: Json }[] {
  const text = readFileSync(join(fixturesDir, path), 'utf8');
  return text
    .split(/^---[ \t]*$/m)
    .map((chunk) => ({ text: chunk, object: yaml.load(chunk) as Json }))
    .filter((d) => d.object !== null && d.object !== undefined);
}

function kubectl(args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      binPath('kubectl'),
      [`--kubeconfig=${kubeconfigPath}`, ...args],
      { maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`kubectl ${args.join(' ')}: ${stderr || err.message}`));
        else resolve(stdout);
      },
    );
    child.stdin?.end(input ?? '');
  });
}

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

/** Every container a pod template or pod runs: the app containers, then the init containers. */
const containersOf = (spec: k8s.V1PodSpec | undefined): k8s.V1Container[] => [
  ...(spec?.containers ?? []),
  ...(spec?.initContainers ?? []),
];

const requests = (c: k8s.V1Container, resource: string) =>
  [c.resources?.limits?.[resource], c.resources?.requests?.[resource]].some((q) => q !== undefined && /[1-9]/.test(q));

/** Upstream's test for a container that is a TPU host: a non-zero google.com/tpu limit or request. */
const requestsTpus = (c: k8s.V1Container) => requests(c, TPU);

function templatesOf(lws: LeaderWorkerSet): k8s.V1PodTemplateSpec[] {
  const lwt = lws.spec.leaderWorkerTemplate;
  return [lwt.leaderTemplate ?? lwt.workerTemplate, lwt.workerTemplate] as k8s.V1PodTemplateSpec[];
}

/** Whether a manifest needs what only the own fake nodes offer. */
function needsOwnNodes(lws: LeaderWorkerSet): boolean {
  if (lws.metadata.annotations?.[A.exclusive]) return true;
  return templatesOf(lws).some(
    (t) =>
      Object.keys(t.spec?.nodeSelector ?? {}).length > 0 ||
      containersOf(t.spec).some((c) => [TPU, GPU, 'ephemeral-storage'].some((r) => requests(c, r))),
  );
}

/**
 * A container's env as its kubelet would set it: `$(VAR)` expanded from the variables before it, label and name
 * fieldRefs read from the pod. Values from elsewhere (secrets, resources) are left undefined.
 */
function resolvedEnv(pod: k8s.V1Pod, container: k8s.V1Container): Map<string, string | undefined> {
  const env = new Map<string, string | undefined>();
  for (const v of container.env ?? []) {
    let value: string | undefined;
    if (v.valueFrom?.fieldRef) {
      const path = v.valueFrom.fieldRef.fieldPath;
      const label = /^metadata\.labels\['(.+)'\]$/.exec(path)?.[1];
      if (label !== undefined) value = pod.metadata?.labels?.[label];
      else if (path === 'metadata.name') value = pod.metadata?.name;
      else if (path === 'metadata.namespace') value = pod.metadata?.namespace;
    } else {
      value = (v.value ?? '').replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (ref, name: string | undefined) =>
        name === undefined ? '$' : (env.get(name) ?? ref),
      );
    }
    env.set(v.name, value);
  }
  return env;
}

function assertIncludes(actual: Record<string, string> | undefined, expected: Record<string, string>, what: string) {
  for (const [key, value] of Object.entries(expected)) {
    assert.equal(
      actual?.[key],
      value,
      `${what}: ${key} should be ${JSON.stringify(value)}, got ${JSON.stringify(actual?.[key])}`,
    );
  }
}

/** upstream's getSubGroupIndex: the subgroup of a worker; the leader is in subgroup 0 (unless LeaderExcluded). */
function subGroupIndex(size: number, subGroupSize: number, workerIndex: number): number {
  if ((size - 1) % subGroupSize === 0 && size % subGroupSize !== 0) return Math.trunc((workerIndex - 1) / subGroupSize);
  return Math.trunc(workerIndex / subGroupSize);
}

/**
 * The TPU env upstream's AddTPUVariables appends to each TPU container of a pod without subgroups
 * (pkg/utils/accelerators/tpu.go): every host of the group, leader first when it is a TPU host, one entry per TPU
 * container; ports from 8476 up, per container.
 */
function upstreamTpuEnv(input: {
  leaderName: string;
  subdomain: string;
  size: number;
  workerIndex: number;
  leaderRequestsTpus: boolean;
  tpuContainers: number;
}): Record<string, string>[] {
  const { leaderName, subdomain, size, workerIndex, tpuContainers } = input;
  const leaderIsHost = input.leaderRequestsTpus || workerIndex === 0;
  const podIndex = leaderIsHost ? workerIndex : workerIndex - 1;
  const ports = Array.from({ length: tpuContainers }, (_, i) => String(8476 + i));
  const pods = [
    ...(leaderIsHost ? [leaderName] : []),
    ...Array.from({ length: size - 1 }, (_, i) => `${leaderName}-${i + 1}`),
  ];
  const hostnames = pods.flatMap((pod) => ports.map(() => `${pod}.${subdomain}`));
  const addresses = pods.flatMap((pod) => ports.map((port) => `${pod}.${subdomain}:${port}`));
  return ports.map((port, i) => ({
    TPU_WORKER_HOSTNAMES: hostnames.join(','),
    TPU_WORKER_ID: String(podIndex * tpuContainers + i),
    TPU_NAME: leaderName,
    TPU_PROCESS_ADDRESSES: addresses.join(','),
    TPU_PROCESS_PORT: port,
  }));
}

/** The capacity and labels that upstream's GPU, TPU and exclusive-placement samples ask of their nodes. */
const OWN_NODE_COUNT = 4;
const ownNodeCapacity = {
  cpu: '1000',
  memory: '8Ti',
  pods: '5000',
  'ephemeral-storage': '10Ti',
  [GPU]: '16',
  [TPU]: '64',
};

describe('upstream LeaderWorkerSet manifests on the real stack (kubectl apply --server-side, worker and trigger)', function () {
  this.timeout(600_000);
  let controller: Controller;
  let core: k8s.CoreV1Api;
  let apps: k8s.AppsV1Api;
  const suffix = randomBytes(3).toString('hex');
  // Named like the cluster's own fake nodes: a test that checks its pods landed on a kwok-node-* stays right.
  let ownNodes: ExtraFakeNodes;
  let ownNodesSchedulable = true;
  /** The StorageClass the volume-claim sample names ("default"), when this suite made it. */
  let createdStorageClass: string | undefined;

  async function setOwnNodesSchedulable(schedulable: boolean): Promise<void> {
    if (ownNodesSchedulable === schedulable) return;
    await ownNodes.setSchedulable(schedulable);
    ownNodesSchedulable = schedulable;
  }

  before(async function () {
    this.timeout(600_000);
    controller = await startController();
    core = controller.kc.makeApiClient(k8s.CoreV1Api);
    apps = controller.kc.makeApiClient(k8s.AppsV1Api);
    ownNodes = new ExtraFakeNodes(
      controller.kc,
      Array.from({ length: OWN_NODE_COUNT }, (_, i) => ({
        name: `kwok-node-upstream-${suffix}-${i}`,
        labels: {
          [NODE_POOL]: `upstream-${suffix}-pool-${i}`,
          'cloud.google.com/gke-tpu-accelerator': 'tpu-v5-lite-podslice',
          'cloud.google.com/gke-tpu-topology': '4x4',
        },
      })),
      ownNodeCapacity,
    );
    await ownNodes.create();
    // lws-volume-claim-templates.yaml asks for storageClassName "default"; the cluster's class is another one. This
    // one names the cluster's provisioner, without being the default class.
    const storage = controller.kc.makeApiClient(k8s.StorageV1Api);
    const exists = await storage.readStorageClass({ name: 'default' }).then(
      () => true,
      () => false,
    );
    if (!exists) {
      await storage.createStorageClass({
        body: {
          metadata: { name: 'default', labels: { 'lws-temporal/test': 'e2e-upstream' } },
          provisioner: PROVISIONER_NAME,
          reclaimPolicy: 'Delete',
          volumeBindingMode: 'Immediate',
        },
      });
      createdStorageClass = 'default';
    }
  });

  after(async () => {
    await ownNodes?.remove();
    if (createdStorageClass) {
      await controller.kc
        .makeApiClient(k8s.StorageV1Api)
        .deleteStorageClass({ name: createdStorageClass })
        .catch(() => undefined);
    }
    await controller?.stop();
  });

  it('runs every LeaderWorkerSet fixture, or says why not', () => {
    const withLws = fixtureFiles().filter((f) => documents(f).some((d) => d.object.kind === 'LeaderWorkerSet'));
    const covered = [...runs.map((r) => r.path), ...Object.keys(notRun)];
    assert.deepEqual([...withLws].sort(), [...covered].sort());
    const hpas = fixtureFiles().filter((f) => documents(f).some((d) => d.object.kind === 'HorizontalPodAutoscaler'));
    assert.deepEqual(hpas.sort(), runs.flatMap((r) => (r.hpa ? [r.hpa] : [])).sort());
  });

  for (const [path, why] of Object.entries(notRun)) it(`${path}: not applied (${why})`);

  for (const run of runs) {
    it(run.path, async function () {
      const docs = documents(run.path);
      const lwsDoc = docs.find((d) => d.object.kind === 'LeaderWorkerSet')!;
      const manifest = lwsDoc.object as unknown as LeaderWorkerSet;
      const name = manifest.metadata.name!;
      const replicas = manifest.spec.replicas ?? 1;
      const size = manifest.spec.leaderWorkerTemplate.size ?? 1;
      await setOwnNodesSchedulable(needsOwnNodes(manifest));

      const namespace = await createTestNamespace(controller.kc, 'e2e-upstream');
      const lws = new LwsClient(controller.kc, namespace);
      try {
        if (run.serviceAccount) {
          await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: run.serviceAccount } } });
        }
        // Only the LWS of the file: a file of one document is applied as it is, the LWS of several from stdin.
        const out =
          docs.length === 1
            ? await kubectl(['apply', '--server-side', '-n', namespace, '-f', join(fixturesDir, run.path)])
            : await kubectl(['apply', '--server-side', '-n', namespace, '-f', '-'], lwsDoc.text);
        assert.match(out, new RegExp(`leaderworkerset.leaderworkerset.x-k8s.io/${name} serverside-applied`));

        const pods = await lws.waitForGroups(name, replicas, size, 240_000);
        await waitFor(
          `status.readyReplicas ${replicas}`,
          async () => ((await lws.get(name))?.status?.readyReplicas === replicas ? true : undefined),
          { timeoutMs: 60_000, intervalMs: 500 },
        );
        await checkObjects({ namespace, manifest, pods });
        if (run.hpa) await checkHpa(namespace, run.hpa, name, replicas);

        await lws.delete(name);
        await waitFor(
          `no StatefulSet, pod or Service of ${name} left`,
          async () => {
            const [sts, left, services] = await Promise.all([
              apps.listNamespacedStatefulSet({ namespace }),
              core.listNamespacedPod({ namespace }),
              core.listNamespacedService({ namespace }),
            ]);
            // Upstream's pods have 30 s grace periods; a pod the cascade deleted ends at once, as if its container
            // exited on SIGTERM. What is tested is that the cascade reaches every object, not how long it takes.
            await Promise.all(
              left.items
                .filter((p) => p.metadata?.deletionTimestamp && p.metadata.deletionGracePeriodSeconds !== 0)
                .map((p) =>
                  core
                    .deleteNamespacedPod({ namespace, name: p.metadata!.name!, gracePeriodSeconds: 0 })
                    .catch(() => undefined),
                ),
            );
            return sts.items.length + left.items.length + services.items.length === 0 ? true : undefined;
          },
          { timeoutMs: 240_000, intervalMs: 1000 },
        );
        assert.equal(await lws.get(name), undefined, 'the LWS is gone');
        const claims = manifest.spec.leaderWorkerTemplate.volumeClaimTemplates ?? [];
        if (claims.length > 0) {
          // Without persistentVolumeClaimRetentionPolicy, StatefulSets keep their claims (whenDeleted: Retain).
          const pvcs = await core.listNamespacedPersistentVolumeClaim({ namespace });
          assert.equal(pvcs.items.length, replicas * size * claims.length, 'the claims are retained');
        }
      } finally {
        await deleteTestNamespace(controller.kc, namespace);
      }
    });
  }

  /** What upstream's controller and pod webhook would have made of the manifest, object by object. */
  async function checkObjects(input: { namespace: string; manifest: LeaderWorkerSet; pods: k8s.V1Pod[] }) {
    const { namespace, manifest, pods } = input;
    const name = manifest.metadata.name!;
    const replicas = manifest.spec.replicas ?? 1;
    const size = manifest.spec.leaderWorkerTemplate.size ?? 1;
    const lwsLabels = manifest.metadata.labels ?? {};
    const lwsAnnotations = manifest.metadata.annotations ?? {};
    const [leaderTemplate, workerTemplate] = templatesOf(manifest);
    const exclusiveKey = lwsAnnotations[A.exclusive];
    const subGroup = manifest.spec.leaderWorkerTemplate.subGroupPolicy;
    const leaderRequestsTpus = containersOf(leaderTemplate!.spec).some(requestsTpus);

    // The headless Service all pods share (subdomainPolicy Shared, the default of every sample).
    const service = await core.readNamespacedService({ name, namespace });
    assert.equal(service.spec?.clusterIP, 'None', `Service ${name} is headless`);

    const leaderSts = await apps.readNamespacedStatefulSet({ name, namespace });
    const revision = leaderSts.metadata?.labels?.[L.revision];
    assert.ok(revision, `StatefulSet ${name} has the ${L.revision} label`);
    assertIncludes(
      leaderSts.metadata?.labels,
      { ...lwsLabels, [L.name]: name, [L.revision]: revision },
      `StatefulSet ${name} labels`,
    );
    assertIncludes(
      leaderSts.metadata?.annotations,
      { ...lwsAnnotations, [A.replicas]: String(replicas) },
      `StatefulSet ${name} annotations`,
    );
    assert.equal(leaderSts.spec?.replicas, replicas, `StatefulSet ${name} replicas`);
    assert.equal(leaderSts.spec?.serviceName, name, `StatefulSet ${name} serviceName`);
    assert.equal(leaderSts.spec?.podManagementPolicy, 'Parallel', `StatefulSet ${name} podManagementPolicy`);
    assert.deepEqual(
      leaderSts.spec?.selector.matchLabels,
      { [L.name]: name, [L.workerIndex]: '0' },
      `StatefulSet ${name} selector`,
    );

    const poolOfNode = new Map<string, string | undefined>();
    const nodePool = async (nodeName: string | undefined) => {
      if (!nodeName) return undefined;
      if (!poolOfNode.has(nodeName)) {
        poolOfNode.set(
          nodeName,
          (await core.readNode({ name: nodeName })).metadata?.labels?.[exclusiveKey ?? NODE_POOL],
        );
      }
      return poolOfNode.get(nodeName);
    };
    const groupDomains = new Set<string | undefined>();

    for (let g = 0; g < replicas; g++) {
      const leaderName = `${name}-${g}`;
      const groupKey = sha1(`${namespace}/${leaderName}`);
      const groupPods = pods
        .filter((p) => p.metadata?.labels?.[L.groupIndex] === String(g))
        .sort((a, b) => Number(a.metadata?.labels?.[L.workerIndex]) - Number(b.metadata?.labels?.[L.workerIndex]));
      assert.deepEqual(
        groupPods.map((p) => p.metadata?.name),
        [leaderName, ...Array.from({ length: size - 1 }, (_, i) => `${leaderName}-${i + 1}`)],
        `group ${g}: its pods by ${L.groupIndex}`,
      );

      if (size > 1) {
        const workerSts = await apps.readNamespacedStatefulSet({ name: leaderName, namespace });
        const labels = { [L.name]: name, [L.groupIndex]: String(g), [L.groupKey]: groupKey };
        assertIncludes(
          workerSts.metadata?.labels,
          { ...lwsLabels, ...labels, [L.revision]: revision },
          `StatefulSet ${leaderName} labels`,
        );
        assertIncludes(workerSts.metadata?.annotations, lwsAnnotations, `StatefulSet ${leaderName} annotations`);
        assert.deepEqual(workerSts.spec?.selector.matchLabels, labels, `StatefulSet ${leaderName} selector`);
        assert.equal(workerSts.spec?.replicas, size - 1, `StatefulSet ${leaderName} replicas`);
        assert.equal(workerSts.spec?.ordinals?.start, 1, `StatefulSet ${leaderName} ordinals.start`);
        assert.equal(workerSts.spec?.serviceName, name, `StatefulSet ${leaderName} serviceName`);
        const owner = workerSts.metadata?.ownerReferences?.find((o) => o.controller);
        assert.equal(owner?.name, leaderName, `StatefulSet ${leaderName} is owned by its leader pod`);
        if (exclusiveKey) {
          const leader = groupPods[0]!;
          const leaderDomain = (await core.readNode({ name: leader.spec!.nodeName! })).metadata?.labels?.[exclusiveKey];
          assert.equal(
            workerSts.spec?.template.spec?.nodeSelector?.[exclusiveKey],
            leaderDomain,
            `StatefulSet ${leaderName}: workers pinned by nodeSelector to the leader's ${exclusiveKey}`,
          );
        }
      }

      for (const pod of groupPods) {
        const podName = pod.metadata!.name!;
        const w = Number(pod.metadata?.labels?.[L.workerIndex]);
        const template = w === 0 ? leaderTemplate! : workerTemplate!;
        assertIncludes(
          pod.metadata?.labels,
          {
            ...(template.metadata?.labels ?? {}),
            [L.name]: name,
            [L.groupIndex]: String(g),
            [L.workerIndex]: String(w),
            [L.groupKey]: groupKey,
            [L.revision]: revision,
          },
          `pod ${podName} labels`,
        );
        assertIncludes(
          pod.metadata?.annotations,
          {
            [A.size]: String(size),
            ...(w > 0 && { [A.leaderName]: leaderName }),
            ...(exclusiveKey && { [A.exclusive]: exclusiveKey }),
            ...(w > 0 && leaderRequestsTpus && { [A.leaderRequestsTpus]: 'true' }),
          },
          `pod ${podName} annotations`,
        );
        for (const container of containersOf(pod.spec)) {
          const env = resolvedEnv(pod, container);
          const expected = {
            LWS_LEADER_ADDRESS: `${leaderName}.${name}.${namespace}`,
            LWS_GROUP_SIZE: String(size),
            LWS_WORKER_INDEX: String(w),
          };
          for (const [key, value] of Object.entries(expected)) {
            assert.equal(env.get(key), value, `pod ${podName} container ${container.name}: ${key}`);
          }
        }

        if (subGroup) {
          const s = subGroup.subGroupSize!;
          const excluded = subGroup.subGroupPolicyType === 'LeaderExcluded' && w === 0;
          const index = w === 0 ? 0 : subGroupIndex(size, s, w);
          if (excluded) assert.equal(pod.metadata?.labels?.[L.subGroupIndex], undefined, `pod ${podName}: no subgroup`);
          else {
            assertIncludes(
              pod.metadata?.labels,
              { [L.subGroupIndex]: String(index), [L.subGroupKey]: sha1(`${leaderName}/${index}`) },
              `pod ${podName} subgroup labels`,
            );
          }
        }

        const tpuContainers = containersOf(pod.spec).filter(requestsTpus);
        if (tpuContainers.length > 0) {
          assert.equal(subGroup, undefined, 'no upstream TPU sample has subgroups: their TPU env is not checked here');
          const expected = upstreamTpuEnv({
            leaderName,
            subdomain: pod.spec?.subdomain ?? '',
            size,
            workerIndex: w,
            leaderRequestsTpus,
            tpuContainers: tpuContainers.length,
          });
          assert.equal(pod.spec?.subdomain, name, `pod ${podName} subdomain`);
          tpuContainers.forEach((container, i) => {
            const env = resolvedEnv(pod, container);
            for (const [key, value] of Object.entries(expected[i]!)) {
              assert.equal(env.get(key), value, `pod ${podName} container ${container.name}: ${key}`);
            }
          });
        }

        if (exclusiveKey && w === 0) {
          const affinity = pod.spec?.affinity;
          assert.ok(
            affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.some(
              (t) =>
                t.topologyKey === exclusiveKey &&
                JSON.stringify(t.labelSelector?.matchExpressions) ===
                  JSON.stringify([{ key: L.groupKey, operator: 'In', values: [groupKey] }]),
            ),
            `leader ${podName}: required pod affinity to its own group-key on ${exclusiveKey}: ${JSON.stringify(affinity)}`,
          );
          assert.ok(
            affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.some(
              (t) =>
                t.topologyKey === exclusiveKey &&
                JSON.stringify(t.labelSelector?.matchExpressions) ===
                  JSON.stringify([
                    { key: L.groupKey, operator: 'Exists' },
                    { key: L.groupKey, operator: 'NotIn', values: [groupKey] },
                  ]),
            ),
            `leader ${podName}: required pod anti-affinity to other group-keys on ${exclusiveKey}: ${JSON.stringify(affinity)}`,
          );
        }
      }

      if (exclusiveKey) {
        const domains = new Set(await Promise.all(groupPods.map((p) => nodePool(p.spec?.nodeName))));
        assert.equal(
          domains.size,
          1,
          `group ${g}: all its pods in one ${exclusiveKey} domain, got ${[...domains].join(', ')}`,
        );
        const [domain] = domains;
        assert.ok(domain !== undefined && !groupDomains.has(domain), `group ${g}: a ${exclusiveKey} domain of its own`);
        groupDomains.add(domain);
      }

      for (const claim of manifest.spec.leaderWorkerTemplate.volumeClaimTemplates ?? []) {
        for (const pod of groupPods) {
          const claimName = `${(claim as k8s.V1PersistentVolumeClaim).metadata?.name}-${pod.metadata!.name}`;
          const pvc = await core.readNamespacedPersistentVolumeClaim({ name: claimName, namespace });
          assert.equal(pvc.status?.phase, 'Bound', `claim ${claimName} is Bound`);
          assert.ok(
            pod.spec?.volumes?.some((v) => v.persistentVolumeClaim?.claimName === claimName),
            `pod ${pod.metadata!.name} mounts claim ${claimName}`,
          );
        }
      }
    }

    const revisions = new Set(pods.map((p) => p.metadata?.labels?.[L.revision]));
    assert.deepEqual([...revisions], [revision], 'one template revision across all pods');
  }

  /** An upstream HPA manifest for the LWS: the HPA controller reads its scale subresource and the pod selector. */
  async function checkHpa(namespace: string, hpaPath: string, lwsName: string, replicas: number) {
    const hpaDoc = documents(hpaPath).find((d) => d.object.kind === 'HorizontalPodAutoscaler')!;
    const target = (hpaDoc.object.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name;
    assert.equal(target, lwsName, `${hpaPath} targets ${lwsName}`);
    await kubectl(['apply', '--server-side', '-n', namespace, '-f', join(fixturesDir, hpaPath)]);
    const hpaName = (hpaDoc.object.metadata as { name: string }).name;
    const autoscaling = controller.kc.makeApiClient(k8s.AutoscalingV2Api);
    // There is no metrics server: the HPA cannot compute a CPU utilisation (ScalingActive False,
    // FailedGetResourceMetric), but only after it got the scale (AbleToScale) and a valid selector from it.
    const hpa = await waitFor(
      `HPA ${hpaName} to read the scale of ${lwsName}`,
      async () => {
        const h = await autoscaling.readNamespacedHorizontalPodAutoscaler({ name: hpaName, namespace });
        const able = h.status?.conditions?.find((c) => c.type === 'AbleToScale');
        const active = h.status?.conditions?.find((c) => c.type === 'ScalingActive');
        return able && active ? h : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 1000 },
    );
    const conditions = JSON.stringify(hpa.status?.conditions);
    const able = hpa.status?.conditions?.find((c) => c.type === 'AbleToScale');
    const active = hpa.status?.conditions?.find((c) => c.type === 'ScalingActive');
    assert.equal(able?.status, 'True', `AbleToScale: ${conditions}`);
    assert.ok(!['InvalidSelector', 'FailedGetScale'].includes(active?.reason ?? ''), `ScalingActive: ${conditions}`);
    assert.equal(hpa.status?.currentReplicas, replicas, `HPA currentReplicas: ${JSON.stringify(hpa.status)}`);
    await kubectl(['delete', '-n', namespace, '-f', join(fixturesDir, hpaPath), '--wait=true']);
  }
});
