// Every activity against the real local cluster (API server, StatefulSet controller, garbage collector, KWOK nodes).
// Leader pods are plain pods with a leader's labels, so each test controls exactly which objects exist.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createActivities, HEARTBEAT_INTERVAL_MS } from '../../src/activities/index.js';

const REPLACEMENT_CHECK_MS = 2000;
import { makeClients, type KubeClients } from '../../src/activities/clients.js';
import { appliedHash, ensureLeaderStatefulSet } from '../../src/activities/leader-statefulset.js';
import { ANNOTATION_APPLIED_HASH, ANNOTATION_OLD_PODS_GONE, FORCE_DELETE_MARGIN_MS } from '../../src/model/index.js';
import { ensureWorkerStatefulSet } from '../../src/activities/worker-statefulset.js';
import { ensureHeadlessService } from '../../src/activities/services.js';
import { releaseForegroundDeletion } from '../../src/activities/deletes.js';
import { waitForNamesFreed } from '../../src/activities/waits.js';
import { classify, KUBERNETES_API_ERROR } from '../../src/activities/kube-errors.js';
import { TransientKubernetesError } from '../../src/kube/api-errors.js';
import type { AllActivities, LeaderPodActivities } from '../../src/activities/types.js';
import {
  ANNOTATION_POD_TERMINATION_POLICY,
  ANNOTATION_SIZE,
  ANNOTATION_WORKERS_REFUSED,
  LABEL_TEMPLATE_REVISION_HASH,
  API_GROUP,
  API_GROUP_VERSION,
  API_VERSION,
  buildLeaderStatefulSet,
  buildWorkerStatefulSet,
  KIND,
  LABEL_GROUP_INDEX,
  LABEL_GROUP_KEY,
  LABEL_NAME,
  LABEL_WORKER_INDEX,
  lwsFacts,
  PLURAL,
  targetOf,
  type LeaderWorkerSet,
  notWantedAbove,
  type ObjectIdentity,
} from '../../src/model/index.js';
import { localKubeConfig } from '../../tools/stack/cluster.js';
import { binPath, kubeconfigPath } from '../../tools/stack/paths.js';
import { freePort, SERVER_PORTS, waitFor } from '../../src/dev-server/processes.js';
import { ensureCluster } from '../fixtures/cluster.js';
import { identityOf } from '../fixtures/fake-activities.js';
import { installCrd } from '../../tools/stack/crd.js';
import { observeKubeRequests } from '../../src/kube/requests.js';
import { NAMESPACE_TERMINATING } from '../../src/shared/failures.js';
import { createTestNamespace, deleteTestNamespace } from '../fixtures/namespace.js';

const run = promisify(execFile);
const container = { name: 'main', image: 'registry.invalid/fake:1' };
const lwsApi = { group: API_GROUP, version: API_VERSION, plural: PLURAL };

/** The rejection of a promise that must fail. */
async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => assert.fail(`expected a failure, got ${JSON.stringify(value)}`),
    (err: unknown) => err,
  );
}

function assertPermanent(err: unknown, code: number, message: string | RegExp): ApplicationFailure {
  assert.ok(err instanceof ApplicationFailure, `expected an ApplicationFailure, got ${String(err)}`);
  assert.equal(err.nonRetryable, true);
  assert.equal(err.type, KUBERNETES_API_ERROR);
  if (typeof message === 'string') assert.equal(err.message, message);
  else assert.match(err.message, message);
  assert.deepEqual((err.details?.[0] as { code: number }).code, code);
  return err;
}

