// Who holds a name another LWS needs (upstream #236), as told in the Event and the condition.
import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { describeNameHolder, heldByAnotherLws, nameConflictMessage } from '../../src/model/index.js';

const lwsOwner = { kind: 'LeaderWorkerSet', name: 'lws-1', controller: true };
const podOwner = { kind: 'Pod', name: 'lws-1', controller: true };
const groupLabels = { 'leaderworkerset.sigs.k8s.io/name': 'lws', 'leaderworkerset.sigs.k8s.io/group-index': '1' };

describe('model/name-conflicts', () => {
  const rows: Array<{
    name: string;
    meta: Parameters<typeof describeNameHolder>[0];
    holder: string;
    anotherLws: boolean;
  }> = [
    {
      name: "another LWS's leader StatefulSet",
      meta: { ownerReferences: [lwsOwner] },
      holder: 'the leader StatefulSet of LeaderWorkerSet lws-1',
      anotherLws: true,
    },
    {
      name: "another LWS's worker StatefulSet",
      meta: { labels: groupLabels, ownerReferences: [podOwner] },
      holder: 'the worker StatefulSet of group 1 of LeaderWorkerSet lws',
      anotherLws: false,
    },
    {
      name: 'a StatefulSet some other controller owns',
      meta: { ownerReferences: [{ kind: 'Deployment', name: 'x', controller: true }] },
      holder: 'a StatefulSet controlled by Deployment x',
      anotherLws: false,
    },
    {
      name: 'an owner that is no controller counts as none',
      meta: { ownerReferences: [{ ...lwsOwner, controller: false }] },
      holder: 'a StatefulSet of no controller',
      anotherLws: false,
    },
    { name: 'no metadata at all', meta: undefined, holder: 'a StatefulSet of no controller', anotherLws: false },
  ];
  for (const row of rows) {
    it(row.name, () => {
      assert.equal(describeNameHolder(row.meta), row.holder);
      assert.equal(heldByAnotherLws(row.meta), row.anotherLws);
    });
  }

  it('says what is taken, by whom, and what to do', () => {
    const message = nameConflictMessage('ns/lws-1', 'the worker StatefulSet of group 1 of LeaderWorkerSet lws');
    assert.match(message, /^StatefulSet ns\/lws-1 is the worker StatefulSet of group 1 of LeaderWorkerSet lws, /);
    assert.match(message, /rename or delete one of the two LeaderWorkerSets$/);
  });
});
