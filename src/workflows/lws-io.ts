// How the workflows read an LWS and write what its templates make (issue 28). The reads return its facts and the writes
// take a target, so no template reaches a history. A history recorded before holds the whole LWS in its reads' results,
// and the writes that took it: replayed, its run makes those same calls, on the object it read. No patch marker: the
// recorded result tells the two apart, and the pinned lifecycles carry none (docs/operations.md, "Upgrades and Worker
// Versioning"). Once every such history is gone (the retention period after the last run of a build before issue 28),
// delete the `object` branches and the calls that take one.
import {
  DEFAULT_POD_TERMINATION_POLICY,
  isLwsFacts,
  lwsFacts,
  targetOf,
  type LeaderStatefulSetOptions,
  type LeaderStatefulSetStep,
  type LeaderWorkerSet,
  type LwsFacts,
  type ObjectKey,
} from '../model/index.js';
import type { BeginTeardownInput, TeardownStart, WorkerStatefulSetInput } from '../activities/types.js';
import { kube } from './activities.js';

/** The LWS a workflow decides on; read in a history recorded before issue 28, with the object its writes took. */
export type LwsRead = LwsFacts & { object?: LeaderWorkerSet };

/** What a read returned: its facts, or in a history recorded before issue 28 the whole object. */
type Recorded = LwsFacts | LeaderWorkerSet;

export function asRead(recorded: Recorded): LwsRead {
  return isLwsFacts(recorded) ? recorded : { ...lwsFacts(recorded), object: recorded };
}

export async function readLws(ref: ObjectKey): Promise<LwsRead | null> {
  const recorded: Recorded | null = await kube.getLeaderWorkerSet(ref);
  return recorded && asRead(recorded);
}

/** A teardown's first round: its LWS as facts, whatever the history recorded. */
export async function beginTeardown(input: BeginTeardownInput): Promise<TeardownStart> {
  const first: Omit<TeardownStart, 'lws'> & { lws: Recorded | null } = await kube.beginTeardown(input);
  return { ...first, lws: first.lws && asRead(first.lws) };
}

export function ensureControllerRevision({ object, ...facts }: LwsRead) {
  return object ? kube.ensureControllerRevision(object) : kube.ensureControllerRevisionOf(targetOf(facts));
}

export function ensureHeadlessService({ object, ...facts }: LwsRead) {
  return object ? kube.ensureHeadlessService(object) : kube.ensureHeadlessServiceOf(targetOf(facts));
}

export function ensureLeaderStatefulSet(
  { object, ...facts }: LwsRead,
  options?: LeaderStatefulSetOptions,
  from?: LeaderStatefulSetStep,
) {
  return object
    ? kube.ensureLeaderStatefulSet(object, options, from)
    : kube.ensureLeaderStatefulSetOf(targetOf(facts), options, from);
}

export function ensureWorkerStatefulSet(
  { object, ...facts }: LwsRead,
  input: Omit<WorkerStatefulSetInput<unknown>, 'lws'>,
) {
  return object
    ? kube.ensureWorkerStatefulSet({ ...input, lws: object })
    : kube.ensureWorkerStatefulSetOf({ ...input, lws: targetOf(facts), expected: expectedOf(facts) });
}

/** What the leader's patch needs of the LWS, so that the build sends it along with its read of the LWS. */
function expectedOf({ spec }: LwsFacts): WorkerStatefulSetInput<unknown>['expected'] {
  const podTerminationPolicy = spec.podTerminationPolicy ?? DEFAULT_POD_TERMINATION_POLICY;
  return { podTerminationPolicy, size: spec.leaderWorkerTemplate.size };
}
