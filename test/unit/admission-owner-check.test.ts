import assert from 'node:assert/strict';
import { request } from 'node:https';
import type { V1Pod } from '@kubernetes/client-node';
import { createServingBundle } from '../../src/admission/certificates.js';
import { ownerCheck, sharedWhileInFlight, type LiveStatefulSet } from '../../src/admission/owner-check.js';
import { createAdmissionServer, type AdmissionReview } from '../../src/admission/server.js';
import { silentLogger } from '../../src/log.js';

const stsRef = (uid: string, over: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  name: 'demo-0',
  uid,
  controller: true,
  ...over,
});

const worker = (ownerReferences?: ReturnType<typeof stsRef>[]): V1Pod => ({
  metadata: {
    name: 'demo-0-1',
    namespace: 'team-a',
    labels: { 'leaderworkerset.sigs.k8s.io/name': 'demo' },
    ...(ownerReferences && { ownerReferences }),
  },
  spec: { containers: [{ name: 'main', image: 'x' }] },
});

describe('admission owner check: no pod of a StatefulSet that is gone or being deleted', () => {
  const cases: { name: string; pod: V1Pod; live: LiveStatefulSet | null; want?: RegExp }[] = [
    { name: 'its StatefulSet live: admitted', pod: worker([stsRef('s1')]), live: { uid: 's1' } },
    {
      name: 'its StatefulSet deleted: refused, naming it',
      pod: worker([stsRef('s1')]),
      live: null,
      want: /pod team-a\/demo-0-1: its StatefulSet team-a\/demo-0 \(uid s1\) no longer exists/,
    },
    {
      name: 'another StatefulSet of that name now: refused',
      pod: worker([stsRef('s1')]),
      live: { uid: 's2' },
      want: /\(uid s1\) no longer exists/,
    },
    {
      name: 'its StatefulSet being deleted: refused',
      pod: worker([stsRef('s1')]),
      live: { uid: 's1', deletionTimestamp: '2026-12-03T07:00:00Z' },
      want: /\(uid s1\) is being deleted; no new pod of it is admitted/,
    },
    { name: 'no owner (a pod made by hand): not looked at', pod: worker(), live: null },
    {
      name: 'an owner that is not its controller: not looked at',
      pod: worker([stsRef('s1', { controller: false })]),
      live: null,
    },
    {
      name: 'a controller of another kind: not looked at',
      pod: worker([stsRef('j1', { kind: 'Job', apiVersion: 'batch/v1' })]),
      live: null,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const asked: string[] = [];
      const check = ownerCheck(async (ns, name) => {
        asked.push(`${ns}/${name}`);
        return c.live;
      }, silentLogger);
      const got = await check('team-a', c.pod);
      if (c.want) assert.match(got ?? '', c.want);
      else assert.equal(got, undefined);
    });
  }

  it('a StatefulSet it cannot read: admitted (the garbage collector stays the safety net)', async () => {
    const check = ownerCheck(async () => {
      throw new Error('connect ECONNREFUSED');
    }, silentLogger);
    assert.equal(await check('team-a', worker([stsRef('s1')])), undefined);
  });

  it('over HTTPS: the webhook denies such a pod with 403 and the message, and reads nothing for other requests', async () => {
    const bundle = await createServingBundle({ hosts: ['127.0.0.1'] });
    const asked: string[] = [];
    const admission = createAdmissionServer({
      tls: bundle,
      ownerCheck: ownerCheck(async (ns, name) => {
        asked.push(`${ns}/${name}`);
        return null;
      }, silentLogger),
    });
    const port = await admission.listen(0, '127.0.0.1');
    const post = (req: Record<string, unknown>) =>
      new Promise<AdmissionReview>((resolve, reject) => {
        const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: req });
        const r = request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/mutate-pod',
            ca: bundle.ca.cert,
            headers: { 'content-type': 'application/json' },
          },
          (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c.toString()));
            res.on('end', () => resolve(JSON.parse(text) as AdmissionReview));
          },
        );
        r.on('error', reject);
        r.end(body);
      });
    try {
      const base = { uid: 'r1', kind: { group: '', version: 'v1', kind: 'Pod' }, namespace: 'team-a' };
      const denied = await post({ ...base, operation: 'CREATE', object: worker([stsRef('s1')]) });
      assert.equal(denied.response.allowed, false);
      assert.equal(denied.response.status?.code, 403);
      assert.match(denied.response.status?.message ?? '', /demo-0 \(uid s1\) no longer exists/);
      const update = await post({ ...base, operation: 'UPDATE', object: worker([stsRef('s1')]) });
      assert.equal(update.response.allowed, true);
      assert.deepEqual(asked, ['team-a/demo-0']);
    } finally {
      await admission.close();
    }
  });
});

