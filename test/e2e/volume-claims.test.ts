import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import type { LeaderWorkerSet, PodTerminationPolicy } from '../../src/model/index.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { useControllerSuite } from '../fixtures/controller-suite.js';

type Policy = k8s.V1StatefulSetPersistentVolumeClaimRetentionPolicy;
type Bound = { claim: k8s.V1PersistentVolumeClaim; pv: k8s.V1PersistentVolume };

/**
 * spec.leaderWorkerTemplate.volumeClaimTemplates and persistentVolumeClaimRetentionPolicy through the real controller:
 * both go onto the leader StatefulSet and each group's worker StatefulSet, and the StatefulSet controller makes and
 * keeps or deletes the claims (the local cluster's volume provisioner binds them). What decides a claim's fate is
 * which StatefulSet owns it and how that StatefulSet loses the pod:
 * - a scale-down makes the leader StatefulSet condemn the leader pod of the group above `replicas`: `whenScaled`
 *   applies to its leader claim (the StatefulSet controller makes the pod the claim's owner before deleting it);
 * - that group's worker StatefulSet is not scaled but deleted as a whole (the garbage collector, once the leader is
 *   gone; the Parallel teardown, at once): a StatefulSet being deleted does nothing but update its status, so its
 *   pods never count as scaled down and `whenDeleted` applies to the worker claims (the StatefulSet owns them under
 *   Delete, nothing does under Retain);
 * - deleting the LWS deletes both kinds of StatefulSet: `whenDeleted` applies to every claim left.
 * The machine is slow and shared: waits are generous and nothing is timed.
 */
const G = 2; // terminationGracePeriodSeconds
const SIZE = 3; // a leader and workers 1 and 2
const WAIT = { timeoutMs: 180_000, intervalMs: 500 };

interface Case {
  name: string;
  policy: Policy;
  termination: PodTerminationPolicy;
  /** Group 1's claims after the scale-down from 2 to 1. */
  afterScaleDown: { leader: 'deleted' | 'kept'; workers: 'deleted' | 'kept' };
  /** Every claim left after the LWS is deleted. */
  afterDelete: 'deleted' | 'kept';
}

const cases: Case[] = [
  {
    name: 'dd',
    policy: { whenScaled: 'Delete', whenDeleted: 'Delete' },
    // Parallel: the teardown deletes group 1's worker StatefulSet in the foreground, with its claims as dependents.
    termination: 'Parallel',
    afterScaleDown: { leader: 'deleted', workers: 'deleted' },
    afterDelete: 'deleted',
  },
  {
    name: 'rr',
    policy: { whenScaled: 'Retain', whenDeleted: 'Retain' },
    termination: 'Sequential',
    afterScaleDown: { leader: 'kept', workers: 'kept' },
    afterDelete: 'kept',
  },
  {
    name: 'dr',
    policy: { whenScaled: 'Delete', whenDeleted: 'Retain' },
    termination: 'Sequential',
    afterScaleDown: { leader: 'deleted', workers: 'kept' },
    afterDelete: 'kept',
  },
  {
    name: 'rd',
    policy: { whenScaled: 'Retain', whenDeleted: 'Delete' },
    termination: 'Sequential',
    afterScaleDown: { leader: 'kept', workers: 'deleted' },
    // Group 1's leader claim too: kept by the scale-down, it is still owned by the leader StatefulSet.
    afterDelete: 'deleted',
  },
];

const describePolicy = (p: Policy) => `whenScaled ${p.whenScaled}, whenDeleted ${p.whenDeleted}`;

function lwsOf(c: Case): LeaderWorkerSet {
  const template = (role: string) => ({
    spec: {
      terminationGracePeriodSeconds: G,
      containers: [
        { name: role, image: 'registry.invalid/ai:1', volumeMounts: [{ name: 'data', mountPath: '/data' }] },
      ],
    },
  });
  return {
    apiVersion: 'leaderworkerset.x-k8s.io/v1',
    kind: 'LeaderWorkerSet',
    metadata: { name: c.name },
    spec: {
      replicas: 2,
      podTerminationPolicy: c.termination,
      leaderWorkerTemplate: {
        size: SIZE,
        leaderTemplate: template('leader'),
        workerTemplate: template('worker'),
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
          },
        ],
        persistentVolumeClaimRetentionPolicy: c.policy,
      },
    },
  };
}

const leaderClaim = (lws: string, g: number) => `data-${lws}-${g}`;
const workerClaims = (lws: string, g: number) =>
  Array.from({ length: SIZE - 1 }, (_, i) => `data-${lws}-${g}-${i + 1}`);
const groupClaims = (lws: string, g: number) => [leaderClaim(lws, g), ...workerClaims(lws, g)];

