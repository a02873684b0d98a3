// Tears down one group whose leader pod is terminating (deleted, evicted, recreated after a restart, scaled down,
// rolled, or its LWS deleted), as spec.podTerminationPolicy says:
//   Sequential: observe only. The leader terminates; once it is gone the garbage collector removes the workers.
//   Parallel:   foreground-delete the worker StatefulSet at once, so leader and workers terminate together.
// Then it follows the group until its pods are gone and, for a rebuild, until the replacement group is ready.
import { CancellationScope, isCancellation, upsertSearchAttributes } from '@temporalio/workflow';
import {
  applyDefaults,
  decideWorkerTeardown,
  leaderPodName,
  resolvePodTerminationPolicy,
  workerStatefulSetName,
  type LwsRef,
  type PodTerminationPolicy,
} from '../model/index.js';
import type { ObjectIdentity, PodInfo, StatefulSetInfo } from '../activities/types.js';
import { kube, wait } from './activities.js';
import { TerminationPolicy } from './search-attributes.js';
import { Timeline, type TimelineEntry } from './timeline.js';

export type Lifecycle = 'rebuild' | 'scale-down' | 'rolling-update' | 'delete';

export interface TeardownGroupInput {
  ref: LwsRef;
  groupIndex: number;
  /** The terminating leader pod (this incarnation of the group). */
  leader: ObjectIdentity;
  lifecycle: Lifecycle;
  /** Whether the server has this project's search attributes registered (the trigger checks at start). */
  searchAttributes?: boolean;
}

export interface TeardownGroupResult {
  policy: PodTerminationPolicy;
  lifecycle: Lifecycle;
  /** Leader terminating -> last old pod gone, in ms. */
  teardownMs?: number;
  /** Leader terminating -> replacement group ready, in ms (rebuilds only). */
  recoveryMs?: number;
  timeline: TimelineEntry[];
}

/** How long a rebuild waits for its replacement group before it reports without one. */
const replacementTimeout = '30 minutes';

const asState = (o: PodInfo | StatefulSetInfo | null) =>
  o === null
    ? undefined
    : {
        metadata: {
          name: o.name,
          uid: o.uid,
          deletionTimestamp: o.deletionTimestamp,
          annotations: 'annotations' in o ? o.annotations : {},
          ownerReferences: o.ownerUid ? [{ uid: o.ownerUid, controller: true }] : [],
        },
      };

export async function teardownGroup(input: TeardownGroupInput): Promise<TeardownGroupResult> {
  const { ref, groupIndex, leader, lifecycle } = input;
  const timeline = new Timeline(`${lifecycle} of group ${groupIndex} of ${ref.namespace}/${ref.name}`);
  const [lws, leaderPod] = await Promise.all([kube.getLeaderWorkerSet(ref), kube.getPod(leader)]);
  // Once the LWS is gone the policy is still on the terminating leader pod's annotation.
  const { policy, source } = resolvePodTerminationPolicy({ lws, leaderPod: asState(leaderPod) });
  if (input.searchAttributes) upsertSearchAttributes([{ key: TerminationPolicy, value: policy }]);
  timeline.add('leader terminating', undefined, `policy ${policy} from ${source}`);
  const started = timeline.entries[0]!.at;

  const workerKey = { namespace: ref.namespace, name: workerStatefulSetName(ref.name, groupIndex) };
  const sts = await kube.getStatefulSet(workerKey);
  // Only this leader's workers are ours to follow; a replacement group's StatefulSet is never touched.
  const ownSts = sts !== null && sts.ownerUid === leader.uid ? sts : null;
  const workerPods = ownSts
    ? (await kube.listGroupPods({ namespace: ref.namespace, lwsName: ref.name, groupIndex })).filter(
        (p) => p.ownerUid === ownSts.uid,
      )
    : [];

  if (ownSts) {
    const decision = decideWorkerTeardown({
      policy,
      leaderUid: leader.uid,
      leaderPod: asState(leaderPod),
      workerStatefulSet: asState(ownSts),
    });
    if (decision.action === 'delete') {
      const outcome = await kube.deleteWorkerStatefulSet({
        ...workerKey,
        uid: decision.preconditionUid,
        ownerUid: leader.uid,
        propagationPolicy: decision.propagationPolicy,
      });
      if (outcome === 'deleted')
        timeline.add('workers terminating', undefined, 'foreground delete of the worker StatefulSet');
    }
  }

  const lwsUid = lws?.metadata.uid;
  if (lwsUid) {
    await kube.recordEvent({
      lws: { ...ref, uid: lwsUid },
      type: 'Normal',
      reason: 'GroupTeardownStarted',
      message: `group ${groupIndex} (${lifecycle}, ${policy}): leader ${leader.name} terminating`,
    });
  }

  await Promise.all([
    wait.waitForPodGone(leader).then((r) => timeline.add('leader gone', r.goneAt)),
    workerPods.length > 0
      ? wait.waitForPodsGone({ namespace: ref.namespace, pods: workerPods }).then((r) => {
          if (r.terminatingAt && !timeline.at('workers terminating'))
            timeline.add('workers terminating', r.terminatingAt);
          timeline.add('workers gone', r.goneAt);
        })
      : Promise.resolve(),
    ownSts
      ? wait.waitForStatefulSetGone(ownSts).then((r) => timeline.add('old StatefulSet gone', r.goneAt))
      : Promise.resolve(),
  ]);
  const lastGone = [timeline.at('leader gone'), timeline.at('workers gone'), timeline.at('old StatefulSet gone')]
    .filter((t): t is string => t !== undefined)
    .sort()
    .pop();
  const result: TeardownGroupResult = {
    policy,
    lifecycle,
    teardownMs: lastGone ? Date.parse(lastGone) - Date.parse(started) : undefined,
    timeline: timeline.entries,
  };

  if (lifecycle === 'rebuild' && lws) {
    const size = applyDefaults(lws).spec.leaderWorkerTemplate.size;
    try {
      // Bounded: the LWS may be scaled down or deleted meanwhile, and then no replacement ever comes.
      const replacement = await CancellationScope.withTimeout(replacementTimeout, () =>
        wait.waitForReplacementGroupReady({
          namespace: ref.namespace,
          leaderName: leaderPodName(ref.name, groupIndex),
          workerStatefulSetName: workerKey.name,
          previousLeaderUid: leader.uid,
          size,
        }),
      );
      timeline.add('new leader', replacement.leaderCreatedAt, replacement.leader.uid);
      timeline.add('new group ready', replacement.readyAt);
      result.recoveryMs = Date.parse(replacement.readyAt) - Date.parse(started);
    } catch (err) {
      if (!isCancellation(err)) throw err;
      timeline.add('skipped', undefined, `no replacement group within ${replacementTimeout}`);
    }
  }
  if (lwsUid) {
    await kube.recordEvent({
      lws: { ...ref, uid: lwsUid },
      type: 'Normal',
      reason: 'GroupTeardownFinished',
      message: `group ${groupIndex} (${lifecycle}, ${policy}): old pods gone after ${result.teardownMs ?? '?'} ms${
        result.recoveryMs !== undefined ? `, replacement ready after ${result.recoveryMs} ms` : ''
      }`,
    });
  }
  result.timeline = timeline.entries;
  return result;
}