describe('admission: lookups of one StatefulSet while its read is on its way share it', () => {
  /** A lookup whose reads answer when the test says, counting them by key. */
  function slowLookup() {
    const reads: string[] = [];
    const answers: (() => void)[] = [];
    const lookup = (namespace: string, name: string) =>
      new Promise<LiveStatefulSet | null>((resolve, reject) => {
        reads.push(`${namespace}/${name}`);
        answers.push(() => (name === 'broken' ? reject(new Error('HTTP 500')) : resolve({ uid: `${name}-uid` })));
      });
    return { reads, lookup, answerAll: () => answers.splice(0).forEach((a) => a()) };
  }

  it('three lookups of one set at once: one read, the same answer for each', async () => {
    const { reads, lookup, answerAll } = slowLookup();
    const shared = sharedWhileInFlight(lookup);
    const pending = [shared('team-a', 'demo-0'), shared('team-a', 'demo-0'), shared('team-a', 'demo-0')];
    answerAll();
    assert.deepEqual(await Promise.all(pending), [{ uid: 'demo-0-uid' }, { uid: 'demo-0-uid' }, { uid: 'demo-0-uid' }]);
    assert.deepEqual(reads, ['team-a/demo-0']);
  });

  it('another set, or the same name in another namespace: a read each', async () => {
    const { reads, lookup, answerAll } = slowLookup();
    const shared = sharedWhileInFlight(lookup);
    const pending = [shared('team-a', 'demo-0'), shared('team-a', 'demo-1'), shared('team-b', 'demo-0')];
    answerAll();
    await Promise.all(pending);
    assert.deepEqual(reads, ['team-a/demo-0', 'team-a/demo-1', 'team-b/demo-0']);
  });

  it('a lookup after the read has answered: a fresh read, never a remembered answer', async () => {
    const { reads, lookup, answerAll } = slowLookup();
    const shared = sharedWhileInFlight(lookup);
    const first = shared('team-a', 'demo-0');
    answerAll();
    await first;
    const second = shared('team-a', 'demo-0');
    answerAll();
    await second;
    assert.deepEqual(reads, ['team-a/demo-0', 'team-a/demo-0']);
  });

  it('a failed read fails each lookup that shared it, and the next lookup reads again', async () => {
    const { reads, lookup, answerAll } = slowLookup();
    const shared = sharedWhileInFlight(lookup);
    const pending = [shared('team-a', 'broken'), shared('team-a', 'broken')].map((p) =>
      p.then(
        () => 'ok',
        () => 'failed',
      ),
    );
    answerAll();
    assert.deepEqual(await Promise.all(pending), ['failed', 'failed']);
    const again = shared('team-a', 'broken').catch(() => 'failed');
    answerAll();
    await again;
    assert.deepEqual(reads, ['team-a/broken', 'team-a/broken']);
  });

  it('through the check: pods of one set reviewed at once cost one read, each pod judged on it', async () => {
    const { reads, lookup, answerAll } = slowLookup();
    const check = ownerCheck(lookup, silentLogger);
    const pending = [check('team-a', worker([stsRef('demo-0-uid')])), check('team-a', worker([stsRef('old-uid')]))];
    answerAll();
    const [current, stale] = await Promise.all(pending);
    assert.equal(current, undefined);
    assert.match(stale ?? '', /no longer exists/);
    assert.deepEqual(reads, ['team-a/demo-0']);
  });
});
