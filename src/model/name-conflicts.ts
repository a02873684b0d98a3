// Names one LWS derives can be another's (upstream #236): group 1 of LWS `lws` has its worker StatefulSet named
// `lws-1`, the name of LWS `lws-1`'s leader StatefulSet. Neither controller may touch the other's; the one that finds
// its name taken tells its user who holds it.
import { KIND, LABEL_GROUP_INDEX, LABEL_NAME } from './labels.js';

interface HolderMeta {
  name?: string;
  namespace?: string;
  labels?: Record<string, string>;
  ownerReferences?: ReadonlyArray<{ kind: string; name: string; controller?: boolean }>;
}

/** Whose StatefulSet holds a name, in words for an Event and a condition. */
export function describeNameHolder(meta: HolderMeta | undefined): string {
  const controller = meta?.ownerReferences?.find((ref) => ref.controller === true);
  const lws = meta?.labels?.[LABEL_NAME];
  const group = meta?.labels?.[LABEL_GROUP_INDEX];
  if (controller?.kind === KIND) return `the leader StatefulSet of LeaderWorkerSet ${controller.name}`;
  if (controller?.kind === 'Pod' && lws !== undefined && group !== undefined) {
    return `the worker StatefulSet of group ${group} of LeaderWorkerSet ${lws}`;
  }
  return controller
    ? `a StatefulSet controlled by ${controller.kind} ${controller.name}`
    : 'a StatefulSet of no controller';
}

/** Whether a StatefulSet in the way of a group's workers is another LWS's leader StatefulSet (it never goes by itself). */
export function heldByAnotherLws(meta: HolderMeta | undefined): boolean {
  return meta?.ownerReferences?.some((ref) => ref.controller === true && ref.kind === KIND) ?? false;
}

export const CONDITION_NAME_CONFLICT = 'NameConflict';

/** The message of the Event and the condition: what is taken, by whom, and what to do. */
export function nameConflictMessage(statefulSet: string, holder: string): string {
  return (
    `StatefulSet ${statefulSet} is ${holder}, so this LeaderWorkerSet cannot create its own of that name ` +
    '(the worker StatefulSet of group i of LWS x is named x-i): rename or delete one of the two LeaderWorkerSets'
  );
}
