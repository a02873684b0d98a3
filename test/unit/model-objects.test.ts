import assert from 'node:assert/strict';
import type { V1ContainerStatus, V1OwnerReference, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { describe, it } from 'mocha';
import {
  ANNOTATION_SIZE,
  byName,
  controllerUid,
  deletionMadeAt,
  FOREGROUND_DELETION_FINALIZER,
  inForegroundDeletion,
  isDeleting,
  isLiveIncarnation,
  isoTime,
  isPodReady,
  isStatefulSetReady,
  LABEL_GROUP_INDEX,
  LABEL_NAME,
  podFacts,
  selectors,
  statefulSetFacts,
} from '../../src/model/index.js';

function owner(uid: string, controller: boolean | undefined): V1OwnerReference {
  return { apiVersion: 'v1', kind: 'Pod', name: `owner-${uid}`, uid, controller };
}

function containerStatus(name: string, restartCount: number): V1ContainerStatus {
  return { name, image: 'nginx', imageID: '', ready: true, restartCount };
}

/** A watch event's object: client-node leaves it as JSON, timestamps as strings, whatever its type says. */
const fromWatch = (json: unknown) => json as V1Pod;

describe('model/objects', () => {
  describe('podFacts', () => {
    const base: V1Pod = {
      metadata: { namespace: 'default', name: 'demo-0-1', uid: 'p1', labels: { [LABEL_NAME]: 'demo' } },
    };

    // [what, pod, expected restartCount]
    const restarts: Array<[string, V1Pod, number]> = [
      ['no status', base, 0],
      ['no container statuses', { ...base, status: { phase: 'Pending' } }, 0],
      ['one container, no restart', { ...base, status: { containerStatuses: [containerStatus('a', 0)] } }, 0],
      [
        'two containers',
        { ...base, status: { containerStatuses: [containerStatus('a', 1), containerStatus('b', 2)] } },
        3,
      ],
      ['an init container only', { ...base, status: { initContainerStatuses: [containerStatus('init', 4)] } }, 4],
      [
        'containers and init containers',
        {
          ...base,
          status: {
            containerStatuses: [containerStatus('a', 1), containerStatus('b', 2)],
            initContainerStatuses: [containerStatus('init', 3)],
          },
        },
        6,
      ],
    ];
    for (const [what, pod, expected] of restarts) {
      it(`sums restartCount (${what}): ${expected}`, () => assert.equal(podFacts(pod)?.restartCount, expected));
    }

    // [what, ownerReferences, expected ownerUid]
    const owners: Array<[string, V1OwnerReference[] | undefined, string | undefined]> = [
      ['no owners', undefined, undefined],
      ['a controller', [owner('sts', true)], 'sts'],
      ['a non-controller, then the controller', [owner('other', false), owner('sts', true)], 'sts'],
      ['only non-controllers', [owner('a', false), owner('b', undefined)], undefined],
    ];
    for (const [what, refs, expected] of owners) {
      it(`reads the controller owner uid (${what}): ${String(expected)}`, () => {
        assert.equal(podFacts({ metadata: { ...base.metadata, ownerReferences: refs } })?.ownerUid, expected);
      });
    }

    // [what, conditions, ready]
    const readiness: Array<[string, { type: string; status: string }[] | undefined, boolean]> = [
      ['no conditions', undefined, false],
      ['Ready True', [{ type: 'Ready', status: 'True' }], true],
      ['Ready False', [{ type: 'Ready', status: 'False' }], false],
      ['Ready Unknown', [{ type: 'Ready', status: 'Unknown' }], false],
      ['only ContainersReady', [{ type: 'ContainersReady', status: 'True' }], false],
      [
        'PodScheduled then Ready',
        [
          { type: 'PodScheduled', status: 'True' },
          { type: 'Ready', status: 'True' },
        ],
        true,
      ],
    ];
    for (const [what, conditions, ready] of readiness) {
      it(`is ${ready ? '' : 'not '}ready with ${what}`, () => {
        assert.equal(podFacts({ ...base, status: { conditions } })?.ready, ready);
        assert.equal(isPodReady({ status: { conditions } }), ready);
      });
    }

    // The same pod as a typed list gives it (Dates) and as a watch event delivers it (RFC 3339 strings).
    const typed: V1Pod = {
      metadata: {
        ...base.metadata,
        annotations: { [ANNOTATION_SIZE]: '2' },
        creationTimestamp: new Date('2025-01-01T00:00:07Z'),
        deletionTimestamp: new Date('2025-01-01T00:00:30Z'),
        deletionGracePeriodSeconds: 30,
        ownerReferences: [owner('sts', true)],
      },
      status: { conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [containerStatus('a', 2)] },
    };
    const watched = fromWatch(JSON.parse(JSON.stringify(typed)));
    const facts = {
      namespace: 'default',
      name: 'demo-0-1',
      uid: 'p1',
      labels: { [LABEL_NAME]: 'demo' },
      annotations: { [ANNOTATION_SIZE]: '2' },
      deletionGracePeriodSeconds: 30,
      ready: true,
      restartCount: 2,
      ownerUid: 'sts',
    };
    // [what, pod, expected facts]
    const shapes: Array<[string, V1Pod, object]> = [
      [
        'a typed V1Pod (Dates)',
        typed,
        { ...facts, createdAt: '2025-01-01T00:00:07.000Z', deletionTimestamp: '2025-01-01T00:00:30.000Z' },
      ],
      [
        'a watch event (strings as sent)',
        fromWatch({
          ...watched,
          metadata: {
            ...watched.metadata,
            creationTimestamp: '2025-01-01T00:00:07Z',
            deletionTimestamp: '2025-01-01T00:00:30Z',
          },
        }),
        { ...facts, createdAt: '2025-01-01T00:00:07Z', deletionTimestamp: '2025-01-01T00:00:30Z' },
      ],
      [
        'a live pod with nothing optional',
        base,
        {
          namespace: 'default',
          name: 'demo-0-1',
          uid: 'p1',
          labels: { [LABEL_NAME]: 'demo' },
          annotations: {},
          ready: false,
          restartCount: 0,
        },
      ],
    ];
    for (const [what, pod, expected] of shapes) {
      it(`reads ${what}`, () => assert.deepEqual(podFacts(pod), expected));
    }

    // A user's own labels and annotations (the pod template's) stay out of the facts, which workflow histories record.
    const users = { 'example.com/team': 'ml', 'example.com/contact': 'alice@example.com' };
    const mixed: V1Pod = {
      metadata: {
        ...base.metadata,
        labels: { ...users, [LABEL_NAME]: 'demo', [LABEL_GROUP_INDEX]: '0' },
        annotations: { ...users, [ANNOTATION_SIZE]: '2', 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
      },
    };
    for (const [what, got, expected] of [
      ['labels', podFacts(mixed)?.labels, { [LABEL_NAME]: 'demo', [LABEL_GROUP_INDEX]: '0' }],
      ['annotations', podFacts(mixed)?.annotations, { [ANNOTATION_SIZE]: '2' }],
      [
        'StatefulSet labels',
        statefulSetFacts(mixed as V1StatefulSet)?.labels,
        { [LABEL_NAME]: 'demo', [LABEL_GROUP_INDEX]: '0' },
      ],
    ] as const) {
      it(`keeps only this controller's ${what}`, () => assert.deepEqual(got, expected));
    }

    it('tells deletion from deletionTimestamp, and gives empty labels for none', () => {
      assert.equal(isDeleting(podFacts(typed)!), true);
      assert.equal(isDeleting(podFacts(base)!), false);
      assert.deepEqual(podFacts({ metadata: { namespace: 'n', name: 'x', uid: 'u' } })?.labels, {});
    });

    it('a live incarnation: that uid, not terminating; none of the name, another uid or a terminating one is not', () => {
      const pod = podFacts(base)!;
      const identity = { namespace: 'default', name: 'demo-0-1', uid: 'p1' };
      assert.equal(isLiveIncarnation(pod, identity), true);
      assert.equal(isLiveIncarnation(null, identity), false);
      assert.equal(isLiveIncarnation(pod, { ...identity, uid: 'p2' }), false);
      assert.equal(isLiveIncarnation(podFacts(typed)!, identity), false);
    });

    // deletionTimestamp is when the grace period ends; a typed list gives a Date, a watch event the RFC 3339 string.
    const deletions: [string, unknown, number | undefined, number | undefined][] = [
      ['a Date, 30 s grace', new Date('2025-01-01T00:00:30Z'), 30, Date.parse('2025-01-01T00:00:00Z')],
      ['a string, 30 s grace', '2025-01-01T00:00:30Z', 30, Date.parse('2025-01-01T00:00:00Z')],
      [
        'a string, no grace period (force delete)',
        '2025-01-01T00:00:30Z',
        undefined,
        Date.parse('2025-01-01T00:00:30Z'),
      ],
      ['not being deleted', undefined, undefined, undefined],
    ];
    for (const [what, deletionTimestamp, grace, madeAt] of deletions) {
      it(`tells when the deletion was made from deletionTimestamp minus the grace period: ${what}`, () => {
        const metadata = { ...base.metadata, deletionTimestamp, deletionGracePeriodSeconds: grace };
        assert.equal(deletionMadeAt(podFacts({ metadata } as V1Pod)!), madeAt);
      });
    }

    // [what, creationTimestamp, createdAt]: an instant, in whichever RFC 3339 form it came.
    const creations: [string, Date | string, string][] = [
      ['a Date (a typed list)', new Date('2025-01-01T00:00:07Z'), '2025-01-01T00:00:07.000Z'],
      ['a string (a watch event)', '2025-01-01T00:00:07Z', '2025-01-01T00:00:07Z'],
    ];
    for (const [what, creationTimestamp, createdAt] of creations) {
      it(`keeps when the pod was created, as RFC 3339: ${what}`, () => {
        const metadata = { ...base.metadata, creationTimestamp };
        const got = podFacts({ metadata } as V1Pod)?.createdAt;
        assert.equal(got, createdAt);
        assert.equal(Date.parse(got!), Date.parse('2025-01-01T00:00:07Z'));
      });
    }

    for (const missing of ['name', 'namespace', 'uid'] as const) {
      it(`gives nothing for a pod without metadata.${missing}`, () => {
        assert.equal(podFacts({ metadata: { ...base.metadata, [missing]: undefined } }), undefined);
      });
    }
    it('gives nothing for a pod without metadata', () => assert.equal(podFacts({}), undefined));
  });

  describe('statefulSetFacts', () => {
    const base: V1StatefulSet = { metadata: { namespace: 'default', name: 'demo-0', uid: 's0' } };

    it('reads spec.replicas (1 when absent, as the API server defaults it), readyReplicas (0 when absent) and the controlling owner', () => {
      assert.deepEqual(
        statefulSetFacts({
          metadata: {
            ...base.metadata,
            labels: { [LABEL_GROUP_INDEX]: '0' },
            ownerReferences: [owner('x', false), owner('l0', true)],
          },
          spec: { replicas: 4, selector: {}, serviceName: 'demo', template: {} },
          status: { replicas: 3, readyReplicas: 2, availableReplicas: 1, currentRevision: 'a', updateRevision: 'b' },
        }),
        {
          namespace: 'default',
          name: 'demo-0',
          uid: 's0',
          labels: { [LABEL_GROUP_INDEX]: '0' },
          replicas: 4,
          readyReplicas: 2,
          availableReplicas: 1,
          rolledOut: false,
          ownerUid: 'l0',
        },
      );
      assert.equal(isDeleting(statefulSetFacts(base)!), false);
      assert.equal(
        isDeleting(statefulSetFacts({ metadata: { ...base.metadata, deletionTimestamp: new Date() } })!),
        true,
      );
      assert.equal(statefulSetFacts(base)?.readyReplicas, 0);
      assert.equal(statefulSetFacts(base)?.replicas, 1);
      assert.equal(statefulSetFacts({ ...base, status: { replicas: 3 } })?.readyReplicas, 0);
      assert.equal(statefulSetFacts(base)?.ownerUid, undefined);
      assert.deepEqual(statefulSetFacts(base)?.labels, {});
    });

    for (const missing of ['name', 'namespace', 'uid'] as const) {
      it(`gives nothing for a StatefulSet without metadata.${missing}`, () => {
        assert.equal(statefulSetFacts({ metadata: { ...base.metadata, [missing]: undefined } }), undefined);
      });
    }
  });

  describe('isoTime', () => {
    const cases: [string, Date | string | null | undefined, string | undefined][] = [
      ['a Date', new Date('2025-01-01T00:00:07Z'), '2025-01-01T00:00:07.000Z'],
      ['a string, as it came', '2025-01-01T00:00:07Z', '2025-01-01T00:00:07Z'],
      ['null', null, undefined],
      ['undefined', undefined, undefined],
    ];
    for (const [what, value, expected] of cases)
      it(`${what}: ${String(expected)}`, () => assert.equal(isoTime(value), expected));
  });

  describe('controllerUid', () => {
    // [what, metadata, expected]
    const cases: [string, Parameters<typeof controllerUid>[0], string | undefined][] = [
      ['no metadata', undefined, undefined],
      ['no owners', {}, undefined],
      ['a controller', { ownerReferences: [owner('sts', true)] }, 'sts'],
      ['a non-controller, then the controller', { ownerReferences: [owner('a', false), owner('sts', true)] }, 'sts'],
      ['only non-controllers', { ownerReferences: [owner('a', false), owner('b', undefined)] }, undefined],
    ];
    for (const [what, meta, expected] of cases) {
      it(`${what}: ${String(expected)}`, () => assert.equal(controllerUid(meta), expected));
    }
  });

  describe('inForegroundDeletion', () => {
    const at = new Date('2026-12-05T00:00:00Z');
    // [what, metadata, expected]
    const cases: [string, Parameters<typeof inForegroundDeletion>[0], boolean][] = [
      ['no metadata', undefined, false],
      ['not deleted', { finalizers: ['example.com/keep'] }, false],
      ['deleted in the background', { deletionTimestamp: at, finalizers: ['orphan'] }, false],
      ['deleted, no finalizer left', { deletionTimestamp: at }, false],
      ['the finalizer without a deletion (set by hand)', { finalizers: [FOREGROUND_DELETION_FINALIZER] }, false],
      [
        'deleted in the foreground',
        { deletionTimestamp: at, finalizers: ['a/b', FOREGROUND_DELETION_FINALIZER] },
        true,
      ],
    ];
    for (const [what, meta, expected] of cases) {
      it(`${what}: ${expected}`, () => assert.equal(inForegroundDeletion(meta), expected));
    }
  });

  describe('selectors', () => {
    const cases: [string, string | undefined, string | undefined][] = [
      ['ofLws', selectors.ofLws('demo'), 'leaderworkerset.sigs.k8s.io/name=demo'],
      [
        'leadersOf',
        selectors.leadersOf('demo'),
        'leaderworkerset.sigs.k8s.io/name=demo,leaderworkerset.sigs.k8s.io/worker-index=0',
      ],
      [
        'workerStatefulSetsOf',
        selectors.workerStatefulSetsOf('demo'),
        'leaderworkerset.sigs.k8s.io/name=demo,leaderworkerset.sigs.k8s.io/group-index',
      ],
      [
        'groupPods',
        selectors.groupPods('demo', 3),
        'leaderworkerset.sigs.k8s.io/name=demo,leaderworkerset.sigs.k8s.io/group-index=3',
      ],
      ['matching two labels', selectors.matching({ a: 'b', c: 'd' }), 'a=b,c=d'],
      ['matching an empty matchLabels: nothing (it would select all)', selectors.matching({}), undefined],
      ['matching no matchLabels: nothing', selectors.matching(undefined), undefined],
    ];
    for (const [what, got, expected] of cases) it(`${what}: ${String(expected)}`, () => assert.equal(got, expected));
  });

  describe('isStatefulSetReady', () => {
    const sts = (generation: number, observedGeneration: number | undefined, replicas: number, ready?: number) =>
      ({
        metadata: { generation },
        spec: { replicas },
        status: { observedGeneration, readyReplicas: ready },
      }) as V1StatefulSet;
    // [what, StatefulSet, ready]
    const cases: [string, V1StatefulSet, boolean][] = [
      ['every replica ready, spec observed', sts(2, 2, 3, 3), true],
      ['a stale status from before a scale-up (observedGeneration behind)', sts(3, 2, 4, 3), false],
      ['stale, though its old count covers the new replicas', sts(3, 2, 3, 3), false],
      ['one replica not ready', sts(2, 2, 3, 2), false],
      ['no status yet', { metadata: { generation: 1 }, spec: { replicas: 1 } } as V1StatefulSet, false],
      ['replicas defaulted to 1, one ready', { status: { readyReplicas: 1 } } as V1StatefulSet, true],
      ['zero replicas wanted', sts(1, 1, 0), true],
    ];
    for (const [what, s, ready] of cases) it(`${what}: ${ready}`, () => assert.equal(isStatefulSetReady(s), ready));
  });

  it('byName orders numbers as numbers', () => {
    const names = ['demo-10', 'demo-2', 'demo-1'].map((name) => ({ name }));
    assert.deepEqual(
      names.sort(byName).map((n) => n.name),
      ['demo-1', 'demo-2', 'demo-10'],
    );
  });
});
