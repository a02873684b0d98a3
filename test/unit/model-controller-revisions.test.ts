import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import {
  buildControllerRevision,
  controllerRevisionName,
  isRevisionData,
  LABEL_NAME,
  LABEL_TEMPLATE_REVISION_HASH,
  lwsAtRevision,
  nextRevisionNumber,
  revisionsToPrune,
  templateRevisionHash,
  type RevisionFacts,
} from '../../src/model/index.js';
import { sampleLws } from './model-fixtures.js';

const lws = sampleLws();
const hash = templateRevisionHash(lws.spec);

describe('model/controller-revisions', () => {
  it('builds the revision of the current spec: named after the hash, labelled, owned by the LWS', () => {
    const r = buildControllerRevision(lws, 3);
    assert.equal(r.metadata?.name, controllerRevisionName('demo', hash));
    assert.equal(r.metadata?.name, `demo-${hash}`);
    assert.deepEqual(r.metadata?.labels, { [LABEL_NAME]: 'demo', [LABEL_TEMPLATE_REVISION_HASH]: hash });
    assert.equal(r.metadata?.ownerReferences?.[0]?.uid, lws.metadata.uid);
    assert.equal(r.metadata?.ownerReferences?.[0]?.controller, true);
    assert.equal(r.revision, 3);
    assert.ok(isRevisionData(r.data));
  });

  it('holds only what a group is built from: the leader-worker template and the network config, no replicas', () => {
    const data = buildControllerRevision(lws, 1).data as { spec: Record<string, unknown> };
    assert.deepEqual(Object.keys(data.spec).sort(), ['leaderWorkerTemplate', 'networkConfig']);
    // Upstream's layout and directive: applied back to the LWS, each field is replaced whole.
    assert.deepEqual(data.spec['networkConfig'], { subdomainPolicy: 'Shared', $patch: 'replace' });
    assert.equal((data.spec['leaderWorkerTemplate'] as Record<string, unknown>)['$patch'], 'replace');
  });

  it('gives back the LWS as of the revision: its templates, everything else as now', () => {
    const old = buildControllerRevision(lws, 1);
    const now = sampleLws({ replicas: 7, leaderWorkerTemplate: { ...lws.spec.leaderWorkerTemplate, size: 9 } });
    assert.ok(isRevisionData(old.data));
    const at = lwsAtRevision(now, old.data);
    assert.equal(at.spec.leaderWorkerTemplate.size, lws.spec.leaderWorkerTemplate.size);
    assert.equal(at.spec.replicas, 7);
    assert.equal(templateRevisionHash(at.spec), hash, 'the same hash as the revision it came from');
  });

  it("reads upstream's revisions: their strategic-merge directives are not part of the spec", () => {
    const upstream = {
      spec: {
        leaderWorkerTemplate: { ...lws.spec.leaderWorkerTemplate, $patch: 'replace' },
        networkConfig: { subdomainPolicy: 'Shared', $patch: 'replace' },
      },
    };
    assert.ok(isRevisionData(upstream));
    const at = lwsAtRevision(lws, upstream);
    assert.equal('$patch' in at.spec.leaderWorkerTemplate, false);
    assert.equal(templateRevisionHash(at.spec), hash);
  });

  it('refuses data that is no revision', () => {
    for (const data of [undefined, null, {}, { spec: {} }, { spec: { leaderWorkerTemplate: {} } }]) {
      assert.equal(isRevisionData(data), false, JSON.stringify(data));
    }
  });

  const facts = (...rows: Array<[string, number]>): RevisionFacts[] =>
    rows.map(([h, revision]) => ({ name: `demo-${h}`, hash: h, revision }));

  // [case, revisions, the one made or reused, next number]
  const numbers: Array<[string, RevisionFacts[], string, number]> = [
    ['the first', [], 'a', 1],
    ['a new one after 2', facts(['a', 1], ['b', 2]), 'c', 3],
    ['a rollback to one still there: above the others', facts(['a', 1], ['b', 2]), 'a', 3],
    ['the newest itself: its own number does not count', facts(['a', 1], ['b', 2]), 'b', 2],
  ];
  for (const [what, revisions, made, expected] of numbers) {
    it(`numbers revisions: ${what} gets ${expected}`, () => {
      assert.equal(nextRevisionNumber(revisions, `demo-${made}`), expected);
    });
  }

  // [case, revisions, current, in use, pruned]
  const prunes: Array<[string, RevisionFacts[], string, string[], string[]]> = [
    ['only the current one', facts(['a', 1]), 'a', ['a'], []],
    ['older ones no group uses go', facts(['a', 1], ['b', 2], ['c', 3]), 'c', ['c'], ['a', 'b']],
    ['one a group being torn down still carries stays', facts(['a', 1], ['b', 2], ['c', 3]), 'c', ['a', 'c'], ['b']],
    ['the current one stays though no group has it yet', facts(['a', 1], ['b', 2]), 'b', ['a'], []],
  ];
  for (const [what, revisions, current, inUse, pruned] of prunes) {
    it(`prunes: ${what}`, () => {
      assert.deepEqual(
        revisionsToPrune(revisions, current, inUse).map((r) => r.hash),
        pruned,
      );
    });
  }
});
