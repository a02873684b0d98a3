// The trigger service: watches LeaderWorkerSets and the StatefulSets and pods that carry their name label (and
// namespaces, for the ones being deleted), and turns each relevant change into a workflow start or a signal. It writes
// nothing to Kubernetes.
import * as k8s from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import type { KubeRetryReason } from '../kube/retry-reasons.js';
import type { Logger } from '../log.js';
import {
  ANNOTATION_GROUP_FAILED,
  ANNOTATION_WORKERS_REFUSED,
  API_GROUP,
  API_VERSION,
  isDeleting,
  LABEL_NAME,
  LABEL_WORKER_INDEX,
  PLURAL,
  podFacts,
  statefulSetFacts,
  trimPod,
  trimStatefulSet,
  type LeaderWorkerSet,
  type ObjectKey,
  type PodFacts,
} from '../model/index.js';
import { ClusterView } from './cluster-view.js';
import { RECONCILE_RESYNC_MS } from '../workflows/reconcile.js';
import {
  groupChangeAction,
  lwsChangeMatters,
  podActions,
  reconcileAction,
  reconcileEndAction,
  statefulSetChangeMatters,
  type StartAction,
} from './decide.js';
import { WorkflowStarter } from './starter.js';
import { watchResource, type RunningWatch } from '../kube/informer.js';
import { leaderWorkerSetsJson, namespacesJson, podsJson, statefulSetsJson } from '../kube/kube-json.js';

export interface TriggerOptions {
  kc: k8s.KubeConfig;
  /** The name of the cluster `kc` reaches (config/cluster.ts): in every workflow ID and the LwsCluster attribute. */
  cluster: string;
  client: Client;
  taskQueue: string;
  log: Logger;
  searchAttributes: boolean;
  /** See StarterOptions.eagerStart. */
  eagerStart?: boolean;
  /** How often every known object is decided on again, so that a start lost to an outage is retried. */
  resyncIntervalMs?: number;
  onStarted?: ConstructorParameters<typeof WorkflowStarter>[0]['onStarted'];
  /** A watch restarted after an error: which, and why (lws_kube_api_retries_total's reason). */
  onWatchRestart?: (what: string, reason: KubeRetryReason) => void;
}

/** A pod change matters to the LWS status when the pod appears, goes, or flips readiness or termination. */
function statusRelevant(before: PodFacts | undefined, after: PodFacts | undefined): boolean {
  return (
    !before ||
    !after ||
    before.ready !== after.ready ||
    isDeleting(before) !== isDeleting(after) ||
    // A group's workers refused, as its provisioning wrote it on the leader, or its restart budget spent, as its
    // recreate wrote it there: the status tells it.
    before.annotations[ANNOTATION_WORKERS_REFUSED] !== after.annotations[ANNOTATION_WORKERS_REFUSED] ||
    before.annotations[ANNOTATION_GROUP_FAILED] !== after.annotations[ANNOTATION_GROUP_FAILED]
  );
}

export class Trigger {
  readonly view = new ClusterView();
  private readonly starter: WorkflowStarter;
  private watches: RunningWatch[] = [];
  private resyncTimer?: NodeJS.Timeout;

  constructor(private readonly opts: TriggerOptions) {
    this.starter = new WorkflowStarter({
      client: opts.client,
      cluster: opts.cluster,
      taskQueue: opts.taskQueue,
      log: opts.log,
      searchAttributes: opts.searchAttributes,
      eagerStart: opts.eagerStart,
      onStarted: opts.onStarted,
    });
  }

  private submit(actions: (StartAction | undefined)[], observedAt: number): void {
    for (const action of actions) {
      if (!action) continue;
      if (action.kind === 'start') {
        this.opts.log.debug('decision', { workflowId: action.workflowId, reason: action.reason });
      }
      this.starter.submit(action, observedAt);
    }
  }

  /** A change of a group's pods or StatefulSet; `groupReady`: it made the group Ready (see groupChangeAction). */
  private reconcileFor(
    namespace: string,
    lwsName: string | undefined,
    reason: string,
    groupReady: boolean,
  ): StartAction | undefined {
    const lws = lwsName ? this.view.lws({ namespace, name: lwsName }) : undefined;
    if (!lws) return undefined;
    return groupChangeAction(this.opts.cluster, lws, groupReady ? `${reason}: a group is Ready` : reason, groupReady);
  }

  /** Whether the group of this leader uid is Ready now (false without a uid). */
  private groupReadyNow(leaderUid: string | undefined): boolean {
    return leaderUid !== undefined && this.view.groupReady(leaderUid);
  }

  /** Only whether it is being deleted matters, for the pods deleted with it (decide.ts). */
  private onNamespace(namespace: k8s.V1Namespace, removed: boolean): void {
    const name = namespace.metadata?.name;
    if (!name) return;
    if (removed) this.view.deleteNamespace(name);
    else this.view.setNamespace(name, Boolean(namespace.metadata?.deletionTimestamp));
  }

  private onLws(lws: LeaderWorkerSet, removed: boolean): void {
    const now = Date.now();
    if (removed) {
      this.view.deleteLws(lws);
      this.submit([reconcileEndAction(this.opts.cluster, lws, 'LeaderWorkerSet deleted')], now);
      return;
    }
    const before = lws.metadata.namespace && lws.metadata.name ? this.view.lws(lws.metadata as ObjectKey) : undefined;
    this.view.setLws(lws);
    if (!lwsChangeMatters(before, lws)) return;
    const deleting = Boolean(lws.metadata.deletionTimestamp);
    this.submit(
      [
        deleting
          ? reconcileEndAction(this.opts.cluster, lws, 'LeaderWorkerSet is being deleted')
          : reconcileAction(this.opts.cluster, lws, 'LeaderWorkerSet changed'),
      ],
      now,
    );
  }

