// A dynamic volume provisioner for the local cluster, which has no storage of its own: without one, every
// PersistentVolumeClaim (a StatefulSet's volumeClaimTemplates, so an LWS's) stays Pending and its pod unschedulable.
//
// It plays the external-provisioner half of the protocol kube-controller-manager's PV controller speaks
// (pkg/controller/volume/persistentvolume/pv_controller.go):
// - for an unbound claim whose class names a provisioner that is not an in-tree `kubernetes.io/` plugin, the PV
//   controller only annotates the claim with `volume.kubernetes.io/storage-provisioner` (and the beta key) and emits
//   ExternalProvisioning (provisionClaimOperationExternal); a claim without a class gets the default class first, from
//   the DefaultStorageClass admission plugin or, retroactively, from the PV controller (assignDefaultStorageClass);
// - this provisioner then creates a PV pre-bound to the claim (claimRef with the claim's uid) and annotated
//   `pv.kubernetes.io/provisioned-by`; the PV controller's syncVolume sees a PV bound to a claim whose volumeName is
//   empty and queues the claim, whose sync finds the pre-bound PV (FindMatchingVolume) and binds both;
// - when the claim goes, the PV controller marks the PV Released; with reclaim policy Delete it looks for a deleter
//   plugin by the provisioned-by name, finds none and leaves the delete to the external provisioner
//   (deleteVolumeOperation: "External deleter for volume requested, ignoring"): this provisioner deletes it.
//
// The volumes are hostPath directories under the cluster directory with no node affinity: KWOK's fake kubelets mount
// nothing, and a PV without node affinity fits every node, so kube-scheduler places pods as it would without claims.
import { mkdir, readdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { Logger } from '../../src/log.js';
import { watchResource, type RunningWatch } from '../../src/kube/informer.js';

export const STORAGE_CLASS_NAME = 'lws-temporal-local';
export const PROVISIONER_NAME = 'lws-temporal.local/fake';
const ANN_DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';
/** Set on a claim by the PV controller: which provisioner is to create its volume (the beta key is still written). */
const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
/** Set on a PV by whoever provisioned it; the PV controller finds its deleter plugin (none, here) by this name. */
const ANN_PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';

/** The cluster's default class: every claim without a class gets it and binds at once (no WaitForFirstConsumer). */
export function storageClassOf(name = STORAGE_CLASS_NAME, provisioner = PROVISIONER_NAME): k8s.V1StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name, annotations: { [ANN_DEFAULT_CLASS]: 'true' } },
    provisioner,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
  };
}

/** Creates the class, or leaves an existing one alone (its provisioner and policies cannot change); true if created. */
export async function ensureStorageClass(
  kc: k8s.KubeConfig,
  log: Logger,
  cls: k8s.V1StorageClass = storageClassOf(),
): Promise<boolean> {
  const storage = kc.makeApiClient(k8s.StorageV1Api);
  try {
    await storage.createStorageClass({ body: cls });
    log.info('storage class created', { name: cls.metadata?.name, provisioner: cls.provisioner });
    return true;
  } catch (err) {
    if (codeOf(err) !== 409) throw err;
    const existing = await storage.readStorageClass({ name: cls.metadata!.name! });
    if (existing.provisioner !== cls.provisioner) {
      log.warn('a storage class of that name exists with another provisioner; its claims are not ours', {
        name: cls.metadata?.name,
        provisioner: existing.provisioner,
      });
    }
    return false;
  }
}

const codeOf = (err: unknown) => (err as { code?: number }).code;

/** Per-object retries with a delay that doubles up to 30 s; `cancel` (a success, the object gone) resets it. */
class Retries {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly delays = new Map<string, number>();

  schedule(key: string, run: () => void): number {
    const delayMs = Math.min((this.delays.get(key) ?? 500) * 2, 30_000);
    clearTimeout(this.timers.get(key));
    this.delays.set(key, delayMs);
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        run();
      }, delayMs),
    );
    return delayMs;
  }

  cancel(key: string): void {
    clearTimeout(this.timers.get(key));
    this.timers.delete(key);
    this.delays.delete(key);
  }

  /** A retry is waiting: an event meanwhile need not act, the retry reads the latest state. */
  pending(key: string): boolean {
    return this.timers.has(key);
  }

  clear(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.delays.clear();
  }
}

export interface VolumeProvisionerOptions {
  /** Where the volumes' directories go, one per PV; created on demand. */
  volumesDir: string;
  /** The provisioner name it answers to (a StorageClass's `provisioner`); default PROVISIONER_NAME. */
  provisioner?: string;
}

/**
 * List then watch of claims and volumes across the cluster; every action is idempotent (the PV's name is the claim's
 * uid, a delete carries the PV's uid), so a restart, a second instance or a replayed event changes nothing.
 */
