import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { silentLogger } from '../../src/log.js';
import { localKubeConfig } from '../../tools/stack/cluster.js';
import { clusterDir } from '../../tools/stack/paths.js';
import { waitFor } from '../../src/dev-server/processes.js';
import {
  PROVISIONER_NAME,
  STORAGE_CLASS_NAME,
  storageClassOf,
  VolumeProvisioner,
} from '../../tools/stack/volume-provisioner.js';
import { ensureCluster } from '../fixtures/cluster.js';
import { createTestNamespace, deleteTestNamespace } from '../fixtures/namespace.js';

type RetentionPolicy = k8s.V1StatefulSetPersistentVolumeClaimRetentionPolicy;

/**
 * The local cluster's volume provisioner (tools/stack/volume-provisioner.ts) with kube-controller-manager's PV binder,
 * StatefulSet controller and garbage collector: claims bind, and a StatefulSet's claims go or stay as its
 * persistentVolumeClaimRetentionPolicy says. The machine is slow and shared: waits are generous, nothing is timed.
 */
describe('volume provisioner (local cluster: default StorageClass, a PV per claim, the PV controller binds)', function () {
  this.timeout(240_000);
  const WAIT = { timeoutMs: 120_000, intervalMs: 250 };
  let kc: k8s.KubeConfig;
  let core: k8s.CoreV1Api;
  let apps: k8s.AppsV1Api;
  let storage: k8s.StorageV1Api;
  let namespace: string;

  before(async function () {
    this.timeout(300_000);
    await ensureCluster();
    kc = localKubeConfig();
    core = kc.makeApiClient(k8s.CoreV1Api);
    apps = kc.makeApiClient(k8s.AppsV1Api);
    storage = kc.makeApiClient(k8s.StorageV1Api);
    namespace = await createTestNamespace(kc, 'stack-volumes');
  });

  after(async () => {
    await deleteTestNamespace(kc, namespace);
  });

  const notFoundAsUndefined = (err: { code?: number }) => (err.code === 404 ? undefined : Promise.reject(err));
  const claim = (name: string): Promise<k8s.V1PersistentVolumeClaim | undefined> =>
    core.readNamespacedPersistentVolumeClaim({ name, namespace }).catch(notFoundAsUndefined);
  const volume = (name: string): Promise<k8s.V1PersistentVolume | undefined> =>
    core.readPersistentVolume({ name }).catch(notFoundAsUndefined);

  /** The claims, each Bound to a PV that is Bound to it; resolves with claim and PV of each. */
  function bound(names: string[]) {
    return waitFor(
      `claims ${names.join(', ')} Bound`,
      async () => {
        const out: { claim: k8s.V1PersistentVolumeClaim; pv: k8s.V1PersistentVolume }[] = [];
        for (const name of names) {
          const c = await claim(name);
          if (c?.status?.phase !== 'Bound' || !c.spec?.volumeName) return undefined;
          const pv = await volume(c.spec.volumeName);
          if (pv?.status?.phase !== 'Bound') return undefined;
          out.push({ claim: c, pv });
        }
        return out;
      },
      WAIT,
    );
  }

  /** The claims gone, and the PVs they were bound to gone too. */
  function gone(claims: { claim: k8s.V1PersistentVolumeClaim; pv: k8s.V1PersistentVolume }[]) {
    return waitFor(
      `claims ${claims.map((c) => c.claim.metadata!.name).join(', ')} and their volumes gone`,
      async () => {
        for (const { claim: c, pv } of claims) {
          if (await claim(c.metadata!.name!)) return undefined;
          if (await volume(pv.metadata!.name!)) return undefined;
        }
        return true;
      },
      WAIT,
    );
  }

  const podGone = (name: string) =>
    waitFor(
      `pod ${name} gone`,
      async () => ((await core.readNamespacedPod({ name, namespace }).catch(notFoundAsUndefined)) ? undefined : true),
      WAIT,
    );

  function statefulSet(name: string, replicas: number, policy?: RetentionPolicy): k8s.V1StatefulSet {
    const labels = { app: name };
    return {
      metadata: { name },
      spec: {
        replicas,
        serviceName: name,
        podManagementPolicy: 'Parallel',
        selector: { matchLabels: labels },
        persistentVolumeClaimRetentionPolicy: policy,
        template: {
          metadata: { labels },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [
              {
                name: 'main',
                image: 'registry.invalid/fake:1',
                volumeMounts: [{ name: 'data', mountPath: '/data' }],
              },
            ],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
          },
        ],
      },
    };
  }

  function runningAndReady(app: string, count: number) {
    return waitFor(
      `${count} Running and Ready pods of ${app}`,
      async () => {
        const pods = (await core.listNamespacedPod({ namespace, labelSelector: `app=${app}` })).items;
        const ready = pods.filter(
          (p) =>
            p.status?.phase === 'Running' &&
            p.spec?.nodeName &&
            p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
        );
        return ready.length === count ? ready : undefined;
      },
      WAIT,
    );
  }

  const scale = (name: string, replicas: number) =>
    apps.patchNamespacedStatefulSet(
      { name, namespace, body: { spec: { replicas } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );

  const ownerKinds = (c: k8s.V1PersistentVolumeClaim) => (c.metadata?.ownerReferences ?? []).map((r) => r.kind).sort();

  it('installs the default StorageClass lws-temporal-local: provisioner lws-temporal.local/fake, Immediate, Delete', async () => {
    const cls = await storage.readStorageClass({ name: STORAGE_CLASS_NAME });
    assert.equal(cls.provisioner, PROVISIONER_NAME);
    assert.equal(cls.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class'], 'true');
    assert.equal(cls.volumeBindingMode, 'Immediate');
    assert.equal(cls.reclaimPolicy, 'Delete');
  });

  it('a claim without a class gets the default one and binds to a PV made for it; deleting the claim deletes the PV', async () => {
    await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'lone' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '3Gi' } } },
      },
    });
    const [{ claim: c, pv }] = (await bound(['lone'])) as [
      { claim: k8s.V1PersistentVolumeClaim; pv: k8s.V1PersistentVolume },
    ];
    // The DefaultStorageClass admission plugin gave the class; the PV controller assigned the claim to our provisioner.
    assert.equal(c.spec?.storageClassName, STORAGE_CLASS_NAME);
    assert.equal(c.metadata?.annotations?.['volume.kubernetes.io/storage-provisioner'], PROVISIONER_NAME);
    assert.equal(pv.metadata?.name, `pvc-${c.metadata!.uid}`);
    assert.equal(pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by'], PROVISIONER_NAME);
    assert.deepEqual(
      { ns: pv.spec?.claimRef?.namespace, name: pv.spec?.claimRef?.name, uid: pv.spec?.claimRef?.uid },
      { ns: namespace, name: 'lone', uid: c.metadata!.uid },
    );
    assert.equal(pv.spec?.capacity?.storage, '3Gi');
    assert.equal(c.status?.capacity?.storage, '3Gi');
    assert.equal(pv.spec?.persistentVolumeReclaimPolicy, 'Delete');
    assert.equal(pv.spec?.storageClassName, STORAGE_CLASS_NAME);
    assert.equal(pv.spec?.nodeAffinity, undefined, 'fits any fake node');
    const path = pv.spec?.hostPath?.path;
    assert.equal(dirname(path!), join(clusterDir, 'volumes'));
    assert.ok(existsSync(path!), `${path} exists`);

    await core.deleteNamespacedPersistentVolumeClaim({ name: 'lone', namespace });
    await gone([{ claim: c, pv }]);
    await waitFor(`${path} removed`, async () => (existsSync(path!) ? undefined : true), WAIT);
  });

  it('a StatefulSet with a volumeClaimTemplate gets Bound claims data-<set>-<i> and Running, Ready pods that use them', async () => {
    await apps.createNamespacedStatefulSet({ namespace, body: statefulSet('plain', 2) });
    const claims = await bound(['data-plain-0', 'data-plain-1']);
    const pods = await runningAndReady('plain', 2);
    for (const p of pods) {
      const volumes = p.spec?.volumes?.filter((v) => v.persistentVolumeClaim) ?? [];
      assert.deepEqual(
        volumes.map((v) => v.persistentVolumeClaim!.claimName),
        [`data-${p.metadata!.name}`],
      );
    }
    // No retention policy is Retain/Retain: the claims have no owner the garbage collector would follow.
    for (const { claim: c } of claims) assert.deepEqual(ownerKinds(c), []);
  });

  describe('persistentVolumeClaimRetentionPolicy (two StatefulSets side by side: Delete/Delete and Retain/Retain)', () => {
    let deleted: Awaited<ReturnType<typeof bound>>;
    let retained: Awaited<ReturnType<typeof bound>>;

    before(async () => {
      await apps.createNamespacedStatefulSet({
        namespace,
        body: statefulSet('dd', 2, { whenScaled: 'Delete', whenDeleted: 'Delete' }),
      });
      await apps.createNamespacedStatefulSet({
        namespace,
        body: statefulSet('rr', 2, { whenScaled: 'Retain', whenDeleted: 'Retain' }),
      });
      deleted = await bound(['data-dd-0', 'data-dd-1']);
      retained = await bound(['data-rr-0', 'data-rr-1']);
      await runningAndReady('dd', 2);
      await runningAndReady('rr', 2);
    });

    it('whenDeleted Delete: a claim is owned by the StatefulSet; Retain/Retain: by nothing', async () => {
      for (const { claim: c } of deleted) assert.deepEqual(ownerKinds(c), ['StatefulSet']);
      for (const { claim: c } of retained) assert.deepEqual(ownerKinds(c), []);
    });

    it('scaled from 2 to 1: whenScaled Delete deletes the claim of pod 1 and its PV, Retain keeps it Bound', async () => {
      await scale('dd', 1);
      await scale('rr', 1);
      await gone([deleted[1]!]);
      await podGone('rr-1');
      // Both went through the same controllers at the same time: dd's claim is gone, rr's is still Bound.
      const [kept0, kept1] = await bound(['data-rr-0', 'data-rr-1']);
      assert.equal(kept1!.pv.metadata!.uid, retained[1]!.pv.metadata!.uid, 'the same PV as before');
      assert.deepEqual(ownerKinds(kept1!.claim), []);
      assert.equal(kept0!.claim.metadata!.uid, retained[0]!.claim.metadata!.uid);
      await bound(['data-dd-0']);
    });

    it('StatefulSet deleted: whenDeleted Delete deletes the remaining claim and its PV, Retain keeps both Bound', async () => {
      await apps.deleteNamespacedStatefulSet({ name: 'dd', namespace });
      await apps.deleteNamespacedStatefulSet({ name: 'rr', namespace });
      await gone([deleted[0]!]);
      await podGone('rr-0');
      const kept = await bound(['data-rr-0', 'data-rr-1']);
      assert.deepEqual(
        kept.map((k) => k.pv.metadata!.uid),
        retained.map((r) => r.pv.metadata!.uid),
      );
    });
  });

  it('restart-safe: started after a claim was assigned to it, it provisions; started after a claim went, it deletes the Released PV', async () => {
    // A class and provisioner name of this test's own (not the default class), served by provisioners in this process.
    const provisioner = `lws-temporal.local/test-${namespace}`;
    const className = `test-${namespace}`;
    const volumesDir = await mkdtemp(join(tmpdir(), 'lws-volumes-'));
    await storage.createStorageClass({
      body: { ...storageClassOf(className, provisioner), metadata: { name: className } },
    });
    let running: VolumeProvisioner | undefined;
    try {
      await core.createNamespacedPersistentVolumeClaim({
        namespace,
        body: {
          metadata: { name: 'late' },
          spec: {
            storageClassName: className,
            accessModes: ['ReadWriteOnce'],
            resources: { requests: { storage: '1Gi' } },
          },
        },
      });
      // The PV controller's part happens without any provisioner: it assigns the claim, which then stays Pending.
      await waitFor(
        'the claim assigned to the test provisioner',
        async () => {
          const c = await claim('late');
          return c?.metadata?.annotations?.['volume.kubernetes.io/storage-provisioner'] === provisioner ? c : undefined;
        },
        WAIT,
      );
      assert.equal((await claim('late'))?.status?.phase, 'Pending');

      running = new VolumeProvisioner(kc, silentLogger, { volumesDir, provisioner });
      await running.start();
      const [first] = await bound(['late']);
      await running.stop();
      running = undefined;

      await core.deleteNamespacedPersistentVolumeClaim({ name: 'late', namespace });
      await waitFor(
        'the PV Released by the PV controller',
        async () => ((await volume(first!.pv.metadata!.name!))?.status?.phase === 'Released' ? true : undefined),
        WAIT,
      );
      running = new VolumeProvisioner(kc, silentLogger, { volumesDir, provisioner });
      await running.start();
      await gone([first!]);
      assert.equal(existsSync(first!.pv.spec!.hostPath!.path), false, 'its directory removed');
    } finally {
      await running?.stop();
      await storage.deleteStorageClass({ name: className }).catch(() => undefined);
      await rm(volumesDir, { recursive: true, force: true });
    }
  });
});