describe('activities against the cluster', function () {
  this.timeout(60_000);
  let kc: k8s.KubeConfig;
  let core: k8s.CoreV1Api;
  let apps: k8s.AppsV1Api;
  let custom: k8s.CustomObjectsApi;
  let act: AllActivities & LeaderPodActivities;
  /** For the builds from a whole LWS, which the activities make once they have read the LWS of their target. */
  let clients: KubeClients;
  let namespace: string;

  before(async function () {
    this.timeout(180_000);
    await ensureCluster();
    kc = localKubeConfig();
    core = kc.makeApiClient(k8s.CoreV1Api);
    apps = kc.makeApiClient(k8s.AppsV1Api);
    custom = kc.makeApiClient(k8s.CustomObjectsApi);
    // Replacement waits look every 2 s here instead of 15 s: the checks below are the same, sooner.
    act = createActivities(kc, undefined, { replacementCheckMs: REPLACEMENT_CHECK_MS });
    clients = makeClients(kc);
    await installCrd(kc);
    namespace = await createTestNamespace(kc, 'activities-test');
  });

  after(async () => {
    await deleteTestNamespace(kc, namespace);
  });

  /** A LeaderWorkerSet stored on the API server (with its uid), groups of `size` with 2 s grace periods. */
  async function createLws(name: string, spec: Partial<LeaderWorkerSet['spec']> = {}): Promise<LeaderWorkerSet> {
    const body = {
      apiVersion: API_GROUP_VERSION,
      kind: KIND,
      metadata: { name, namespace },
      spec: {
        replicas: 1,
        podTerminationPolicy: 'Parallel',
        ...spec,
        leaderWorkerTemplate: {
          size: 3,
          workerTemplate: {
            spec: {
              terminationGracePeriodSeconds: 2,
              containers: [{ ...container, env: [{ name: 'USER_VAR', value: 'kept' }] }],
            },
          },
          ...spec.leaderWorkerTemplate,
        },
      },
    };
    return (await custom.createNamespacedCustomObject({ ...lwsApi, namespace, body })) as LeaderWorkerSet;
  }

  /** A plain pod standing in for a leader pod: the leader's labels, no StatefulSet, Ready within a second or so. */
  async function createPod(
    name: string,
    opts: { labels?: Record<string, string>; grace?: number; nodeName?: string } = {},
  ): Promise<ObjectIdentity> {
    const pod = await core.createNamespacedPod({
      namespace,
      body: {
        // The admission webhook refuses an LWS pod without its group size, as upstream's does.
        metadata: {
          name,
          labels: opts.labels ?? {},
          ...(opts.labels?.[LABEL_NAME] !== undefined && { annotations: { [ANNOTATION_SIZE]: '3' } }),
        },
        spec: {
          terminationGracePeriodSeconds: opts.grace ?? 2,
          containers: [container],
          ...(opts.nodeName !== undefined && { nodeName: opts.nodeName }),
        },
      },
    });
    return { namespace, name, uid: pod.metadata?.uid ?? '' };
  }

  const leaderLabels = (lws: string) => ({ [LABEL_NAME]: lws, [LABEL_WORKER_INDEX]: '0' });
  const readSts = (name: string) => apps.readNamespacedStatefulSet({ namespace, name });
  const readPod = (name: string) => core.readNamespacedPod({ namespace, name });
  const orNullSts = (name: string) => readSts(name).catch(() => null);

  describe('reads', () => {
    it("getLeaderWorkerSet gives the stored object's facts, the API server's defaults in, and null when absent", async () => {
      const created = await createLws('reads', { replicas: 2 });
      const got = await act.getLeaderWorkerSet({ namespace, name: 'reads' });
      assert.equal(got?.metadata.uid, created.metadata.uid);
      assert.equal(got?.spec.replicas, 2);
      assert.equal(got?.spec.startupPolicy, 'LeaderCreated');
      assert.equal(await act.getLeaderWorkerSet({ namespace, name: 'no-such-lws' }), null);
    });

    it('getPod and getStatefulSet summarise, and give null when absent', async () => {
      const pod = await createPod('summary', { labels: { a: 'b', [LABEL_GROUP_INDEX]: '0' } });
      const info = await act.getPod(pod);
      assert.equal(info?.uid, pod.uid);
      assert.deepEqual(info?.labels, { [LABEL_GROUP_INDEX]: '0' }, "only this controller's labels");
      assert.equal(info?.restartCount, 0);
      assert.equal(info?.deletionTimestamp, undefined);
      assert.equal(await act.getPod({ namespace, name: 'no-such-pod' }), null);
      assert.equal(await act.getStatefulSet({ namespace, name: 'no-such-sts' }), null);
    });
  });

  describe('the LWS as facts, and the writes by target (issue 28)', () => {
    const patchReplicas = (name: string, replicas: number) =>
      custom.patchNamespacedCustomObject(
        { ...lwsApi, namespace, name, body: { spec: { replicas } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );

    /** The worker template's image (the leader template is the worker's when unset). */
    const patchImage = async (name: string, image: string) => {
      const lws = (await custom.getNamespacedCustomObject({ ...lwsApi, namespace, name })) as LeaderWorkerSet;
      const lwt = lws.spec.leaderWorkerTemplate;
      lwt.workerTemplate.spec!.containers[0]!.image = image;
      await custom.patchNamespacedCustomObject(
        { ...lwsApi, namespace, name, body: { spec: { leaderWorkerTemplate: lwt } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
    };

    it('getLeaderWorkerSet: the facts the workflows decide on, none of the templates nor managedFields', async () => {
      const created = await createLws('facts', { replicas: 2 });
      const facts = await act.getLeaderWorkerSet({ namespace, name: 'facts' });
      assert.deepEqual(facts?.metadata, {
        namespace,
        name: 'facts',
        uid: created.metadata.uid,
        generation: 1,
        creationTimestamp: created.metadata.creationTimestamp,
      });
      assert.equal(facts?.spec.replicas, 2);
      assert.equal(facts?.spec.leaderWorkerTemplate.size, 3);
      assert.equal(facts?.spec.podTerminationPolicy, 'Parallel');
      assert.equal(facts?.revision, lwsFacts(created).revision);
      const text = JSON.stringify(facts);
      for (const never of ['kept', 'managedFields', container.image]) assert.ok(!text.includes(never), never);
      assert.equal(await act.getLeaderWorkerSet({ namespace, name: 'no-such-lws' }), null);
    });

    it('each write reads the LWS itself and acts only on the one decided on: another generation is stale', async () => {
      await createLws('target');
      const target = targetOf((await act.getLeaderWorkerSet({ namespace, name: 'target' }))!);
      assert.equal(await act.ensureControllerRevisionOf(target), 'created');
      assert.equal(await act.ensureHeadlessServiceOf(target), 'created');
      assert.equal(await act.ensureLeaderStatefulSetOf(target), 'created');
      const leaders = await readSts('target');
      assert.equal(leaders.metadata?.ownerReferences?.[0]?.uid, target.uid);
      assert.equal(
        leaders.spec?.template.spec?.containers[0]?.image,
        container.image,
        'built from the stored template',
      );

      await patchReplicas('target', 2);
      assert.equal(await act.ensureControllerRevisionOf(target), 'stale');
      assert.equal(await act.ensureHeadlessServiceOf(target), 'stale');
      assert.equal(await act.ensureLeaderStatefulSetOf(target, { replicas: 3 }), 'stale');
      assert.equal((await readSts('target')).spec?.replicas, 1, 'the stale decision changed nothing');

      const now = targetOf((await act.getLeaderWorkerSet({ namespace, name: 'target' }))!);
      assert.equal(now.generation, target.generation + 1);
      assert.equal(await act.ensureLeaderStatefulSetOf(now), 'updated');
      assert.equal((await readSts('target')).spec?.replicas, 2);
      assert.equal(await act.ensureLeaderStatefulSetOf({ ...now, uid: 'another-incarnation' }), 'stale');
      assert.equal(await act.ensureControllerRevisionOf({ ...now, ref: { namespace, name: 'no-such-lws' } }), 'stale');
    });

    it("taking over another controller's objects: its revision key is kept while its revision holds the same templates, and its leader template is not rewritten", async () => {
      const lws = await createLws('taken');
      // As upstream leaves them: a ControllerRevision of its key (its layout, Go's empty fields written out) and a
      // leader StatefulSet labelled with that key, without our applied-hash annotation.
      const key = '5d6f7b8c9';
      const lwt = { ...structuredClone(lws.spec.leaderWorkerTemplate), $patch: 'replace' };
      (lwt.workerTemplate as { metadata?: object }).metadata = { creationTimestamp: null };
      await apps.createNamespacedControllerRevision({
        namespace,
        body: {
          metadata: {
            name: `taken-${key}-1`,
            labels: { [LABEL_NAME]: 'taken', [LABEL_TEMPLATE_REVISION_HASH]: key },
            ownerReferences: [
              { apiVersion: API_GROUP_VERSION, kind: KIND, name: 'taken', uid: lws.metadata.uid!, controller: true },
            ],
          },
          data: {
            spec: { leaderWorkerTemplate: lwt, networkConfig: { subdomainPolicy: 'Shared', $patch: 'replace' } },
          },
          revision: 1,
        },
      });
      const theirs = buildLeaderStatefulSet(lws, { revisionHash: key });
      theirs.spec!.template.spec!.containers[0]!.env = []; // upstream's templates carry no LWS_* env
      const made = await apps.createNamespacedStatefulSet({ namespace, body: theirs });

      const target = targetOf((await act.getLeaderWorkerSet({ namespace, name: 'taken' }))!);
      assert.notEqual(target.uid, '');
      assert.equal(await act.ensureControllerRevisionOf(target), 'stale', 'the key adopted: decide again');
      const facts = (await act.getLeaderWorkerSet({ namespace, name: 'taken' }))!;
      assert.equal(facts.revision, key);
      assert.equal(
        await act.ensureControllerRevisionOf(targetOf(facts)),
        'unchanged',
        'its revision is the current one',
      );
      assert.equal(await act.ensureLeaderStatefulSetOf(targetOf(facts), { replicas: 2 }), 'updated');
      const after = await readSts('taken');
      assert.deepEqual(after.spec?.template, made.spec?.template, 'its template as it was');
      assert.equal(after.spec?.replicas, 2);
      assert.ok(after.metadata?.annotations?.[ANNOTATION_APPLIED_HASH], 'now counted as written by us');
      assert.equal(await act.ensureLeaderStatefulSetOf(targetOf(facts), { replicas: 2 }), 'unchanged');

      // A new template: our own key, our template.
      await patchImage('taken', 'registry.invalid/fake:3');
      const changed = (await act.getLeaderWorkerSet({ namespace, name: 'taken' }))!;
      assert.notEqual(changed.revision, key);
      assert.equal(await act.ensureControllerRevisionOf(targetOf(changed)), 'created');
      assert.equal(await act.ensureLeaderStatefulSetOf(targetOf(changed), { replicas: 2 }), 'updated');
      const rolled = await readSts('taken');
      assert.equal(rolled.spec?.template.metadata?.labels?.[LABEL_TEMPLATE_REVISION_HASH], changed.revision);
      assert.ok(rolled.spec?.template.spec?.containers[0]?.env?.some((e) => e.name === 'LWS_LEADER_ADDRESS'));
    });

    it("a revision of another controller's key with other templates is not adopted", async () => {
      const lws = await createLws('not-taken');
      const key = '4b5c6d7f8';
      const other = structuredClone(lws.spec.leaderWorkerTemplate);
      other.workerTemplate.spec!.containers[0]!.image = 'registry.invalid/other:1';
      await apps.createNamespacedControllerRevision({
        namespace,
        body: {
          metadata: {
            name: `not-taken-${key}-1`,
            labels: { [LABEL_NAME]: 'not-taken', [LABEL_TEMPLATE_REVISION_HASH]: key },
          },
          data: { spec: { leaderWorkerTemplate: other, networkConfig: { subdomainPolicy: 'Shared' } } },
          revision: 1,
        },
      });
      await apps.createNamespacedStatefulSet({ namespace, body: buildLeaderStatefulSet(lws, { revisionHash: key }) });
      const target = targetOf((await act.getLeaderWorkerSet({ namespace, name: 'not-taken' }))!);
      assert.equal(await act.ensureControllerRevisionOf(target), 'created', 'a revision of our own');
      assert.equal((await act.getLeaderWorkerSet({ namespace, name: 'not-taken' }))!.revision, lwsFacts(lws).revision);
    });

    it('ensureWorkerStatefulSetOf: the workers from the stored LWS; none for a stale target', async () => {
      await createLws('wtarget');
      const target = targetOf((await act.getLeaderWorkerSet({ namespace, name: 'wtarget' }))!);
      const leader = await createPod('wtarget-0', { labels: leaderLabels('wtarget') });
      assert.equal(
        await act.ensureWorkerStatefulSetOf({ lws: { ...target, generation: 2 }, groupIndex: 0, leader }),
        'stale',
      );
      assert.equal(await orNullSts('wtarget-0'), null);
      const created = await act.ensureWorkerStatefulSetOf({ lws: target, groupIndex: 0, leader });
      assert.equal(typeof created === 'object' && created.outcome, 'created');
      const sts = await readSts('wtarget-0');
      assert.deepEqual(sts.spec?.template.spec?.containers[0]?.env?.find((e) => e.name === 'USER_VAR')?.value, 'kept');
      assert.equal((await readPod('wtarget-0')).metadata?.annotations?.[ANNOTATION_POD_TERMINATION_POLICY], 'Parallel');
    });

    it('ensureWorkerStatefulSetOf builds from the read its workflow decided on; a newer target is read again', async () => {
      const counted = localKubeConfig();
      let lwsGets = 0;
      observeKubeRequests(counted, (r) => {
        if (r.verb === 'get' && r.resource === 'leaderworkersets') lwsGets += 1;
      });
      const own = createActivities(counted);
      await createLws('wrecent');
      const target = targetOf((await own.getLeaderWorkerSet({ namespace, name: 'wrecent' }))!);
      const leader = await createPod('wrecent-0', { labels: leaderLabels('wrecent') });
      const created = await own.ensureWorkerStatefulSetOf({ lws: target, groupIndex: 0, leader });
      assert.equal(typeof created === 'object' && created.outcome, 'created');
      assert.equal(lwsGets, 1, 'the decision read only: the build reused it');

      await patchReplicas('wrecent', 2);
      const second = await createPod('wrecent-1', { labels: leaderLabels('wrecent') });
      const newer = { ...target, generation: target.generation + 1 };
      const built = await own.ensureWorkerStatefulSetOf({ lws: newer, groupIndex: 1, leader: second });
      assert.equal(typeof built === 'object' && built.outcome, 'created');
      assert.equal(lwsGets, 2, 'the generation decided on is newer than the read: read again');
      assert.equal(await own.ensureWorkerStatefulSetOf({ lws: target, groupIndex: 1, leader: second }), 'stale');

      // After a wait for an old group's names the decision is old: the build reads the LWS again, though it was just
      // read, and a change made meanwhile comes back stale.
      await patchReplicas('wrecent', 3);
      const third = await createPod('wrecent-2', { labels: leaderLabels('wrecent') });
      const current = targetOf((await own.getLeaderWorkerSet({ namespace, name: 'wrecent' }))!);
      const reads = lwsGets;
      await patchReplicas('wrecent', 4);
      const afterWait = { lws: current, groupIndex: 2, leader: third, afterWait: true };
      assert.equal(await own.ensureWorkerStatefulSetOf(afterWait), 'stale');
      assert.equal(lwsGets, reads + 1, 'read again, not taken from the read just made');
      assert.equal(await orNullSts('wrecent-2'), null);
    });

    it("ensureWorkerStatefulSetOf with the decision's policy and size: the LWS read along with the leader's round", async () => {
      const counted = localKubeConfig();
      const requests: string[] = [];
      observeKubeRequests(counted, (r) => requests.push(`${r.verb} ${r.resource}`));
      const own = createActivities(counted);
      await createLws('wexpect');
      const target = targetOf((await act.getLeaderWorkerSet({ namespace, name: 'wexpect' }))!);
      const leader = await createPod('wexpect-0', { labels: leaderLabels('wexpect') });
      const expected = { podTerminationPolicy: 'Parallel' as const, size: 3 };

      const created = await own.ensureWorkerStatefulSetOf({ lws: target, groupIndex: 0, leader, expected });
      assert.equal(typeof created === 'object' && created.outcome, 'created');
      // One round (the LWS, the leader's patch, who holds the names) before the create; no read of the leader.
      assert.deepEqual(requests.slice(0, 3).sort(), ['get leaderworkersets', 'list pods', 'patch pods']);
      assert.deepEqual(requests.slice(3), ['create statefulsets']);
      assert.equal((await readPod('wexpect-0')).metadata?.annotations?.[ANNOTATION_POD_TERMINATION_POLICY], 'Parallel');

      // Decided on an older generation, read by a worker that has not read it since: stale, nothing created; the next
      // call, on the new target, patches the leader again.
      await custom.patchNamespacedCustomObject(
        { ...lwsApi, namespace, name: 'wexpect', body: { spec: { podTerminationPolicy: 'Sequential' } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      const second = await createPod('wexpect-1', { labels: leaderLabels('wexpect') });
      const old = { lws: target, groupIndex: 1, leader: second, expected };
      const other = createActivities(localKubeConfig());
      assert.equal(await other.ensureWorkerStatefulSetOf(old), 'stale');
      assert.equal(await orNullSts('wexpect-1'), null);
      const now = targetOf((await act.getLeaderWorkerSet({ namespace, name: 'wexpect' }))!);
      const sequential = { podTerminationPolicy: 'Sequential' as const, size: 3 };
      const built = await other.ensureWorkerStatefulSetOf({ ...old, lws: now, expected: sequential });
      assert.equal(typeof built === 'object' && built.outcome, 'created');
      const annotations = (await readPod('wexpect-1')).metadata?.annotations;
      assert.equal(annotations?.[ANNOTATION_POD_TERMINATION_POLICY], 'Sequential');

      // A leader gone since the decision: leader-gone, whatever the read of the LWS says.
      const gone = { ...leader, name: 'wexpect-2', uid: 'no-such-uid' };
      const none = await other.ensureWorkerStatefulSetOf({
        lws: now,
        groupIndex: 2,
        leader: gone,
        expected: sequential,
      });
      assert.deepEqual(none, { outcome: 'leader-gone' });
      assert.equal(await orNullSts('wexpect-2'), null);
    });
  });

  describe('ensureHeadlessService', () => {
    it('creates once, then confirms; under UniquePerReplica makes none and leaves one from a Shared past (as upstream)', async () => {
      const lws = await createLws('svc');
      assert.equal(await ensureHeadlessService(clients, lws), 'created');
      assert.equal(await ensureHeadlessService(clients, lws), 'unchanged');
      const svc = await core.readNamespacedService({ namespace, name: 'svc' });
      assert.equal(svc.spec?.clusterIP, 'None');
      assert.equal(svc.spec?.publishNotReadyAddresses, true);
      assert.deepEqual(svc.spec?.selector, { [LABEL_NAME]: 'svc' });
      assert.equal(svc.metadata?.ownerReferences?.[0]?.uid, lws.metadata.uid);

      const unique = { ...lws, spec: { ...lws.spec, networkConfig: { subdomainPolicy: 'UniquePerReplica' as const } } };
      assert.equal(await ensureHeadlessService(clients, unique), 'unchanged');
      const after = await core.readNamespacedService({ namespace, name: 'svc' });
      assert.deepEqual(after.spec?.selector, { [LABEL_NAME]: 'svc' }, 'left as it was');

      const fresh = await createLws('svc-unique', { networkConfig: { subdomainPolicy: 'UniquePerReplica' } });
      assert.equal(await ensureHeadlessService(clients, fresh), 'unchanged');
      const none = await core.readNamespacedService({ namespace, name: 'svc-unique' }).catch((err: unknown) => err);
      assert.equal((none as { code?: number }).code, 404, 'no shared Service under UniquePerReplica');
    });
  });

  describe('ensureLeaderStatefulSet', () => {
    it('creates once, never flaps on API defaulting, and updates replicas, template and partition', async () => {
      const lws = await createLws('lead', {
        leaderWorkerTemplate: { size: 1, workerTemplate: { spec: { containers: [container] } } },
      });
      assert.equal(await ensureLeaderStatefulSet(clients, lws), 'created');
      const created = await readSts('lead');
      assert.equal(created.metadata?.ownerReferences?.[0]?.uid, lws.metadata.uid);
      assert.equal(created.spec?.podManagementPolicy, 'Parallel');
      // Let the StatefulSet controller and the API server's defaulting have their say before comparing again.
      await waitFor(
        'leader pod lead-0 Ready',
        async () => ((await act.getPod({ namespace, name: 'lead-0' }))?.ready ? true : undefined),
        {
          timeoutMs: 30_000,
        },
      );
      assert.equal(await ensureLeaderStatefulSet(clients, lws), 'unchanged');
      assert.equal(await ensureLeaderStatefulSet(clients, lws), 'unchanged');
      // The leader StatefulSet's pods are leaders; the leader StatefulSet itself is no group's worker StatefulSet.
      const groups = await act.listGroups({ namespace, name: 'lead' });
      assert.deepEqual(
        groups.leaders.map((p) => p.name),
        ['lead-0'],
      );
      assert.deepEqual(groups.workerStatefulSets, []);
      assert.equal((await readSts('lead')).metadata?.generation, created.metadata?.generation, 'no write happened');

      const scaled = { ...lws, spec: { ...lws.spec, replicas: 2 } };
      assert.equal(await ensureLeaderStatefulSet(clients, scaled), 'updated');
      assert.equal((await readSts('lead')).spec?.replicas, 2);
      assert.equal(await ensureLeaderStatefulSet(clients, scaled), 'unchanged');

      const newImage = structuredClone(scaled);
      newImage.spec.leaderWorkerTemplate.workerTemplate.spec!.containers[0]!.image = 'registry.invalid/fake:2';
      assert.equal(await ensureLeaderStatefulSet(clients, newImage), 'updated');
      const rolled = await readSts('lead');
      assert.equal(rolled.spec?.template.spec?.containers[0]?.image, 'registry.invalid/fake:2');
      assert.notEqual(
        rolled.metadata?.annotations?.[ANNOTATION_APPLIED_HASH],
        created.metadata?.annotations?.[ANNOTATION_APPLIED_HASH],
      );
      assert.equal(await ensureLeaderStatefulSet(clients, newImage), 'unchanged');

      assert.equal(await ensureLeaderStatefulSet(clients, newImage, { partition: 1 }), 'updated');
      assert.equal((await readSts('lead')).spec?.updateStrategy?.rollingUpdate?.partition, 1);
      assert.equal(await ensureLeaderStatefulSet(clients, newImage, { partition: 1 }), 'unchanged');
    });

    describe('a rolling update step from the one written before', () => {
      /** The StatefulSet calls one ensure made, by method, against the real API server. */
      const counted = () => {
        const c = makeClients(kc);
        const calls: string[] = [];
        const statefulSets = c.statefulSets;
        c.statefulSets = Object.fromEntries(
          Object.entries(statefulSets).map(([method, fn]) => [
            method,
            (...args: unknown[]) => (calls.push(method), (fn as (...a: unknown[]) => unknown)(...args)),
          ]),
        ) as unknown as typeof statefulSets;
        return { c, calls };
      };
      const cases: {
        name: string;
        /** What happens to the StatefulSet after the step `{ replicas: 3, partition: 3 }` was written. */
        meanwhile?: (name: string, lws: LeaderWorkerSet) => Promise<unknown>;
        from: { replicas: number; partition: number };
        calls: string[];
      }[] = [
        {
          name: 'as written before: one patch, even after the StatefulSet controller wrote status',
          meanwhile: (name) =>
            apps.patchNamespacedStatefulSetStatus(
              { namespace, name, body: { status: { replicas: 0, availableReplicas: 0 } } },
              k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
            ),
          from: { replicas: 3, partition: 3 },
          calls: ['jsonPatch'],
        },
        {
          name: 'another step was written since: the whole check',
          meanwhile: (_, lws) => ensureLeaderStatefulSet(clients, lws, { replicas: 3, partition: 2 }),
          from: { replicas: 3, partition: 3 },
          calls: ['jsonPatch', 'read', 'replace'],
        },
        {
          name: 'the caller names a step never written: the whole check',
          from: { replicas: 3, partition: 0 },
          calls: ['jsonPatch', 'read', 'replace'],
        },
      ];
      for (const [i, t] of cases.entries()) {
        it(t.name, async () => {
          const lws = await createLws(`step-${i}`, { replicas: 3 });
          assert.equal(await ensureLeaderStatefulSet(clients, lws, { replicas: 3, partition: 3 }), 'created');
          await t.meanwhile?.(`step-${i}`, lws);
          const { c, calls } = counted();
          assert.equal(await ensureLeaderStatefulSet(c, lws, { replicas: 3, partition: 1 }, t.from), 'updated');
          // The whole check's replace may meet the StatefulSet controller's status writes and read again.
          assert.deepEqual(calls.slice(0, t.calls.length), t.calls);
          assert.ok(
            calls.slice(t.calls.length).every((m) => m === 'read' || m === 'replace'),
            String(calls),
          );
          const sts = await readSts(`step-${i}`);
          assert.equal(sts.spec?.updateStrategy?.rollingUpdate?.partition, 1);
          assert.equal(sts.spec?.replicas, 3);
          // Exactly what the whole check writes: nothing left to change.
          assert.equal(await ensureLeaderStatefulSet(clients, lws, { replicas: 3, partition: 1 }), 'unchanged');
        });
      }

      it('never moves a StatefulSet of that name that another owner holds', async () => {
        const lws = await createLws('step-foreign', { replicas: 2 });
        const other = await createLws('step-other', { replicas: 2 });
        // The other LWS's StatefulSet under this one's name, as this one's would be written.
        const foreign = buildLeaderStatefulSet(lws, { replicas: 2, partition: 2 });
        foreign.metadata!.ownerReferences = [
          { ...foreign.metadata!.ownerReferences![0]!, name: other.metadata.name!, uid: other.metadata.uid! },
        ];
        foreign.metadata!.annotations = {
          ...foreign.metadata!.annotations,
          [ANNOTATION_APPLIED_HASH]: appliedHash(foreign),
        };
        const held = await apps.createNamespacedStatefulSet({ namespace, body: foreign });
        const result = await ensureLeaderStatefulSet(
          clients,
          lws,
          { replicas: 2, partition: 0 },
          {
            replicas: 2,
            partition: 2,
          },
        );
        // Owned by an LWS, as an older incarnation's would be: blocked until it and its pods are gone.
        assert.ok(typeof result === 'object' && result.outcome === 'blocked', `blocked, not ${JSON.stringify(result)}`);
        assert.deepEqual(result.statefulSet, { namespace, name: 'step-foreign', uid: held.metadata?.uid });
        assert.ok(
          result.pods.every((p) => /^step-foreign-[01]$/.test(p.name)),
          JSON.stringify(result.pods),
        );
        assert.equal((await readSts('step-foreign')).spec?.updateStrategy?.rollingUpdate?.partition, 2, 'untouched');
      });

      it("is name-taken, touching nothing, when another LWS's worker StatefulSet has its name (upstream #236)", async () => {
        // LWS `clash-1` wants its leader StatefulSet `clash-1`: the worker StatefulSet of group 1 of LWS `clash`.
        const lws = await createLws('clash-1', { replicas: 1 });
        const leader = await createPod('clash-1', { labels: leaderLabels('clash') });
        const workers = buildWorkerStatefulSet(await createLws('clash'), {
          groupIndex: 1,
          leaderPod: { name: leader.name, uid: leader.uid },
          groupKey: 'k',
        })!;
        const held = await apps.createNamespacedStatefulSet({ namespace, body: workers });
        assert.deepEqual(await ensureLeaderStatefulSet(clients, lws), {
          outcome: 'name-taken',
          holder: 'the worker StatefulSet of group 1 of LeaderWorkerSet clash',
        });
        const after = await readSts('clash-1');
        assert.deepEqual(after.metadata?.ownerReferences, held.metadata?.ownerReferences, "still the leader pod's");
        assert.equal(after.metadata?.generation, held.metadata?.generation, 'its spec untouched');
      });
    });

    it('is blocked while leader pods an older incarnation left hold the names; created once they are gone', async () => {
      const lws = await createLws('again', { replicas: 3 });
      // A leader of the LWS deleted before this one was created, terminating (scheduled first: the API server removes
      // an unscheduled pod at once).
      const old = await createPod('again-0', { labels: leaderLabels('again'), grace: 3 });
      await waitFor('pod again-0 Ready', async () => ((await act.getPod(old))?.ready ? true : undefined), {
        timeoutMs: 30_000,
      });
      await core.deleteNamespacedPod({ namespace, name: 'again-0' });
      // An orphan that is not terminating is adopted by the new StatefulSet.
      await createPod('again-1', { labels: leaderLabels('again') });
      const blocked = await ensureLeaderStatefulSet(clients, lws);
      assert.deepEqual(blocked, { outcome: 'blocked', pods: [old] });
      assert.equal(await orNullSts('again'), null, 'nothing created over the old name');

      const waited = Date.now();
      await act.waitForPodsGone({ namespace, pods: [old] });
      assert.ok(Date.now() - waited >= 1_000, `the wait ended ${Date.now() - waited} ms in, with the pod still there`);
      assert.equal(await ensureLeaderStatefulSet(clients, lws), 'created');
      await waitFor('the new leader again-0', async () => ((await readPod('again-0')) ? true : undefined), {
        timeoutMs: 30_000,
      });
      // Its own pods block nothing.
      assert.equal(await ensureLeaderStatefulSet(clients, lws), 'unchanged');
    });

    it('a permanent error (an invalid pod template) is a non-retryable failure with the API message', async () => {
      const lws = await createLws('broken', {
        leaderWorkerTemplate: { workerTemplate: { spec: { containers: [{ name: 'main' }] } } },
      });
      const err = await failureOf(ensureLeaderStatefulSet(clients, lws));
      assertPermanent(err, 422, /spec\.template\.spec\.containers\[0\]\.image: Required value/);
    });
  });

  describe('ensureWorkerStatefulSet and the group reads', () => {
    let lws: LeaderWorkerSet;
    let leader: ObjectIdentity;
    let workersUid: string;

    before(async () => {
      lws = await createLws('demo');
      leader = await createPod('demo-0', { labels: leaderLabels('demo') });
    });

    it('creates the worker StatefulSet once (created, then exists), owned by the leader, size-1 replicas from ordinal 1', async () => {
      const first = await ensureWorkerStatefulSet(clients, { lws, groupIndex: 0, leader });
      assert.equal(first.outcome, 'created');
      const again = await ensureWorkerStatefulSet(clients, { lws, groupIndex: 0, leader });
      assert.deepEqual(again, { outcome: 'exists', uid: (first as { uid: string }).uid });
      workersUid = (first as { uid: string }).uid;

      const sts = await readSts('demo-0');
      assert.equal(sts.metadata?.uid, workersUid);
      assert.equal(sts.spec?.replicas, 2);
      assert.equal(sts.spec?.ordinals?.start, 1);
      assert.deepEqual(
        sts.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller, r.blockOwnerDeletion]),
        [['Pod', 'demo-0', leader.uid, true, true]],
      );
    });

    it('labels and annotates the leader pod: group index, group key, termination policy', async () => {
      const pod = await readPod('demo-0');
      const key = createHash('sha1').update(`${namespace}/demo-0`).digest('hex');
      assert.equal(pod.metadata?.labels?.[LABEL_GROUP_INDEX], '0');
      assert.equal(pod.metadata?.labels?.[LABEL_GROUP_KEY], key);
      assert.equal(pod.metadata?.annotations?.[ANNOTATION_POD_TERMINATION_POLICY], 'Parallel');
    });

    it('waitForStatefulSetReady resolves once the worker pods are Ready; they carry the LWS env vars', async () => {
      const ready = await act.waitForStatefulSetReady({ namespace, name: 'demo-0', uid: workersUid });
      assert.ok('readyAt' in ready && /\.\d{3}Z$/.test(ready.readyAt), JSON.stringify(ready));
      assert.equal((await readSts('demo-0')).status?.readyReplicas, 2);
      const worker = await readPod('demo-0-2');
      const env = worker.spec?.containers[0]?.env ?? [];
      const byName = new Map(env.map((e) => [e.name, e]));
      assert.equal(byName.get('LWS_LEADER_ADDRESS')?.value, `demo-0.demo.${namespace}`);
      assert.equal(byName.get('LWS_GROUP_SIZE')?.value, '3');
      assert.equal(byName.get('LWS_GROUP_INDEX')?.value, '0');
      assert.equal(
        byName.get('LWS_WORKER_INDEX')?.valueFrom?.fieldRef?.fieldPath,
        "metadata.labels['apps.kubernetes.io/pod-index']",
      );
      assert.equal(byName.get('USER_VAR')?.value, 'kept');
      assert.equal(worker.metadata?.labels?.['apps.kubernetes.io/pod-index'], '2');
      assert.equal((await act.getPod({ namespace, name: 'demo-0-1' }))?.ownerUid, workersUid);
    });

    it('the workers have their worker-index from creation (the admission webhook), none patched on', async () => {
      for (const [name, index] of [
        ['demo-0-1', '1'],
        ['demo-0-2', '2'],
      ]) {
        assert.equal((await readPod(name!)).metadata?.labels?.[LABEL_WORKER_INDEX], index, name);
      }
    });

    it('listGroups finds the leader and its worker StatefulSet; listGroupPods the whole group', async () => {
      const groups = await act.listGroups({ namespace, name: 'demo' });
      assert.deepEqual(
        groups.leaders.map((p) => [p.name, p.uid]),
        [['demo-0', leader.uid]],
      );
      assert.deepEqual(
        groups.workerStatefulSets.map((s) => [s.name, s.ownerUid, s.replicas]),
        [['demo-0', leader.uid, 2]],
      );
      // Recorded at every reconcile pass: only the keys its decisions read, not the name label both objects carry.
      const decisive = [LABEL_TEMPLATE_REVISION_HASH, ANNOTATION_SIZE, ANNOTATION_WORKERS_REFUSED];
      assert.equal((await readPod('demo-0')).metadata?.labels?.[LABEL_NAME], 'demo');
      for (const record of [groups.leaders[0]!, groups.workerStatefulSets[0]!]) {
        const keys = [...Object.keys(record.labels), ...Object.keys('annotations' in record ? record.annotations : {})];
        assert.deepEqual(
          keys.filter((k) => !decisive.includes(k)),
          [],
          `${record.name}: ${keys.join(', ')}`,
        );
      }
      const pods = await act.listGroupPods({ namespace, lwsName: 'demo', groupIndex: 0 });
      assert.deepEqual(
        pods.map((p) => p.name),
        ['demo-0', 'demo-0-1', 'demo-0-2'],
      );
    });

    it('a StatefulSet owned by another pod is blocked and left untouched', async () => {
      const stranger = await createPod('stranger');
      const foreign = await apps.createNamespacedStatefulSet({
        namespace,
        body: {
          metadata: {
            name: 'demo-1',
            ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'stranger', uid: stranger.uid, controller: true }],
          },
          spec: {
            replicas: 0,
            serviceName: 'demo',
            selector: { matchLabels: { app: 'foreign' } },
            template: { metadata: { labels: { app: 'foreign' } }, spec: { containers: [container] } },
          },
        },
      });
      const leader1 = await createPod('demo-1', { labels: leaderLabels('demo') });
      const result = await ensureWorkerStatefulSet(clients, { lws, groupIndex: 1, leader: leader1 });
      assert.deepEqual(result, {
        outcome: 'blocked',
        uid: foreign.metadata?.uid,
        ownerUid: stranger.uid,
        deleting: false,
      });
      const after = await readSts('demo-1');
      // Untouched by us (the StatefulSet controller still writes its status): same spec, generation and owner.
      assert.equal(after.metadata?.generation, foreign.metadata?.generation);
      assert.deepEqual(after.spec, foreign.spec);
      assert.deepEqual(after.metadata?.ownerReferences, foreign.metadata?.ownerReferences);
      assert.deepEqual(after.metadata?.labels, foreign.metadata?.labels);

      // ... and deleteWorkerStatefulSet refuses it for the leader that does not own it.
      const refused = await act.deleteWorkerStatefulSet({
        namespace,
        name: 'demo-1',
        uid: foreign.metadata?.uid ?? '',
        ownerUid: leader1.uid,
        propagationPolicy: 'Foreground',
      });
      assert.equal(refused, 'not-owned');
      assert.equal((await readSts('demo-1')).metadata?.deletionTimestamp, undefined);
    });

    it('a leader that is gone (wrong uid) gets leader-gone and nothing is created', async () => {
      await createPod('demo-3', { labels: leaderLabels('demo') });
      const result = await ensureWorkerStatefulSet(clients, {
        lws,
        groupIndex: 3,
        leader: { namespace, name: 'demo-3', uid: '00000000-0000-0000-0000-000000000000' },
      });
      assert.deepEqual(result, { outcome: 'leader-gone' });
      assert.equal(await act.getStatefulSet({ namespace, name: 'demo-3' }), null);
      assert.equal(
        (await readPod('demo-3')).metadata?.annotations?.[ANNOTATION_POD_TERMINATION_POLICY],
        undefined,
        'the other pod is not patched',
      );
    });

    it('a leader that is terminating gets leader-gone and nothing is created: its teardown has begun', async () => {
      const leader = await createPod('demo-5', { labels: leaderLabels('demo') });
      const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
      const hold = (finalizers: string[] | null) =>
        core.patchNamespacedPod({ namespace, name: 'demo-5', body: { metadata: { finalizers } } }, merge);
      await hold(['lws-temporal.test/hold']);
      await core.deleteNamespacedPod({ namespace, name: 'demo-5' });
      try {
        const result = await ensureWorkerStatefulSet(clients, { lws, groupIndex: 5, leader });
        assert.deepEqual(result, { outcome: 'leader-gone' });
        assert.equal(await act.getStatefulSet({ namespace, name: 'demo-5' }), null);
      } finally {
        await hold(null);
      }
    });

    it('size 1: the leader is labelled, no StatefulSet (not-needed)', async () => {
      const single = structuredClone(lws);
      single.spec.leaderWorkerTemplate.size = 1;
      const leader4 = await createPod('demo-4', { labels: leaderLabels('demo') });
      assert.deepEqual(await ensureWorkerStatefulSet(clients, { lws: single, groupIndex: 4, leader: leader4 }), {
        outcome: 'not-needed',
      });
      assert.equal(await act.getStatefulSet({ namespace, name: 'demo-4' }), null);
      assert.equal((await readPod('demo-4')).metadata?.labels?.[LABEL_GROUP_INDEX], '4');
    });

    it('annotateLeaderPods records a new policy on every live leader, once', async () => {
      const patched = await act.annotateLeaderPods({
        ref: { namespace, name: 'demo' },
        podTerminationPolicy: 'Sequential',
      });
      assert.ok(patched >= 3, `patched ${patched}`);
      assert.equal((await readPod('demo-0')).metadata?.annotations?.[ANNOTATION_POD_TERMINATION_POLICY], 'Sequential');
      assert.equal(
        await act.annotateLeaderPods({ ref: { namespace, name: 'demo' }, podTerminationPolicy: 'Sequential' }),
        0,
      );
      await act.annotateLeaderPods({ ref: { namespace, name: 'demo' }, podTerminationPolicy: 'Parallel' });
    });

    it('deleteWorkerStatefulSet: wrong uid is absent; Foreground keeps the StatefulSet until its pods are gone', async () => {
      const base = { namespace, name: 'demo-0', ownerUid: leader.uid, propagationPolicy: 'Foreground' as const };
      assert.equal(
        await act.deleteWorkerStatefulSet({ ...base, uid: '00000000-0000-0000-0000-000000000000' }),
        'absent',
      );
      assert.equal((await readSts('demo-0')).metadata?.deletionTimestamp, undefined);

      const started = Date.now();
      assert.equal(await act.deleteWorkerStatefulSet({ ...base, uid: workersUid }), 'deleted');
      const deleting = await readSts('demo-0');
      assert.ok(deleting.metadata?.deletionTimestamp, 'the StatefulSet has a deletionTimestamp');
      assert.ok(
        deleting.metadata?.finalizers?.includes('foregroundDeletion'),
        `finalizers ${deleting.metadata?.finalizers}`,
      );
      // Its pods are terminating as soon as the call returns, not when the garbage collector gets to them.
      const workerPods = (await act.listGroupPods({ namespace, lwsName: 'demo', groupIndex: 0 })).filter(
        (p) => p.ownerUid === workersUid,
      );
      assert.ok(workerPods.length > 0, 'the group has worker pods');
      assert.ok(
        workerPods.every((p) => p.deletionTimestamp),
        `terminating: ${workerPods.map((p) => `${p.name}=${p.deletionTimestamp ?? 'no'}`).join(' ')}`,
      );
      assert.equal(await act.deleteWorkerStatefulSet({ ...base, uid: workersUid }), 'already-deleting');
      assert.equal((await act.getStatefulSet({ namespace, name: 'demo-0' }))?.deletionTimestamp !== undefined, true);

      const gone = await act.waitForStatefulSetGone({ namespace, name: 'demo-0', uid: workersUid });
      const took = Date.parse(gone.goneAt) - started;
      // Foreground: gone only after the worker pods' 2 s grace period.
      assert.ok(took >= 1500 && took < 15_000, `gone after ${took} ms`);
      assert.equal(await act.getPod({ namespace, name: 'demo-0-1' }), null);
      assert.notEqual(await act.getPod(leader), null, 'the leader pod is not touched');
      assert.equal(await act.deleteWorkerStatefulSet({ ...base, uid: workersUid }), 'absent');
    });

    it('waitForReplacementGroupReady waits for a new leader and its ready workers', async () => {
      const wanting = await createLws('wanting', { replicas: 3 });
      const waiting = act.waitForReplacementGroupReady({
        namespace,
        leaderName: 'wanting-2',
        workerStatefulSetName: 'wanting-2',
        previousLeaderUid: '00000000-0000-0000-0000-000000000000',
        size: 3,
        group: { lwsName: 'wanting', groupIndex: 2 },
      });
      let settled = false;
      void waiting.finally(() => (settled = true));
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(settled, false, 'no leader yet');
      const leader2 = await createPod('wanting-2', { labels: leaderLabels('wanting') });
      const made = await ensureWorkerStatefulSet(clients, { lws: wanting, groupIndex: 2, leader: leader2 });
      assert.equal(made.outcome, 'created');
      const result = await waiting;
      assert.ok('leader' in result, JSON.stringify(result));
      assert.equal(result.leader.uid, leader2.uid);
      assert.equal((await readSts('wanting-2')).status?.readyReplicas, 2);
      assert.ok(Date.parse(result.readyAt) >= Date.parse(result.leaderCreatedAt));
    });

    it('waitForReplacementGroupReady ends with notWanted once the LWS is deleted: no replacement will come', async () => {
      await createLws('unwanted', { replicas: 1 });
      const started = Date.now();
      const waiting = act.waitForReplacementGroupReady({
        namespace,
        leaderName: 'unwanted-0',
        workerStatefulSetName: 'unwanted-0',
        previousLeaderUid: '00000000-0000-0000-0000-000000000000',
        size: 2,
        group: { lwsName: 'unwanted', groupIndex: 0 },
      });
      await new Promise((r) => setTimeout(r, 500));
      await custom.deleteNamespacedCustomObject({ ...lwsApi, namespace, name: 'unwanted' });
      assert.deepEqual(await waiting, { notWanted: 'the LWS is gone' });
      assert.ok(Date.now() - started < REPLACEMENT_CHECK_MS * 2 + 5_000, 'within about one look');
    });

    it('waitForReplacementGroupReady waits for a surge group while the leader StatefulSet keeps it, not after', async () => {
      const surging = await createLws('surging', { replicas: 1 });
      // A rolling update keeps one surge group (index 1) above the LWS's single replica.
      assert.equal(await ensureLeaderStatefulSet(clients, surging, { replicas: 2 }), 'created');
      const waiting = act.waitForReplacementGroupReady({
        namespace,
        leaderName: 'surging-1',
        workerStatefulSetName: 'surging-1',
        previousLeaderUid: '00000000-0000-0000-0000-000000000000',
        size: 3,
        group: { lwsName: 'surging', groupIndex: 1 },
      });
      let settled = false;
      void waiting.finally(() => (settled = true));
      await new Promise((r) => setTimeout(r, REPLACEMENT_CHECK_MS + 2_000));
      assert.equal(settled, false, 'still wanted after a look: the leader StatefulSet keeps it');
      const released = Date.now();
      assert.equal(await ensureLeaderStatefulSet(clients, surging, { replicas: 1 }), 'updated');
      assert.deepEqual(await waiting, { notWanted: notWantedAbove(1) });
      assert.ok(Date.now() - released < REPLACEMENT_CHECK_MS + 5_000, 'within one look of its release');
    });
  });

  describe('a worker StatefulSet over pods an old group left', () => {
    it('is created though they hold the names, their StatefulSet gone (as upstream); marked once they are gone, its pods come then', async () => {
      const lws = await createLws('left');
      const leader = await createPod('left-0', { labels: leaderLabels('left') });
      // An old worker that outlived its StatefulSet (the garbage collector removes that one at once), terminating.
      const old = await createPod('left-0-1', { labels: { [LABEL_NAME]: 'left', [LABEL_GROUP_INDEX]: '0' }, grace: 3 });
      // Scheduled first: the API server removes an unscheduled pod at once.
      await waitFor('pod left-0-1 Ready', async () => ((await act.getPod(old))?.ready ? true : undefined), {
        timeoutMs: 30_000,
      });
      await core.deleteNamespacedPod({ namespace, name: 'left-0-1' });
      const created = await ensureWorkerStatefulSet(clients, { lws, groupIndex: 0, leader });
      assert.ok(created.outcome === 'created', JSON.stringify(created));
      assert.deepEqual(created.oldPods, [old]);
      const successor = { namespace, name: 'left-0', uid: created.uid };
      assert.equal((await readSts('left-0')).metadata?.uid, created.uid);
      assert.equal((await readPod('left-0-1')).metadata?.uid, old.uid, 'the old pod still holds its name');

      const waited = Date.now();
      const gone = await waitForNamesFreed(makeClients(kc), { pods: [old], successor });
      assert.ok('goneAt' in gone);
      assert.ok(Date.now() - waited >= 1_000, `the wait ended ${Date.now() - waited} ms in, with the pod still there`);
      assert.equal(
        (await readSts('left-0')).metadata?.annotations?.[ANNOTATION_OLD_PODS_GONE],
        gone.goneAt,
        'the new StatefulSet marked when the names were free',
      );
      // Its own pod, over the freed name.
      const mine = await waitFor(
        'pod left-0-1 of the new StatefulSet',
        async () => {
          const pod = await readPod('left-0-1').catch(() => undefined);
          return pod?.metadata?.uid !== old.uid ? pod : undefined;
        },
        { timeoutMs: 30_000 },
      );
      assert.equal(mine.metadata?.ownerReferences?.[0]?.uid, created.uid);
      // Marking a successor gone or replaced is no failure.
      const other = { ...successor, uid: '00000000-0000-0000-0000-000000000000' };
      assert.ok('goneAt' in (await waitForNamesFreed(makeClients(kc), { pods: [old], successor: other })));

      // Its own pods block nothing: the next ensure finds the StatefulSet it made, in one read.
      const c = makeClients(kc);
      const calls: string[] = [];
      const { create, read } = c.statefulSets;
      c.statefulSets.create = (...args) => (calls.push('create'), create(...args));
      c.statefulSets.read = (...args) => (calls.push('read'), read(...args));
      assert.deepEqual(await ensureWorkerStatefulSet(c, { lws, groupIndex: 0, leader }), {
        outcome: 'exists',
        uid: created.uid,
      });
      assert.deepEqual(calls, ['read']);
    });
  });

  describe('the Parallel deletes and the release of a foreground-deleted StatefulSet', () => {
    /** A group of 3 (leader pod + worker StatefulSet of 2) of a fresh LWS, its workers Ready. */
    async function group(name: string, policy: 'Parallel' | 'Sequential') {
      const lws = await createLws(name, { podTerminationPolicy: policy });
      const leader = await createPod(`${name}-0`, { labels: leaderLabels(name), grace: 5 });
      const made = await ensureWorkerStatefulSet(clients, { lws, groupIndex: 0, leader });
      const uid = (made as { uid: string }).uid;
      await act.waitForStatefulSetReady({ namespace, name: `${name}-0`, uid });
      return { lws, ref: { namespace, name }, groupIndex: 0, leader, stsUid: uid };
    }
    const workerPods = async (name: string, stsUid: string) =>
      (await act.listGroupPods({ namespace, lwsName: name, groupIndex: 0 })).filter((p) => p.ownerUid === stsUid);

    it("deleteWorkerStatefulSet in the foreground: only the named leader's, its pods terminating when it returns", async () => {
      const par = await group('par', 'Parallel');
      const told = { namespace, name: 'par-0', propagationPolicy: 'Foreground' as const };
      assert.equal(await act.deleteWorkerStatefulSet({ ...told, ownerUid: 'another-leader' }), 'not-owned');
      const stale = { ...told, uid: '00000000-0000-0000-0000-000000000000', ownerUid: par.leader.uid };
      assert.equal(await act.deleteWorkerStatefulSet(stale), 'absent');
      assert.equal((await readSts('par-0')).metadata?.deletionTimestamp, undefined);

      await core.deleteNamespacedPod({ namespace, name: 'par-0' });
      const ours = { ...told, uid: par.stsUid, ownerUid: par.leader.uid };
      assert.equal(await act.deleteWorkerStatefulSet(ours), 'deleted');
      const sts = await readSts('par-0');
      assert.ok(sts.metadata?.finalizers?.includes('foregroundDeletion'), 'a foreground delete');
      const pods = await workerPods('par', par.stsUid);
      assert.equal(pods.length, 2);
      assert.ok(
        pods.every((p) => p.deletionTimestamp),
        'both worker pods terminating when the call returns, while the leader still is',
      );
      assert.ok((await act.getPod(par.leader))?.deletionTimestamp, 'the leader is still terminating');
      assert.equal(await act.deleteWorkerStatefulSet(ours), 'already-deleting');
    });

    /**
     * Holds the StatefulSet's foreground deletion after its pods are gone, as a garbage collector slow to get back to
     * it would: a dependent that blocks its owner's deletion and cannot go (a finalizer of the test's). Runs `body`,
     * then lets the dependent go.
     */
    async function heldStatefulSet(
      name: string,
      body: (sts: ObjectIdentity, pods: ObjectIdentity[], g: Awaited<ReturnType<typeof group>>) => Promise<void>,
    ) {
      const g = await group(name, 'Parallel');
      const sts = { namespace, name: `${name}-0`, uid: g.stsUid };
      const pods = (await workerPods(name, g.stsUid)).map(identityOf);
      const holder = `${name}-holder`;
      await core.createNamespacedConfigMap({
        namespace,
        body: {
          metadata: {
            name: holder,
            finalizers: ['lws-temporal.test/hold'],
            ownerReferences: [
              { apiVersion: 'apps/v1', kind: 'StatefulSet', name: sts.name, uid: sts.uid, blockOwnerDeletion: true },
            ],
          },
        },
      });
      try {
        assert.equal(await act.releaseForegroundDeletion({ statefulSet: sts, pods }), 'not-foreground');
        assert.equal((await readSts(sts.name)).metadata?.deletionTimestamp, undefined, 'a live one is left alone');
        const deleting = { ...sts, ownerUid: g.leader.uid, propagationPolicy: 'Foreground' as const };
        assert.equal(await act.deleteWorkerStatefulSet(deleting), 'deleted');
        await body(sts, pods, g);
      } finally {
        await core.patchNamespacedConfigMap(
          { namespace, name: holder, body: { metadata: { finalizers: null } } },
          k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
        );
      }
    }

    it('releaseForegroundDeletion lets a StatefulSet held by its foreground deletion go once no pod of its own is left', async () => {
      await heldStatefulSet('held', async (sts, pods) => {
        const c = makeClients(kc);
        assert.equal(
          await releaseForegroundDeletion(c, { statefulSet: sts, pods: [] }),
          'pods-left',
          'its pods are still terminating',
        );
        for (const pod of pods) await act.waitForPodGone(pod);
        await new Promise((r) => setTimeout(r, 1_000));
        const held = await readSts(sts.name);
        assert.ok(held.metadata?.finalizers?.includes('foregroundDeletion'), 'still held with no pod left');
        const another = { ...sts, uid: '00000000-0000-0000-0000-000000000000' };
        assert.equal(
          await releaseForegroundDeletion(c, { statefulSet: another, pods }),
          'absent',
          'another incarnation: the precondition fails',
        );
        assert.equal((await readSts(sts.name)).metadata?.uid, sts.uid);
        // The pods it had, given: no list needed.
        const calls: string[] = [];
        const list = c.pods.list;
        c.pods.list = (...args) => (calls.push('list'), list(...args));
        assert.equal(await releaseForegroundDeletion(c, { statefulSet: sts, pods }), 'released');
        assert.deepEqual(calls, []);
        assert.equal(await orNullSts(sts.name), null, 'gone with the release itself');
        assert.equal(await releaseForegroundDeletion(c, { statefulSet: sts, pods }), 'absent');
      });
    });

    it('ensureWorkerStatefulSet over an old incarnation only its foreground deletion keeps: released and created in the one call', async () => {
      await heldStatefulSet('inline', async (sts, pods, { lws, leader: oldLeader }) => {
        // The group rebuilt: its leader gone, a new one under its name.
        await core.deleteNamespacedPod({ namespace, name: oldLeader.name });
        await act.waitForPodGone(oldLeader);
        const leader = await createPod(oldLeader.name, { labels: leaderLabels('inline') });
        for (const pod of pods) await act.waitForPodGone(pod);
        assert.ok((await readSts(sts.name)).metadata?.finalizers?.includes('foregroundDeletion'), 'still held');

        const created = await ensureWorkerStatefulSet(clients, { lws, groupIndex: 0, leader });
        assert.deepEqual(created.outcome === 'created' && created.released, sts.uid, 'says which one it released');
        const now = await readSts(sts.name);
        assert.notEqual(now.metadata?.uid, sts.uid);
        assert.equal(now.metadata?.ownerReferences?.[0]?.uid, leader.uid);
      });
    });

    it('waitForNamesFreed ends once the pods are gone, not when the garbage collector gets back: it releases the name itself', async () => {
      await heldStatefulSet('waited', async (sts, pods) => {
        const freed = await Promise.race([
          act.waitForNamesFreed({ statefulSet: sts, pods }),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error('still waiting after 20 s')), 20_000)),
        ]);
        assert.ok('goneAt' in freed, `freed: ${JSON.stringify(freed)}`);
        for (const pod of pods) assert.equal(await act.getPod(pod), null, `${pod.name} is gone`);
        assert.equal(await orNullSts(sts.name), null, 'released: only its foreground deletion kept it');
        assert.equal(await act.releaseForegroundDeletion({ statefulSet: sts, pods }), 'absent', 'nothing left to do');
      });
    });

    it('waitForNamesFreed watches every pod at once: when the last goes it returns, with no read after it', async () => {
      const counted = localKubeConfig();
      const requests: string[] = [];
      observeKubeRequests(counted, (r) => requests.push(`${r.verb} ${r.resource}`));
      const own = createActivities(counted);
      const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
      const hold = (name: string, finalizers: string[] | null) =>
        core.patchNamespacedPod({ namespace, name, body: { metadata: { finalizers } } }, merge);
      // Three pods of an old group, terminating and held there until the test lets them go.
      const pods: ObjectIdentity[] = [];
      for (const name of ['freed-a', 'freed-b', 'freed-c']) {
        pods.push(await createPod(name));
        await hold(name, ['lws-temporal.test/hold']);
        await core.deleteNamespacedPod({ namespace, name });
      }
      try {
        const waiting = own.waitForNamesFreed({ pods });
        const watching = () => requests.filter((r) => r === 'watch pods').length;
        for (const started = Date.now(); watching() < pods.length;) {
          assert.ok(Date.now() - started < 20_000, `watches open after 20 s: ${requests.join(', ')}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const before = requests.length;
        for (const pod of pods) await hold(pod.name, null);
        const freed = await waiting;
        assert.ok('goneAt' in freed);
        assert.deepEqual(requests.slice(before), [], 'no request once the pods were let go');
        for (const pod of pods) assert.equal(await act.getPod(pod), null, `${pod.name} is gone`);
      } finally {
        for (const pod of pods) await hold(pod.name, null).catch(() => undefined);
      }
    });

    it('deleteSeenWorkers: one round of deletes by uid; a stale uid touches nothing', async () => {
      const seen = await group('seen', 'Parallel');
      const pods = await workerPods('seen', seen.stsUid);
      assert.equal(pods.length, 2);
      const stale = {
        statefulSet: { namespace, name: 'seen-0', uid: '00000000-0000-0000-0000-000000000000' },
        pods: pods.map((p) => ({ ...identityOf(p), uid: '00000000-0000-0000-0000-000000000001' })),
      };
      assert.equal(await act.deleteSeenWorkers(stale), 'absent');
      assert.equal((await readSts('seen-0')).metadata?.deletionTimestamp, undefined);
      assert.ok(
        (await workerPods('seen', seen.stsUid)).every((p) => !p.deletionTimestamp),
        'no pod touched',
      );

      await core.deleteNamespacedPod({ namespace, name: 'seen-0' });
      const workers = { statefulSet: { namespace, name: 'seen-0', uid: seen.stsUid }, pods: pods.map(identityOf) };
      assert.equal(await act.deleteSeenWorkers(workers), 'deleted');
      assert.ok((await readSts('seen-0')).metadata?.finalizers?.includes('foregroundDeletion'), 'a foreground delete');
      const after = await workerPods('seen', seen.stsUid);
      assert.deepEqual(
        after.map((p) => p.uid).sort(),
        pods.map((p) => p.uid).sort(),
        'the same pods: none was replaced',
      );
      assert.ok(
        after.every((p) => p.deletionTimestamp),
        'both worker pods terminating when the call returns',
      );
      // A retry after a lost response is harmless.
      assert.equal(await act.deleteSeenWorkers(workers), 'deleted');
    });

    it("beginTeardown: a Parallel teardown's first round in one call, the delete and what the workflow reads", async () => {
      const g = await group('begin', 'Parallel');
      const pods = await workerPods('begin', g.stsUid);
      await core.deleteNamespacedPod({ namespace, name: 'begin-0' });
      const workers = { statefulSet: { namespace, name: 'begin-0', uid: g.stsUid }, pods: pods.map(identityOf) };
      const first = await act.beginTeardown({ ...g, deleteWorkers: workers });
      assert.equal(first.deleted, 'deleted');
      assert.equal(first.lws?.metadata.name, 'begin');
      assert.equal(first.leaderPod?.uid, g.leader.uid);
      assert.ok(first.leaderPod?.deletionTimestamp, 'read while the leader terminates');
      assert.equal(first.workerStatefulSet?.uid, g.stsUid);
      assert.equal(first.workerStatefulSet?.ownerUid, g.leader.uid);
      assert.deepEqual(
        first.groupPods
          .filter((p) => p.ownerUid === g.stsUid)
          .map((p) => p.uid)
          .sort(),
        pods.map((p) => p.uid).sort(),
      );
      assert.ok(
        (await workerPods('begin', g.stsUid)).every((p) => p.deletionTimestamp),
        'the workers terminate',
      );
      // Without workers to delete it only reads; the leader StatefulSet only for a group above replicas.
      const readOnly = await act.beginTeardown(g);
      assert.equal(readOnly.deleted, undefined);
      assert.equal(readOnly.workerStatefulSet?.uid, g.stsUid);
      assert.equal(readOnly.leaderStatefulSet, undefined);
      // Its LWS as facts: nothing of the templates in what the workflow records.
      assert.equal(readOnly.lws?.spec.podTerminationPolicy, 'Parallel');
      assert.ok(!JSON.stringify(readOnly).includes('managedFields'));
    });

    it('beginTeardown reads the leader StatefulSet for a group above the LWS replicas (scale-down or surge)', async () => {
      const lws = await createLws('above', { replicas: 1 });
      assert.equal(await ensureLeaderStatefulSet(clients, lws, { replicas: 2 }), 'created');
      const first = await act.beginTeardown({
        ref: { namespace, name: 'above' },
        groupIndex: 1,
        leader: { namespace, name: 'above-1', uid: '00000000-0000-0000-0000-000000000000' },
      });
      assert.equal(first.leaderStatefulSet?.name, 'above');
      assert.equal(first.leaderStatefulSet?.replicas, 2);
      assert.equal(first.leaderStatefulSet?.ownerUid, lws.metadata.uid);
    });
  });

  describe('deletePod and the pod waits', () => {
    it('deletePod with a wrong uid is absent and leaves the pod alone', async () => {
      const pod = await createPod('keep-me');
      assert.equal(await act.deletePod({ ...pod, uid: '00000000-0000-0000-0000-000000000000' }), 'absent');
      const live = await readPod('keep-me');
      assert.equal(live.metadata?.uid, pod.uid);
      assert.equal(live.metadata?.deletionTimestamp, undefined);
    });

    it('waitForPodReady resolves once Ready, and with goneAt for a pod that is gone', async () => {
      const pod = await createPod('soon-ready');
      const ready = await act.waitForPodReady(pod);
      assert.ok('readyAt' in ready, JSON.stringify(ready));
      assert.equal((await act.getPod(pod))?.ready, true);
      const gone = await act.waitForPodReady({ ...pod, uid: 'another-incarnation' });
      assert.ok('goneAt' in gone, JSON.stringify(gone));
    });

    it('deletePod then waitForPodGone: resolves only after the 3 s grace period', async () => {
      const pod = await createPod('graceful', { grace: 3 });
      await act.waitForPodReady(pod);
      const started = Date.now();
      assert.equal(await act.deletePod(pod), 'deleted');
      assert.equal(await act.deletePod(pod), 'already-deleting');
      const terminating = await act.getPod(pod);
      assert.ok(terminating?.deletionTimestamp, 'terminating');
      const gone = await act.waitForPodGone(pod);
      assert.ok('goneAt' in gone, JSON.stringify(gone));
      const took = Date.parse(gone.goneAt) - started;
      assert.ok(took >= 2500 && took < 8000, `gone after ${took} ms`);
      assert.equal(await act.getPod(pod), null);
      assert.equal(await act.deletePod(pod), 'absent');
    });

    it('a pod of a node that is gone: the waits end with it stuck once its grace period is over, then forceDeletePods removes it', async () => {
      // Bound to a node no Node object names: nothing finishes it (the pod finisher leaves the pods of unknown nodes).
      const nodeName = 'lws-test-gone-node';
      const pods = [
        await createPod('stranded-a', { grace: 1, nodeName }),
        await createPod('stranded-b', { grace: 1, nodeName }),
      ];
      const started = Date.now();
      for (const p of pods) assert.equal(await act.deletePod(p), 'deleted');
      const one = await act.waitForPodGone(pods[0]!);
      assert.deepEqual(one, { stuck: [{ pod: pods[0], node: nodeName, signal: 'node gone' }] });
      const took = Date.now() - started;
      assert.ok(took >= FORCE_DELETE_MARGIN_MS && took < 10_000, `stuck after ${took} ms`);
      // The group wait names every one of its pods stuck by then, with when the first was seen terminating.
      const all = await act.waitForPodsGone({ namespace, pods });
      assert.ok('stuck' in all, JSON.stringify(all));
      assert.deepEqual(
        all.stuck.map((s) => [s.pod.name, s.signal]),
        pods.map((p) => [p.name, 'node gone']),
      );
      assert.ok(all.terminatingAt);
      const forced = await act.forceDeletePods({ pods: all.stuck });
      assert.deepEqual(forced.deleted, all.stuck);
      for (const p of pods) assert.equal(await act.getPod(p), null);
      // Again (a retry): nothing of those uids is left, so nothing is claimed.
      assert.deepEqual((await act.forceDeletePods({ pods: all.stuck })).deleted, []);
      const gone = await act.waitForPodsGone({ namespace, pods });
      assert.ok('goneAt' in gone, JSON.stringify(gone));
    });

    it('waitForPodsGone follows several pods and reports when they began terminating', async () => {
      const labels = { 'lws-test/set': 'pair' };
      const pods = [await createPod('pair-a', { labels, grace: 2 }), await createPod('pair-b', { labels, grace: 2 })];
      await Promise.all(pods.map((p) => act.waitForPodReady(p)));
      const waiting = act.waitForPodsGone({ namespace, pods: pods.map((p) => ({ ...p, labels })) });
      await new Promise((r) => setTimeout(r, 300));
      const started = Date.now();
      for (const p of pods) await act.deletePod(p);
      const result = await waiting;
      assert.ok('goneAt' in result, JSON.stringify(result));
      const took = Date.parse(result.goneAt) - started;
      assert.ok(took >= 1500 && took < 8000, `gone after ${took} ms`);
      assert.ok(result.terminatingAt, 'terminatingAt is reported');
      assert.ok(Math.abs(Date.parse(result.terminatingAt) - started) < 1500, `terminatingAt ${result.terminatingAt}`);
    });

    it('beats every third of its heartbeat timeout: none in the first seconds of a wait at 30 s', async function () {
      this.timeout(30_000);
      const pod = await createPod('watched-quietly');
      const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 30_000 });
      const beats: number[] = [];
      env.on('heartbeat', () => beats.push(Date.now()));
      const waiting = env.run(act.waitForPodGone, pod);
      await new Promise((r) => setTimeout(r, 2 * HEARTBEAT_INTERVAL_MS + 600));
      assert.equal(beats.length, 0, 'no heartbeat before 10 s');
      env.cancel();
      assert.ok((await failureOf(waiting)) instanceof CancelledFailure);
    });

    it('heartbeats every HEARTBEAT_INTERVAL_MS inside an activity, none at its start, and stops at once when cancelled', async function () {
      this.timeout(30_000);
      const pod = await createPod('watched-forever');
      const env = new MockActivityEnvironment();
      const beats: number[] = [];
      env.on('heartbeat', () => beats.push(Date.now()));
      const start = Date.now();
      const waiting = env.run(act.waitForPodGone, pod);
      await new Promise((r) => setTimeout(r, 2 * HEARTBEAT_INTERVAL_MS + 600));
      assert.ok(beats.length >= 2, `${beats.length} heartbeats in ${2 * HEARTBEAT_INTERVAL_MS + 600} ms`);
      // A wait that ends within an interval costs the Temporal server no heartbeat.
      assert.ok(beats[0]! - start >= HEARTBEAT_INTERVAL_MS - 100, `the first heartbeat ${beats[0]! - start} ms in`);
      assert.ok(beats[1]! - beats[0]! >= HEARTBEAT_INTERVAL_MS - 100, 'the second heartbeat comes one interval later');
      const cancelledAt = Date.now();
      env.cancel();
      const err = await failureOf(waiting);
      assert.ok(err instanceof CancelledFailure, `expected a CancelledFailure, got ${String(err)}`);
      assert.ok(Date.now() - cancelledAt < 1000, 'the wait stops at once');
      assert.notEqual(await act.getPod(pod), null);
    });
  });

  describe('status and events', () => {
    it('markWorkersRefused writes the refusal on the leader pod of that uid, once, and takes it off', async () => {
      const leader = await createPod('refused-0', { labels: leaderLabels('refused') });
      // Once KWOK has made it Ready, nothing else writes the pod: a new resourceVersion below is the activity's write.
      await act.waitForPodReady(leader);
      const told = () => readPod('refused-0').then((p) => p.metadata?.annotations?.[ANNOTATION_WORKERS_REFUSED]);
      assert.equal(await act.markWorkersRefused({ leader, message: 'group 0: refused' }), true);
      assert.equal(await told(), 'group 0: refused');
      const version = (await readPod('refused-0')).metadata?.resourceVersion;
      assert.equal(await act.markWorkersRefused({ leader, message: 'group 0: refused' }), true);
      assert.equal((await readPod('refused-0')).metadata?.resourceVersion, version, 'no write when it says so already');
      const other = { ...leader, uid: '00000000-0000-0000-0000-000000000000' };
      assert.equal(await act.markWorkersRefused({ leader: other, message: 'x' }), false, 'another incarnation');
      assert.equal(await act.markWorkersRefused({ leader }), true);
      assert.equal(await told(), undefined);
    });

    it('updateLeaderWorkerSetStatus merge-patches the status subresource', async () => {
      await createLws('with-status');
      const ref = { namespace, name: 'with-status' };
      const condition = {
        type: 'Available',
        status: 'True' as const,
        reason: 'AllGroupsReady',
        message: 'all groups are ready',
        lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      };
      await act.updateLeaderWorkerSetStatus({
        ref,
        status: { replicas: 1, readyReplicas: 0, hpaPodSelector: 'a=b', conditions: [condition] },
      });
      await act.updateLeaderWorkerSetStatus({ ref, status: { readyReplicas: 1 } });
      const got = await act.getLeaderWorkerSet(ref);
      assert.deepEqual(got?.status, { replicas: 1, readyReplicas: 1, hpaPodSelector: 'a=b', conditions: [condition] });
    });

    it('recordEvent creates an Event on the LWS, once per activity execution', async () => {
      const lws = await createLws('with-events');
      const target = { namespace, name: 'with-events', uid: lws.metadata.uid ?? '' };
      await act.recordEvent({ lws: target, type: 'Normal', reason: 'GroupProvisioned', message: 'group 0 is up' });
      // Inside an activity the name follows the activity's identity: a retry makes no duplicate.
      const env = new MockActivityEnvironment({ activityId: 'event-test' });
      const warning = { lws: target, type: 'Warning' as const, reason: 'Slow', message: 'took long' };
      await env.run(act.recordEvent, warning);
      await env.run(act.recordEvent, warning);

      const events = await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.uid=${target.uid}` });
      const summary = events.items
        .map((e) => [
          e.type,
          e.reason,
          e.message,
          e.involvedObject.kind,
          e.involvedObject.apiVersion,
          e.source?.component,
          e.reportingComponent,
        ])
        .sort();
      assert.deepEqual(summary, [
        ['Normal', 'GroupProvisioned', 'group 0 is up', KIND, API_GROUP_VERSION, 'lws-temporal', 'lws-temporal'],
        ['Warning', 'Slow', 'took long', KIND, API_GROUP_VERSION, 'lws-temporal', 'lws-temporal'],
      ]);
      for (const e of events.items) {
        assert.match(e.metadata?.name ?? '', /^with-events\.[0-9a-f]{16}$/);
        assert.ok(e.firstTimestamp && e.lastTimestamp && e.eventTime, 'timestamps set');
      }
      // What users see.
      const { stdout } = await run(binPath('kubectl'), [
        `--kubeconfig=${kubeconfigPath}`,
        '-n',
        namespace,
        'describe',
        'lws',
        'with-events',
      ]);
      assert.match(stdout, /Normal\s+GroupProvisioned\s+\S+\s+lws-temporal\s+group 0 is up/);
      assert.match(stdout, /Warning\s+Slow\s+\S+\s+lws-temporal\s+took long/);
    });

    it('recordEvents records each Event of the call once, also when the activity is retried', async () => {
      const lws = await createLws('with-two-events');
      const target = { namespace, name: 'with-two-events', uid: lws.metadata.uid ?? '' };
      const two = [
        { lws: target, type: 'Normal' as const, reason: 'GroupLeaderTerminating', message: 'group 0: leader' },
        { lws: target, type: 'Normal' as const, reason: 'GroupWorkersTerminating', message: 'group 0: workers' },
      ];
      const env = new MockActivityEnvironment({ activityId: 'two-events' });
      assert.deepEqual(await env.run(act.recordEvents, two), [true, true]);
      assert.deepEqual(await env.run(act.recordEvents, two), [true, true], 'the retry finds both recorded');
      const events = await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.uid=${target.uid}` });
      assert.deepEqual(events.items.map((e) => e.reason).sort(), ['GroupLeaderTerminating', 'GroupWorkersTerminating']);
    });

    it('in a namespace being deleted: recordEvent drops the Event and resolves false; a create fails as NamespaceTerminating', async () => {
      // A ConfigMap with a finalizer of ours keeps the deleted namespace Terminating until the test lets it go.
      const doomed = await createTestNamespace(kc, 'events-doomed');
      const finalizer = 'lws-temporal.test/hold';
      await core.createNamespacedConfigMap({
        namespace: doomed,
        body: { metadata: { name: 'hold', finalizers: [finalizer] } },
      });
      await core.deleteNamespace({ name: doomed });
      try {
        await waitFor(
          `namespace ${doomed} Terminating`,
          async () => ((await core.readNamespace({ name: doomed })).status?.phase === 'Terminating' ? true : undefined),
          { timeoutMs: 30_000 },
        );
        const lws = { namespace: doomed, name: 'going', uid: '00000000-0000-0000-0000-000000000001' };
        const event = { lws, type: 'Normal' as const, reason: 'GroupGone', message: 'group 0 is gone' };
        assert.equal(await act.recordEvent(event), false);
        // Expected while a namespace goes: logged at debug level, not as a warning.
        const logged: { level: string; message: string }[] = [];
        const logger = new DefaultLogger('TRACE', (entry) => logged.push(entry));
        assert.equal(
          await new MockActivityEnvironment({ activityId: 'doomed' }, { logger }).run(act.recordEvent, event),
          false,
        );
        assert.deepEqual(
          logged.filter((e) => e.message.startsWith('Event not recorded')).map((e) => e.level),
          ['DEBUG'],
        );
        const events = await core.listNamespacedEvent({ namespace: doomed });
        assert.deepEqual(
          events.items.filter((e) => e.reason === 'GroupGone'),
          [],
        );
        // A live namespace still gets its Event: true.
        const live = await createLws('with-one-event');
        const target = { namespace, name: 'with-one-event', uid: live.metadata.uid ?? '' };
        assert.equal(await act.recordEvent({ ...event, lws: target }), true);
        // Any other create there fails for good, with a failure type the workflows end on instead of failing.
        const moved = { ...live, metadata: { ...live.metadata, namespace: doomed } };
        const refused = await failureOf(ensureHeadlessService(clients, moved));
        assert.ok(refused instanceof ApplicationFailure, String(refused));
        assert.equal(refused.type, NAMESPACE_TERMINATING);
        assert.equal(refused.nonRetryable, true);
        assert.match(refused.message, /being terminated/);
      } finally {
        await core.patchNamespacedConfigMap(
          { namespace: doomed, name: 'hold', body: { metadata: { finalizers: null } } },
          k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
        );
      }
    });
  });

  describe('errors', () => {
    it('a 404 on a status update is a non-retryable ApplicationFailure with the API message', async () => {
      const err = await failureOf(
        act.updateLeaderWorkerSetStatus({ ref: { namespace, name: 'no-such-lws' }, status: { replicas: 1 } }),
      );
      assertPermanent(err, 404, `${PLURAL}.${API_GROUP} "no-such-lws" not found`);
    });

    it('an unreachable API server is an ordinary, retryable error', async () => {
      const port = await freePort(SERVER_PORTS); // free, so nothing listens there
      const offline = new k8s.KubeConfig();
      offline.loadFromOptions({
        clusters: [{ name: 'offline', server: `https://127.0.0.1:${port}`, skipTLSVerify: true }],
        users: [{ name: 'u', token: 't' }],
        contexts: [{ name: 'offline', cluster: 'offline', user: 'u' }],
        currentContext: 'offline',
      });
      const err = await failureOf(createActivities(offline).getPod({ namespace, name: 'x' }));
      assert.ok(!(err instanceof ApplicationFailure), 'not an ApplicationFailure, so the retry policy applies');
      assert.equal((err as { code?: string }).code, 'ECONNREFUSED');
    });

    it('the JSON calls fail as typed ones do: a bad selector (400) and a rejected token (401) are permanent', async () => {
      const badSelector = await failureOf(act.listGroupPods({ namespace, lwsName: 'not a name!', groupIndex: 0 }));
      assertPermanent(badSelector, 400, /found 'a', expected/);
      const server = kc.getCurrentCluster()!.server;
      const stranger = new k8s.KubeConfig();
      stranger.loadFromOptions({
        clusters: [{ name: 'c', server, skipTLSVerify: true }],
        users: [{ name: 'u', token: 'not-a-valid-token' }],
        contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
        currentContext: 'c',
      });
      const unauthorized = await failureOf(createActivities(stranger).getPod({ namespace, name: 'x' }));
      assertPermanent(unauthorized, 401, /Unauthorized/);
    });

    it('classifies status codes: 429, 5xx and 409 retryable; 400, 401, 403, 404, 405, 422 permanent', () => {
      const status = (code: number) => JSON.stringify({ kind: 'Status', code, message: `message ${code}` });
      for (const code of [409, 429, 500, 503, 504]) {
        const err = classify(new k8s.ApiException(code, 'x', status(code), {}));
        assert.ok(err instanceof TransientKubernetesError, `${code}`);
        assert.equal(err.code, code);
      }
      for (const code of [400, 401, 403, 404, 405, 422]) {
        assertPermanent(classify(new k8s.ApiException(code, 'x', status(code), {})), code, `message ${code}`);
      }
      assertPermanent(classify(new k8s.ApiException(401, 'Unauthorized', undefined, {})), 401, /Unauthorized/);
      // A 403 whose Status names the NamespaceTerminating cause gets a type of its own; other causes do not.
      const forbidden = (cause: string) =>
        classify(
          new k8s.ApiException(
            403,
            'x',
            JSON.stringify({
              kind: 'Status',
              code: 403,
              message: 'no',
              details: { causes: [{ reason: cause, field: 'metadata.namespace' }] },
            }),
            {},
          ),
        ) as ApplicationFailure;
      assert.equal(forbidden('NamespaceTerminating').type, NAMESPACE_TERMINATING);
      assert.equal(forbidden('NamespaceTerminating').nonRetryable, true);
      assert.equal(forbidden('FieldValueForbidden').type, KUBERNETES_API_ERROR);
      const network = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
      assert.equal(classify(network), network);
    });
  });
});