export class VolumeProvisioner {
  readonly provisioner: string;
  private readonly volumesDir: string;
  private readonly core: k8s.CoreV1Api;
  private readonly storage: k8s.StorageV1Api;
  private watches: RunningWatch[] = [];
  /** The latest state of each claim and volume seen, by uid, so that a retry acts on what is current. */
  private readonly claims = new Map<string, k8s.V1PersistentVolumeClaim>();
  private readonly volumes = new Map<string, k8s.V1PersistentVolume>();
  private readonly inFlight = new Set<string>();
  private readonly retries = new Retries();
  private stopped = false;

  constructor(
    private readonly kc: k8s.KubeConfig,
    private readonly log: Logger,
    opts: VolumeProvisionerOptions,
  ) {
    this.provisioner = opts.provisioner ?? PROVISIONER_NAME;
    this.volumesDir = resolve(opts.volumesDir);
    this.core = kc.makeApiClient(k8s.CoreV1Api);
    this.storage = kc.makeApiClient(k8s.StorageV1Api);
  }

  /** Resolves once both first lists are handled (provisions and deletes they called for are under way). */
  async start(): Promise<void> {
    await mkdir(this.volumesDir, { recursive: true });
    const pvcs = watchResource<k8s.V1PersistentVolumeClaim>({
      kc: this.kc,
      log: this.log,
      what: 'persistentvolumeclaims',
      path: '/api/v1/persistentvolumeclaims',
      list: () => this.core.listPersistentVolumeClaimForAllNamespaces(),
      handlers: {
        upsert: (claim) => this.onClaim(claim),
        remove: (claim) => this.forget(this.claims, claim.metadata?.uid),
      },
    });
    const pvs = watchResource<k8s.V1PersistentVolume>({
      kc: this.kc,
      log: this.log,
      what: 'persistentvolumes',
      path: '/api/v1/persistentvolumes',
      list: () => this.core.listPersistentVolume(),
      handlers: { upsert: (pv) => this.onVolume(pv), remove: (pv) => this.onVolumeGone(pv) },
    });
    this.watches = [pvcs, pvs];
    await Promise.all([pvcs.synced, pvs.synced]);
    await this.removeOrphanDirectories().catch((err: unknown) =>
      this.log.warn('could not sweep the volume directories', { error: String(err) }),
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.retries.clear();
    await Promise.all(this.watches.map((w) => w.stop()));
  }

  private forget<T>(cache: Map<string, T>, uid: string | undefined): void {
    if (!uid) return;
    cache.delete(uid);
    this.retries.cancel(uid);
  }

  /** The provisioner the PV controller assigned the claim to, if it is this one and the claim still wants a volume. */
  private wantsVolume(claim: k8s.V1PersistentVolumeClaim): boolean {
    const m = claim.metadata;
    const assigned = m?.annotations?.[ANN_STORAGE_PROVISIONER] ?? m?.annotations?.[ANN_BETA_STORAGE_PROVISIONER];
    return (
      assigned === this.provisioner &&
      !m?.deletionTimestamp &&
      !claim.spec?.volumeName &&
      (claim.status?.phase ?? 'Pending') === 'Pending'
    );
  }

  private onClaim(claim: k8s.V1PersistentVolumeClaim): void {
    const uid = claim.metadata?.uid;
    if (!uid) return;
    this.claims.set(uid, claim);
    if (!this.wantsVolume(claim)) {
      this.retries.cancel(uid);
      return;
    }
    if (!this.inFlight.has(uid) && !this.retries.pending(uid)) void this.provision(uid);
  }

  private pathOf(pvName: string): string {
    return join(this.volumesDir, pvName);
  }

  /** A directory this provisioner made (so one it may remove): directly under volumesDir. */
  private ownsPath(path: string | undefined): path is string {
    return path !== undefined && dirname(resolve(path)) === this.volumesDir;
  }

  private async provision(uid: string): Promise<void> {
    const claim = this.claims.get(uid);
    if (this.stopped || !claim || !this.wantsVolume(claim)) return;
    const { namespace, name } = claim.metadata as { namespace: string; name: string };
    const className = claim.spec?.storageClassName ?? '';
    const pvName = `pvc-${uid}`;
    const fields = { namespace, name, uid, pv: pvName, storageClass: className };
    if (!className) {
      // The PV controller assigns a provisioner only from a class, so this claim was annotated by hand.
      this.log.warn('claim assigned to this provisioner has no class; leaving it', fields);
      return;
    }
    this.inFlight.add(uid);
    try {
      // The class's reclaim policy; a claim the PV controller assigned to us always names a class it found.
      const cls = await this.storage.readStorageClass({ name: className });
      if (cls.provisioner !== this.provisioner) {
        this.log.warn('claim assigned to this provisioner, but its class names another; leaving it', {
          ...fields,
          classProvisioner: cls.provisioner,
        });
        return;
      }
      const request = claim.spec?.resources?.requests?.storage;
      if (!request) {
        this.log.warn('claim requests no storage; leaving it', fields);
        return;
      }
      const path = this.pathOf(pvName);
      await mkdir(path, { recursive: true });
      const started = Date.now();
      await this.core.createPersistentVolume({
        body: {
          apiVersion: 'v1',
          kind: 'PersistentVolume',
          metadata: { name: pvName, annotations: { [ANN_PROVISIONED_BY]: this.provisioner } },
          spec: {
            capacity: { storage: request },
            accessModes: claim.spec?.accessModes?.length ? claim.spec.accessModes : ['ReadWriteOnce'],
            volumeMode: claim.spec?.volumeMode ?? 'Filesystem',
            persistentVolumeReclaimPolicy: cls.reclaimPolicy ?? 'Delete',
            storageClassName: className,
            claimRef: {
              apiVersion: 'v1',
              kind: 'PersistentVolumeClaim',
              namespace,
              name,
              uid,
              resourceVersion: claim.metadata?.resourceVersion,
            },
            hostPath: { path, type: 'DirectoryOrCreate' },
          },
        },
      });
      this.retries.cancel(uid);
      this.log.info('volume provisioned', { ...fields, capacity: request, createMs: Date.now() - started });
    } catch (err) {
      if (codeOf(err) === 409) {
        // Created before (an earlier run, a retried event): the PV controller binds it either way.
        this.retries.cancel(uid);
        this.log.debug('volume already exists', fields);
        return;
      }
      const retryInMs = this.retries.schedule(uid, () => void this.provision(uid));
      this.log.warn('could not provision a volume; retrying', { ...fields, error: String(err), retryInMs });
    } finally {
      this.inFlight.delete(uid);
    }
  }

  private provisionedHere(pv: k8s.V1PersistentVolume): boolean {
    return pv.metadata?.annotations?.[ANN_PROVISIONED_BY] === this.provisioner;
  }

  private onVolume(pv: k8s.V1PersistentVolume): void {
    const uid = pv.metadata?.uid;
    if (!uid || !this.provisionedHere(pv)) return;
    this.volumes.set(uid, pv);
    if (!this.mustDelete(pv)) {
      this.retries.cancel(uid);
      return;
    }
    if (!this.inFlight.has(uid) && !this.retries.pending(uid)) void this.deleteVolume(uid);
  }

  /** Released (its claim is gone) and to be deleted: the PV controller leaves that to us. */
  private mustDelete(pv: k8s.V1PersistentVolume): boolean {
    return (
      pv.status?.phase === 'Released' &&
      pv.spec?.persistentVolumeReclaimPolicy === 'Delete' &&
      !pv.metadata?.deletionTimestamp
    );
  }

  private async deleteVolume(uid: string): Promise<void> {
    const pv = this.volumes.get(uid);
    if (this.stopped || !pv || !this.mustDelete(pv)) return;
    const name = pv.metadata!.name!;
    const claim = pv.spec?.claimRef;
    const fields = { pv: name, uid, claim: claim ? `${claim.namespace}/${claim.name}` : undefined };
    this.inFlight.add(uid);
    try {
      // The directory first: once the PV is gone nothing would name it any more (start() sweeps leftovers too).
      const path = pv.spec?.hostPath?.path;
      if (this.ownsPath(path)) await rm(path, { recursive: true, force: true });
      await this.core.deletePersistentVolume({ name, body: { preconditions: { uid } } });
      this.retries.cancel(uid);
      this.log.info('released volume deleted', fields);
    } catch (err) {
      // 404: gone already. 409: the name belongs to another PV now.
      if (codeOf(err) === 404 || codeOf(err) === 409) {
        this.retries.cancel(uid);
        return;
      }
      const retryInMs = this.retries.schedule(uid, () => void this.deleteVolume(uid));
      this.log.warn('could not delete a released volume; retrying', { ...fields, error: String(err), retryInMs });
    } finally {
      this.inFlight.delete(uid);
    }
  }

  private onVolumeGone(pv: k8s.V1PersistentVolume): void {
    this.forget(this.volumes, pv.metadata?.uid);
    const path = pv.spec?.hostPath?.path;
    if (!this.provisionedHere(pv) || !this.ownsPath(path)) return;
    rm(path, { recursive: true, force: true }).catch((err: unknown) =>
      this.log.warn('could not remove a volume directory', { pv: pv.metadata?.name, path, error: String(err) }),
    );
  }

  /**
   * Directories left by PVs that went while no provisioner ran. Judged by the API, not the watch cache: a PV created a
   * moment ago may not have been delivered yet.
   */
  private async removeOrphanDirectories(): Promise<void> {
    for (const entry of await readdir(this.volumesDir)) {
      if (!entry.startsWith('pvc-') || this.inFlight.has(entry.slice('pvc-'.length))) continue;
      const exists = await this.core.readPersistentVolume({ name: entry }).then(
        () => true,
        (err: unknown) => (codeOf(err) === 404 ? false : Promise.reject(err)),
      );
      if (exists) continue;
      await rm(this.pathOf(entry), { recursive: true, force: true });
      this.log.info('removed the directory of a volume that is gone', { path: this.pathOf(entry) });
    }
  }
}