  private onPod(pod: k8s.V1Pod, removed: boolean): void {
    const now = Date.now();
    const view = podFacts(pod);
    if (!view) return;
    const wasReady = this.groupReadyNow(view.uid);
    const before = removed ? this.view.deletePod(view.uid) : this.view.setPod(view);
    // A change of a pod already known: after a restart, the first list finds every Ready group at once.
    const groupReady = before !== undefined && !wasReady && this.groupReadyNow(view.uid);
    const actions = removed ? [] : podActions(this.opts.cluster, view, this.view, this.opts.searchAttributes, now);
    if (statusRelevant(before, removed ? undefined : view)) {
      const reconcile = this.reconcileFor(
        view.namespace,
        view.labels[LABEL_NAME],
        `pod ${view.name} changed`,
        groupReady,
      );
      if (reconcile) actions.push(reconcile);
    }
    this.submit(actions, now);
  }

  private onStatefulSet(sts: k8s.V1StatefulSet, removed: boolean): void {
    const now = Date.now();
    const view = statefulSetFacts(sts);
    if (!view) return;
    const wasReady = this.groupReadyNow(view.ownerUid);
    const before = removed ? this.view.deleteStatefulSet(view.uid) : this.view.setStatefulSet(view);
    const groupReady = before !== undefined && !wasReady && this.groupReadyNow(view.ownerUid);
    if (removed || statefulSetChangeMatters(before, view)) {
      const reason = `StatefulSet ${view.name} changed`;
      this.submit([this.reconcileFor(view.namespace, view.labels[LABEL_NAME], reason, groupReady)], now);
    }
  }

  /**
   * Decide again on everything known; repeats are deduplicated by workflow ID. A reconcile told within its own resync
   * interval is left alone: its run is open and looks again by itself, and each signal is a Temporal Action.
   */
  resync(): void {
    const now = Date.now();
    const toldSince = now - RECONCILE_RESYNC_MS;
    this.starter.forgetSignalsBefore(toldSince);
    for (const lws of this.view.allLws()) {
      const action = reconcileAction(this.opts.cluster, lws, 'resync');
      if (action && !this.starter.signalledSince(action.workflowId, toldSince)) this.submit([action], now);
    }
    for (const pod of this.view.allPods())
      this.submit(podActions(this.opts.cluster, pod, this.view, this.opts.searchAttributes, now), now);
  }

  async start(): Promise<void> {
    const { kc, log } = this.opts;
    // The first lists as plain JSON over the shared HTTP/2 connection: what the watches then deliver is plain JSON too.
    const lists = {
      namespaces: namespacesJson(kc),
      lws: leaderWorkerSetsJson(kc),
      statefulSets: statefulSetsJson(kc),
      pods: podsJson(kc),
    };
    // One after the other: namespaces and LWS first (a pod's lifecycle depends on both), then StatefulSets, then pods
    // (the owner chain worker pod -> StatefulSet -> leader must resolve on the first list).
    await this.watch<k8s.V1Namespace>(
      'namespaces',
      '/api/v1/namespaces',
      () => lists.namespaces.listAll(),
      (o, removed) => this.onNamespace(o, removed),
    );
    await this.watch<LeaderWorkerSet & k8s.KubernetesObject>(
      'leaderworkersets',
      `/apis/${API_GROUP}/${API_VERSION}/${PLURAL}`,
      () => lists.lws.listAll(),
      (o, removed) => this.onLws(o, removed),
    );
    await this.watch<k8s.V1StatefulSet>(
      'statefulsets',
      '/apis/apps/v1/statefulsets',
      () => lists.statefulSets.listAll({ labelSelector: LABEL_NAME }),
      (o, removed) => this.onStatefulSet(o, removed),
      LABEL_NAME,
      trimStatefulSet,
    );
    await this.watch<k8s.V1Pod>(
      'pods',
      '/api/v1/pods',
      () => lists.pods.listAll({ labelSelector: LABEL_NAME }),
      (o, removed) => this.onPod(o, removed),
      LABEL_NAME,
      trimPod,
    );
    // The first lists arrive in any order: decide once more now that every owner is known.
    this.resync();
    this.resyncTimer = setInterval(() => this.resync(), this.opts.resyncIntervalMs ?? 60_000);
    this.resyncTimer.unref();
    log.info('watching', {
      resources: 'namespaces, leaderworkersets, statefulsets, pods',
      labelSelector: LABEL_NAME,
      workerIndexLabel: LABEL_WORKER_INDEX,
    });
  }

  /** Lists and watches one resource, handing `on` each object as it changes or goes; resolves once it is listed. */
  private async watch<T extends k8s.KubernetesObject>(
    what: string,
    path: string,
    list: () => Promise<unknown>,
    on: (obj: T, removed: boolean) => void,
    labelSelector?: string,
    trim?: (obj: T) => void,
  ): Promise<void> {
    const watch = watchResource<T>({
      kc: this.opts.kc,
      log: this.opts.log,
      what,
      path,
      labelSelector,
      // The JSON list has the shape of client-node's list objects (items, metadata.resourceVersion).
      list: list as () => Promise<k8s.KubernetesListObject<T>>,
      handlers: { upsert: (o) => on(o, false), remove: (o) => on(o, true) },
      onRestart: (reason) => this.opts.onWatchRestart?.(what, reason),
      ...(trim && { trim }),
    });
    this.watches.push(watch);
    await watch.synced;
  }

  async stop(): Promise<void> {
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    await Promise.all(this.watches.map((w) => w.stop()));
  }
}
