import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import * as m from '../../src/model/index.js';

describe('model/labels', () => {
  const cases: Array<[string, string]> = [
    [m.API_GROUP, 'leaderworkerset.x-k8s.io'],
    [m.API_VERSION, 'v1'],
    [m.API_GROUP_VERSION, 'leaderworkerset.x-k8s.io/v1'],
    [m.KIND, 'LeaderWorkerSet'],
    [m.PLURAL, 'leaderworkersets'],
    [m.SHORT_NAME, 'lws'],
    [m.CRD_NAME, 'leaderworkersets.leaderworkerset.x-k8s.io'],
    [m.LABEL_NAME, 'leaderworkerset.sigs.k8s.io/name'],
    [m.LABEL_GROUP_INDEX, 'leaderworkerset.sigs.k8s.io/group-index'],
    [m.LABEL_WORKER_INDEX, 'leaderworkerset.sigs.k8s.io/worker-index'],
    [m.LABEL_GROUP_KEY, 'leaderworkerset.sigs.k8s.io/group-key'],
    [m.LABEL_TEMPLATE_REVISION_HASH, 'leaderworkerset.sigs.k8s.io/template-revision-hash'],
    [m.ANNOTATION_SIZE, 'leaderworkerset.sigs.k8s.io/size'],
    [m.ANNOTATION_LEADER_NAME, 'leaderworkerset.sigs.k8s.io/leader-name'],
    [m.ANNOTATION_POD_TERMINATION_POLICY, 'leaderworkerset.sigs.k8s.io/pod-termination-policy'],
    [m.ENV_LEADER_ADDRESS, 'LWS_LEADER_ADDRESS'],
    [m.ENV_GROUP_SIZE, 'LWS_GROUP_SIZE'],
    [m.ENV_WORKER_INDEX, 'LWS_WORKER_INDEX'],
    [m.LABEL_STATEFULSET_POD_INDEX, 'apps.kubernetes.io/pod-index'],
  ];
  for (const [actual, expected] of cases) {
    it(`names ${expected}`, () => assert.equal(actual, expected));
  }
});
