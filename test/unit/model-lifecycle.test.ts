import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import {
  LABEL_NAME,
  LABEL_TEMPLATE_REVISION_HASH,
  LABEL_WORKER_INDEX,
  leaderStatefulSetReplicas,
  lifecycleOf,
  lwsFacts,
  predatesLws,
  templateRevisionHash,
  wantsGroup,
  type LeaderWorkerSet,
} from '../../src/model/index.js';
import { sampleLws } from './model-fixtures.js';

// sampleLws: default/demo, generation 3, replicas 2, size 4.
const lws = sampleLws();
const currentRevision = templateRevisionHash(lws.spec);
const deleting = (l: LeaderWorkerSet): LeaderWorkerSet => ({
  ...l,
  metadata: { ...l.metadata, deletionTimestamp: '2025-01-01T00:00:00Z' },
});

describe('model/lifecycle: lifecycleOf', () => {
  const newImage = sampleLws({
    leaderWorkerTemplate: {
      ...lws.spec.leaderWorkerTemplate,
      workerTemplate: { spec: { containers: [{ name: 'worker', image: 'nginx:1.27' }] } },
    },
  });
  const oneReplica = sampleLws({ replicas: undefined });
  const labels = (revision: string | undefined) => {
    const out: Record<string, string> = { [LABEL_NAME]: 'demo', [LABEL_WORKER_INDEX]: '0' };
    if (revision !== undefined) out[LABEL_TEMPLATE_REVISION_HASH] = revision;
    return { labels: out };
  };

  // [what, lws, groupIndex, revision label of the leader, expected, the leader StatefulSet's replicas]
  const cases: Array<[string, LeaderWorkerSet | undefined, number, string | undefined, string, number?]> = [
    ['LWS unknown', undefined, 0, currentRevision, 'delete'],
    ['LWS being deleted', deleting(lws), 0, currentRevision, 'delete'],
    ['LWS being deleted, group above replicas', deleting(lws), 5, currentRevision, 'delete'],
    ['LWS being deleted, old revision', deleting(lws), 0, 'old', 'delete'],
    ['group index == replicas', lws, 2, currentRevision, 'scale-down'],
    ['group index > replicas', lws, 7, currentRevision, 'scale-down'],
    ['group above replicas on an old revision', lws, 2, 'old', 'scale-down'],
    ['replicas defaulted to 1, group 1', oneReplica, 1, currentRevision, 'scale-down'],
    ['replicas defaulted to 1, group 0', oneReplica, 0, currentRevision, 'rebuild'],
    ['revision label differs from the spec', lws, 1, 'old', 'rolling-update'],
    ['template changed since the leader was built', newImage, 0, currentRevision, 'rolling-update'],
    ['leader built from the changed template', newImage, 0, templateRevisionHash(newImage.spec), 'rebuild'],
    ['revision label matches', lws, 1, currentRevision, 'rebuild'],
    ['no revision label', lws, 0, undefined, 'rebuild'],
    ['a surge group the leader StatefulSet still wants', lws, 2, currentRevision, 'rebuild', 3],
    ['a surge group on a template changed since', newImage, 2, currentRevision, 'rolling-update', 3],
    ['a surge group released (leader StatefulSet back to replicas)', lws, 2, currentRevision, 'scale-down', 2],
    ['a group above the leader StatefulSet too', lws, 3, currentRevision, 'scale-down', 3],
    ['the leader StatefulSet still larger, LWS being deleted', deleting(lws), 2, currentRevision, 'delete', 3],
    ['the leader StatefulSet smaller than replicas (scaling up)', lws, 1, currentRevision, 'rebuild', 1],
  ];
  for (const [what, l, group, revision, expected, leaderReplicas] of cases) {
    it(`${what}: ${expected}`, () => {
      assert.equal(lifecycleOf(l, group, labels(revision), leaderReplicas), expected);
    });
  }

  it('compares against the defaulted spec (a spec and its defaulted form hash alike)', () => {
    const explicit = sampleLws({ startupPolicy: 'LeaderCreated', networkConfig: { subdomainPolicy: 'Shared' } });
    assert.equal(lifecycleOf(explicit, 0, labels(currentRevision)), 'rebuild');
  });

  // An LWS deleted and created again under its name: the leaders created before it are the older one's.
  const createdAt = (t: string | Date | undefined): LeaderWorkerSet => ({
    ...lws,
    metadata: { ...lws.metadata, creationTimestamp: t },
  });
  const leaderCases: [string, LeaderWorkerSet, string | undefined, string][] = [
    ['leader created before the LWS', createdAt('2026-05-01T10:00:05Z'), '2026-05-01T10:00:04Z', 'delete'],
    [
      '... the LWS as a typed client gives it (a Date)',
      createdAt(new Date('2026-05-01T10:00:05Z')),
      '2026-05-01T10:00:04Z',
      'delete',
    ],
    [
      'leader created in the same second as the LWS',
      createdAt('2026-05-01T10:00:05Z'),
      '2026-05-01T10:00:05Z',
      'rebuild',
    ],
    ['leader created after the LWS', createdAt('2026-05-01T10:00:05Z'), '2026-05-01T10:07:00Z', 'rebuild'],
    ['leader creation unknown', createdAt('2026-05-01T10:00:05Z'), undefined, 'rebuild'],
    ['LWS creation unknown', createdAt(undefined), '2026-05-01T10:00:04Z', 'rebuild'],
  ];
  for (const [what, l, leaderCreatedAt, expected] of leaderCases) {
    it(`${what}: ${expected}`, () => {
      const leader = { ...labels(currentRevision), ...(leaderCreatedAt && { createdAt: leaderCreatedAt }) };
      assert.equal(lifecycleOf(l, 0, leader), expected);
      assert.equal(predatesLws(l, leaderCreatedAt), expected === 'delete');
    });
  }
});

