// spec.leaderWorkerTemplate.groupRestartBackoff on the local cluster with the real controller (docs/operations.md,
// "Backoff between recreations"): a group that fails again soon after its recreation waits, longer each time, before
// its leader is deleted, and says so in a Warning Event and in `lws-temporal status`; a healthy group that fails is
// recreated at once, even while another group waits.
import assert from 'node:assert/strict';
import { readStatus } from '../../src/cli/status.js';
import { formatStatus } from '../../src/cli/format.js';
import type { LeaderWorkerSet } from '../../src/model/index.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { sampleLeaderWorkerSet } from '../../tools/stack/sample-lws.js';
import { useControllerSuite } from '../fixtures/controller-suite.js';

const NAME = 'backoff';
const SIZE = 2;
const INITIAL_SECONDS = 6;

function lwsOf(): LeaderWorkerSet {
  const lws = sampleLeaderWorkerSet({
    name: NAME,
    replicas: 2,
    size: SIZE,
    graceSeconds: 1,
    image: 'registry.invalid/ai:1',
  });
  lws.spec.leaderWorkerTemplate.groupRestartBackoff = {
    initialIntervalSeconds: INITIAL_SECONDS,
    maximumIntervalSeconds: 60,
    resetAfterSeconds: 600,
  };
  return lws;
}

describe('backoff between recreations of a group (groupRestartBackoff) with the real controller', function () {
  this.timeout(300_000);
  const suite = useControllerSuite('e2e-backoff');

  const leaderUid = async (group: number) => (await suite.lws.pod(`${NAME}-${group}`))?.metadata?.uid;
  const events = async (reason: string) =>
    (await suite.lws.core.listNamespacedEvent({ namespace: suite.namespace })).items.filter((e) => e.reason === reason);

  /**
   * Reports a crash of the group's worker and watches its leader: resolves with how long after the crash its deletion
   * was first seen (polled every 100 ms, so never early), once the group is back and Ready.
   */
  async function crashAndWatch(group: number): Promise<number> {
    const before = await leaderUid(group);
    const crashedAt = Date.now();
    await suite.lws.reportContainerRestart(`${NAME}-${group}-1`);
    const seenAt = await waitFor(
      `leader ${NAME}-${group} deleted after the crash`,
      async () => {
        const leader = await suite.lws.pod(`${NAME}-${group}`);
        return leader?.metadata?.uid !== before || leader?.metadata?.deletionTimestamp ? Date.now() : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 100 },
    );
    await suite.lws.waitForGroups(NAME, 2, SIZE);
    return seenAt - crashedAt;
  }

  it('recreates a healthy group at once, spaces the next failures by the backoff, and shows the wait', async () => {
    await suite.lws.create(lwsOf());
    await suite.lws.waitForGroups(NAME, 2, SIZE);

    // The first failure of a healthy group: recreated at once, no backoff.
    await crashAndWatch(0);
    assert.equal((await events('GroupRecreateBackOff')).length, 0);
    assert.equal((await events('GroupRecreated')).length, 1);

    // Again soon after: it waits initialIntervalSeconds, and says so in a Warning Event and in the status.
    const second = crashAndWatch(0);
    const backOff = await waitFor(
      'the GroupRecreateBackOff Event',
      async () => (await events('GroupRecreateBackOff'))[0],
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    assert.equal(backOff.type, 'Warning');
    assert.match(backOff.message ?? '', new RegExp(`group 0: .*2nd recreation in a row: waiting ${INITIAL_SECONDS} s`));
    const status = await readStatus({ namespace: suite.namespace, name: NAME }, suite.controller.kc);
    assert.equal(status.groups[0]!.backoff?.streak, 2);
    assert.equal(status.groups[1]!.backoff, undefined);
    assert.match(formatStatus(status), /RECREATED AT \(BACKOFF\)[\s\S]*\(2nd in a row\)/);

    // Group 1 fails while group 0 waits: its first failure, so it is recreated at once.
    const group1 = await crashAndWatch(1);
    assert.ok(group1 < INITIAL_SECONDS * 1000 * 4, `group 1 recreated after ${group1} ms`);
    const secondMs = await second;
    assert.ok(secondMs >= INITIAL_SECONDS * 1000, `the second recreation waited ${secondMs} ms`);
    assert.ok(
      (await events('GroupRecreateBackOff')).every((e) => /^group 0:/.test(e.message ?? '')),
      'only group 0 backed off',
    );

    // The teardown that followed tells why its leader went, and after which wait.
    const terminating = (await events('GroupLeaderTerminating')).map((e) => e.message ?? '');
    assert.ok(
      terminating.some((m) =>
        /group 0 .*recreated by the restart policy: a container of backoff-0-1 restarted, after a 6 s backoff/.test(m),
      ),
      terminating.join('\n'),
    );

    // A third failure in a row waits twice as long.
    const thirdMs = await crashAndWatch(0);
    assert.ok(thirdMs >= 2 * INITIAL_SECONDS * 1000, `the third recreation waited ${thirdMs} ms`);
    const messages = (await events('GroupRecreateBackOff')).map((e) => e.message ?? '');
    assert.ok(
      messages.some((m) => m.includes(`3rd recreation in a row: waiting ${2 * INITIAL_SECONDS} s`)),
      messages.join('\n'),
    );
  });
});
