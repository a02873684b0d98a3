// The group-key and subgroup-key label values, sha1 hex as upstream computes them. Node only (node:crypto): the
// activities and the admission webhook use it; workflow code never does (it gets the values from activities).
import { createHash } from 'node:crypto';
import { groupKeyInput, subGroupKeyInput } from '../model/index.js';

function sha1Hex(text: string): string {
  return createHash('sha1').update(text, 'utf8').digest('hex');
}

/** sha1 hex of `<namespace>/<leaderPodName>`. */
export function groupKey(namespace: string, leaderPodName: string): string {
  return sha1Hex(groupKeyInput(namespace, leaderPodName));
}

/** sha1 hex of `<leaderPodName>/<subgroupIndex>`. */
export function subGroupKey(leaderPodName: string, index: number): string {
  return sha1Hex(subGroupKeyInput(leaderPodName, index));
}