describe('model/lifecycle: wantsGroup', () => {
  // [what, lws, groupIndex, the leader StatefulSet's replicas, wanted]
  const cases: Array<[string, LeaderWorkerSet, number, number | undefined, boolean]> = [
    ['below replicas', lws, 1, undefined, true],
    ['at replicas', lws, 2, undefined, false],
    ['above replicas', lws, 5, undefined, false],
    ['replicas defaulted to 1: group 0', sampleLws({ replicas: undefined }), 0, undefined, true],
    ['replicas defaulted to 1: group 1', sampleLws({ replicas: undefined }), 1, undefined, false],
    ['a surge group the leader StatefulSet keeps', lws, 2, 3, true],
    ['above the surge groups too', lws, 3, 3, false],
    ['a surge group released (leader StatefulSet back to replicas)', lws, 2, 2, false],
    ['below replicas while the leader StatefulSet is smaller (scaling up)', lws, 1, 1, true],
    ['replicas 0', sampleLws({ replicas: 0 }), 0, undefined, false],
  ];
  for (const [what, l, group, leaderReplicas, wanted] of cases) {
    it(`${what}: ${wanted ? 'wanted' : 'not wanted'}`, () =>
      assert.equal(wantsGroup(lwsFacts(l), group, leaderReplicas), wanted));
  }
});

describe('model/lifecycle: leaderStatefulSetReplicas', () => {
  // sampleLws has uid lws-uid-1.
  const own = { ownerUid: 'lws-uid-1', replicas: 3 };
  // [what, the leader StatefulSet as read, expected replicas]
  const cases: Array<[string, Parameters<typeof leaderStatefulSetReplicas>[1], number | undefined]> = [
    ["the LWS's own", own, 3],
    ['none read', undefined, undefined],
    ['gone (null)', null, undefined],
    ['being deleted', { ...own, deletionTimestamp: '2025-01-01T00:00:00Z' }, undefined],
    ["an older LWS's of the name", { ...own, ownerUid: 'lws-uid-0' }, undefined],
    ['without a controlling owner', { replicas: 3 }, undefined],
  ];
  for (const [what, sts, expected] of cases) {
    it(`${what}: ${String(expected)}`, () => assert.equal(leaderStatefulSetReplicas(lws, sts), expected));
  }
});