describe('controller: LWS volume claims per retention policy (real cluster, dev server, worker and trigger processes)', function () {
  this.timeout(600_000);
  const suite = useControllerSuite('e2e-volumes');
  /** Each case's claims as first Bound, by claim name. */
  const initial = new Map<string, Map<string, Bound>>();

  const notFoundAsUndefined = (err: { code?: number }) => (err.code === 404 ? undefined : Promise.reject(err));
  const claim = (name: string) =>
    suite.lws.core.readNamespacedPersistentVolumeClaim({ name, namespace: suite.namespace }).catch(notFoundAsUndefined);
  const volume = (name: string) => suite.lws.core.readPersistentVolume({ name }).catch(notFoundAsUndefined);

  function bound(names: string[]): Promise<Bound[]> {
    return waitFor(
      `claims ${names.join(', ')} Bound`,
      async () => {
        const out: Bound[] = [];
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

  /** The claims gone, and the PVs they were bound to (the provisioner deletes a Released one). */
  function gone(claims: Bound[]): Promise<true> {
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

  /** Still there, Bound to the very PV it first got (not a new claim under the same name). */
  async function kept(c: Case, names: string[]): Promise<void> {
    const now = await bound(names);
    for (const { claim: k, pv } of now) {
      const first = initial.get(c.name)!.get(k.metadata!.name!)!;
      assert.equal(k.metadata!.uid, first.claim.metadata!.uid, `${k.metadata!.name} is the first claim`);
      assert.equal(pv.metadata!.uid, first.pv.metadata!.uid, `${k.metadata!.name} is on its first PV`);
    }
  }

  const groupGone = (name: string, g: number) =>
    waitFor(
      `group ${g} of ${name} gone (pods and worker StatefulSet)`,
      async () => {
        const pods = (await suite.lws.pods(name)).filter(
          (p) => p.metadata?.labels?.['leaderworkerset.sigs.k8s.io/group-index'] === `${g}`,
        );
        return pods.length === 0 && !(await suite.lws.statefulSet(`${name}-${g}`)) ? true : undefined;
      },
      WAIT,
    );

  const ownersOf = (c: k8s.V1PersistentVolumeClaim) =>
    (c.metadata?.ownerReferences ?? []).map((r) => `${r.kind}/${r.name}`).sort();

  it('each pod gets its claims, all Bound: data-<lws>-<g> for leaders, data-<lws>-<g>-<w> for workers', async () => {
    await Promise.all(cases.map((c) => suite.lws.create(lwsOf(c))));
    await Promise.all(cases.map((c) => suite.lws.waitForGroups(c.name, 2, SIZE, WAIT.timeoutMs)));
    for (const c of cases) {
      const names = [...groupClaims(c.name, 0), ...groupClaims(c.name, 1)];
      const claims = await bound(names);
      initial.set(c.name, new Map(claims.map((b) => [b.claim.metadata!.name!, b])));
      // Each pod mounts the claim of its own name.
      for (const p of await suite.lws.pods(c.name)) {
        const claimNames = (p.spec?.volumes ?? []).flatMap((v) => v.persistentVolumeClaim?.claimName ?? []);
        assert.deepEqual(claimNames, [`data-${p.metadata!.name}`]);
      }
      // Who owns the claims while every pod is in range: the StatefulSet under whenDeleted Delete, nothing else.
      for (const g of [0, 1]) {
        const expectLeader = c.policy.whenDeleted === 'Delete' ? [`StatefulSet/${c.name}`] : [];
        const expectWorker = c.policy.whenDeleted === 'Delete' ? [`StatefulSet/${c.name}-${g}`] : [];
        assert.deepEqual(ownersOf((await claim(leaderClaim(c.name, g)))!), expectLeader, `${c.name} group ${g} leader`);
        for (const w of workerClaims(c.name, g))
          assert.deepEqual(ownersOf((await claim(w))!), expectWorker, `${c.name} ${w}`);
      }
    }
  });

  for (const c of cases) {
    const { leader, workers } = c.afterScaleDown;
    it(
      `scale-down 2 -> 1, ${describePolicy(c.policy)}: group 1's leader claim ${leader} (the leader pod is scaled ` +
        `away: whenScaled), its worker claims ${workers} (the worker StatefulSet is deleted, not scaled: whenDeleted)`,
      async () => {
        await suite.lws.patchSpec(c.name, { replicas: 1 });
        await groupGone(c.name, 1);
        const first = initial.get(c.name)!;
        const byFate = (fate: 'deleted' | 'kept') => [
          ...(leader === fate ? [leaderClaim(c.name, 1)] : []),
          ...(workers === fate ? workerClaims(c.name, 1) : []),
        ];
        // Deletions first: once they are done the garbage collector has acted on group 1, so what is left stays.
        await gone(byFate('deleted').map((n) => first.get(n)!));
        await kept(c, [...groupClaims(c.name, 0), ...byFate('kept')]);
        // What is kept is owned by nothing but StatefulSets that stay (the leaders', group 0's workers'): nothing
        // will delete it later. Group 1's retained worker claims are owned by nothing at all.
        const staying = [`StatefulSet/${c.name}`, `StatefulSet/${c.name}-0`];
        for (const name of [...groupClaims(c.name, 0), ...byFate('kept')]) {
          for (const owner of ownersOf((await claim(name))!))
            assert.ok(staying.includes(owner), `${name} is owned by ${owner}`);
        }
      },
    );
  }

  for (const c of cases) {
    it(`LWS ${c.name} deleted, ${describePolicy(c.policy)}: every claim left is ${c.afterDelete} (whenDeleted)`, async () => {
      const first = initial.get(c.name)!;
      const left: string[] = [];
      for (const name of first.keys()) if (await claim(name)) left.push(name);
      await suite.lws.delete(c.name, 'Background');
      await waitFor(
        `${c.name}'s pods and StatefulSets gone`,
        async () =>
          (await suite.lws.pods(c.name)).length === 0 &&
          !(await suite.lws.statefulSet(c.name)) &&
          !(await suite.lws.statefulSet(`${c.name}-0`))
            ? true
            : undefined,
        WAIT,
      );
      if (c.afterDelete === 'deleted') await gone(left.map((n) => first.get(n)!));
      else await kept(c, left);
    });
  }
});
