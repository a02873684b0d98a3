import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import type { V1Affinity, V1Container, V1Pod } from '@kubernetes/client-node';
import { mutatePod } from '../../src/admission/pod-mutation.js';
import {
  ANNOTATION_EXCLUSIVE_TOPOLOGY,
  ANNOTATION_LEADER_NAME,
  ANNOTATION_LEADER_REQUESTS_TPUS,
  ANNOTATION_SIZE,
  ANNOTATION_SUBDOMAIN_POLICY,
  ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY,
  ANNOTATION_SUBGROUP_POLICY_TYPE,
  ANNOTATION_SUBGROUP_SIZE,
  LABEL_GROUP_INDEX,
  LABEL_GROUP_KEY,
  LABEL_NAME,
  LABEL_SUBGROUP_INDEX,
  LABEL_SUBGROUP_KEY,
  LABEL_WORKER_INDEX,
  RESOURCE_TPU,
  exclusiveAffinityTerm,
  exclusiveAntiAffinityTerm,
  type ExclusivePlacement,
} from '../../src/model/index.js';

// sha1 hex, computed with `printf '<text>' | sha1sum`
const GROUP_KEY = '2af7e1fa0a44ef173fe28f2f0fa20a99a6fd588f'; // ns/lws-0
const GROUP_KEY_3 = 'bcbc9e5b5804fded1b621d0a29974e1a251f0e91'; // ns/lws-3
const SUBGROUP_KEY_0 = '64d26fbc1313c4f19359835dc0314b7986243248'; // lws-0/0
const SUBGROUP_KEY_1 = '9a04e952f5fa14ba00dc528e168e7eca4cbfa81d'; // lws-0/1

type Strings = Record<string, string | undefined>;

interface Row {
  name: string;
  /** What the StatefulSets create: leader lws-0 (worker-index 0), or worker lws-0-1 (group-index, group-key, leader-name). */
  role: 'leader' | 'worker';
  podName?: string;
  /** spec.subdomain, as the StatefulSet controller sets it from serviceName; default lws. */
  subdomain?: string;
  /** spec.subdomain after the mutation; default: as it was. */
  subdomainAfter?: string;
  /** Merged into the usual labels and annotations; undefined removes one. */
  labels?: Strings;
  annotations?: Strings;
  containers?: V1Container[];
  /** Labels the mutation adds or changes. */
  labelled?: Record<string, string>;
  /** Exclusive placements written, in order. */
  placed?: ExclusivePlacement[];
  /** The env the first container ends with. */
  env?: Record<string, string>;
  error?: RegExp;
}

const tpu: V1Container = { name: 'tpu', image: 'busybox', resources: { limits: { [RESOURCE_TPU]: '4' } } };
const subgroups = (size: string, policy?: string): Strings => ({
  [ANNOTATION_SUBGROUP_SIZE]: size,
  ...(policy !== undefined && { [ANNOTATION_SUBGROUP_POLICY_TYPE]: policy }),
});
const groupPlacement = (value: string, topologyKey = 'rack'): ExclusivePlacement => ({
  labelKey: LABEL_GROUP_KEY,
  value,
  topologyKey,
});
const subGroupPlacement = (value: string, topologyKey = 'host'): ExclusivePlacement => ({
  labelKey: LABEL_SUBGROUP_KEY,
  value,
  topologyKey,
});
const tpuEnv = (pods: string[], workerId: number, name = 'lws-0', subdomain = 'lws') => ({
  TPU_WORKER_HOSTNAMES: pods.map((p) => `${p}.${subdomain}`).join(','),
  TPU_WORKER_ID: String(workerId),
  TPU_NAME: name,
  TPU_PROCESS_ADDRESSES: pods.map((p) => `${p}.${subdomain}:8476`).join(','),
  TPU_PROCESS_PORT: '8476',
});

function merge(base: Record<string, string>, changes: Strings | undefined): Record<string, string> {
  const out = { ...base };
  for (const [k, v] of Object.entries(changes ?? {})) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out;
}

function podOf(row: Row): V1Pod {
  const leader = row.role === 'leader';
  const labels: Record<string, string> = leader
    ? { [LABEL_NAME]: 'lws', [LABEL_WORKER_INDEX]: '0' }
    : { [LABEL_NAME]: 'lws', [LABEL_GROUP_INDEX]: '0', [LABEL_GROUP_KEY]: GROUP_KEY };
  const annotations: Record<string, string> = leader
    ? { [ANNOTATION_SIZE]: '4' }
    : { [ANNOTATION_SIZE]: '4', [ANNOTATION_LEADER_NAME]: 'lws-0' };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: row.podName ?? (leader ? 'lws-0' : 'lws-0-1'),
      namespace: 'ns',
      labels: merge(labels, row.labels),
      annotations: merge(annotations, row.annotations),
    },
    spec: {
      containers: row.containers ?? [{ name: 'app', image: 'app', env: [{ name: 'A', value: '1' }] }],
      subdomain: row.subdomain ?? 'lws',
    },
  };
}

function affinityOf(placements: ExclusivePlacement[] | undefined): V1Affinity | undefined {
  if (placements === undefined) return undefined;
  return {
    podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: placements.map(exclusiveAffinityTerm) },
    podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: placements.map(exclusiveAntiAffinityTerm) },
  };
}

const rows: Row[] = [
  // leaders
  { name: 'leader', role: 'leader', labelled: { [LABEL_GROUP_INDEX]: '0', [LABEL_GROUP_KEY]: GROUP_KEY } },
  {
    name: 'leader of group 3',
    role: 'leader',
    podName: 'lws-3',
    labelled: { [LABEL_GROUP_INDEX]: '3', [LABEL_GROUP_KEY]: GROUP_KEY_3 },
  },
  {
    name: 'leader whose group labels are there already',
    role: 'leader',
    labels: { [LABEL_GROUP_INDEX]: '7', [LABEL_GROUP_KEY]: 'given' },
  },
  {
    name: 'leader with a custom name and its group labels: the name is not parsed',
    role: 'leader',
    podName: 'custom',
    labels: { [LABEL_GROUP_INDEX]: '0', [LABEL_GROUP_KEY]: 'given' },
  },
  {
    name: 'leader, exclusive topology',
    role: 'leader',
    annotations: { [ANNOTATION_EXCLUSIVE_TOPOLOGY]: 'rack' },
    labelled: { [LABEL_GROUP_INDEX]: '0', [LABEL_GROUP_KEY]: GROUP_KEY },
    placed: [groupPlacement(GROUP_KEY)],
  },
  {
    name: 'leader, exclusive topology on the group key it has',
    role: 'leader',
    labels: { [LABEL_GROUP_KEY]: 'given' },
    annotations: { [ANNOTATION_EXCLUSIVE_TOPOLOGY]: 'rack' },
    labelled: { [LABEL_GROUP_INDEX]: '0' },
    placed: [groupPlacement('given')],
  },
  {
    name: 'leader, subgroups, LeaderWorker',
    role: 'leader',
    annotations: subgroups('2', 'LeaderWorker'),
    labelled: {
      [LABEL_GROUP_INDEX]: '0',
      [LABEL_GROUP_KEY]: GROUP_KEY,
      [LABEL_SUBGROUP_INDEX]: '0',
      [LABEL_SUBGROUP_KEY]: SUBGROUP_KEY_0,
    },
  },
  {
    name: 'leader, subgroups, no policy type',
    role: 'leader',
    annotations: subgroups('2'),
    labelled: {
      [LABEL_GROUP_INDEX]: '0',
      [LABEL_GROUP_KEY]: GROUP_KEY,
      [LABEL_SUBGROUP_INDEX]: '0',
      [LABEL_SUBGROUP_KEY]: SUBGROUP_KEY_0,
    },
  },
  {
    name: 'leader, subgroups, LeaderExcluded: in no subgroup',
    role: 'leader',
    annotations: { ...subgroups('2', 'LeaderExcluded'), [ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY]: 'host' },
    labelled: { [LABEL_GROUP_INDEX]: '0', [LABEL_GROUP_KEY]: GROUP_KEY },
  },
  {
    name: 'leader, subgroup-exclusive topology',
    role: 'leader',
    annotations: { ...subgroups('2', 'LeaderWorker'), [ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY]: 'host' },
    labelled: {
      [LABEL_GROUP_INDEX]: '0',
      [LABEL_GROUP_KEY]: GROUP_KEY,
      [LABEL_SUBGROUP_INDEX]: '0',
      [LABEL_SUBGROUP_KEY]: SUBGROUP_KEY_0,
    },
    placed: [subGroupPlacement(SUBGROUP_KEY_0)],
  },
  {
    name: 'leader, exclusive and subgroup-exclusive topology',
    role: 'leader',
    annotations: {
      ...subgroups('2', 'LeaderWorker'),
      [ANNOTATION_EXCLUSIVE_TOPOLOGY]: 'rack',
      [ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY]: 'host',
    },
    labelled: {
      [LABEL_GROUP_INDEX]: '0',
      [LABEL_GROUP_KEY]: GROUP_KEY,
      [LABEL_SUBGROUP_INDEX]: '0',
      [LABEL_SUBGROUP_KEY]: SUBGROUP_KEY_0,
    },
    placed: [groupPlacement(GROUP_KEY), subGroupPlacement(SUBGROUP_KEY_0)],
  },
  {
    name: 'leader with a subgroup-index label already: no subgroup key nor placement',
    role: 'leader',
    labels: { [LABEL_SUBGROUP_INDEX]: '0' },
    annotations: { ...subgroups('2'), [ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY]: 'host' },
    labelled: { [LABEL_GROUP_INDEX]: '0', [LABEL_GROUP_KEY]: GROUP_KEY },
  },
  {
    name: 'leader under UniquePerReplica: its subdomain becomes its own name (its group Service), as upstream',
    role: 'leader',
    annotations: { [ANNOTATION_SUBDOMAIN_POLICY]: 'UniquePerReplica' },
    labelled: { [LABEL_GROUP_INDEX]: '0', [LABEL_GROUP_KEY]: GROUP_KEY },
    subdomainAfter: 'lws-0',
  },
  {
    name: 'leader requesting TPUs under UniquePerReplica: the hostnames under the group Service',
    role: 'leader',
    containers: [tpu],
    annotations: { [ANNOTATION_SUBDOMAIN_POLICY]: 'UniquePerReplica' },
    labelled: { [LABEL_GROUP_INDEX]: '0', [LABEL_GROUP_KEY]: GROUP_KEY },
    subdomainAfter: 'lws-0',
    env: tpuEnv(['lws-0', 'lws-0-1', 'lws-0-2', 'lws-0-3'], 0, 'lws-0', 'lws-0'),
  },
  {
    name: 'leader requesting TPUs',
    role: 'leader',
    containers: [tpu],
    labelled: { [LABEL_GROUP_INDEX]: '0', [LABEL_GROUP_KEY]: GROUP_KEY },
    env: tpuEnv(['lws-0', 'lws-0-1', 'lws-0-2', 'lws-0-3'], 0),
  },
  {
    name: 'leader requesting TPUs, subgroups of 2',
    role: 'leader',
    containers: [tpu],
    annotations: subgroups('2', 'LeaderWorker'),
    labelled: {
      [LABEL_GROUP_INDEX]: '0',
      [LABEL_GROUP_KEY]: GROUP_KEY,
      [LABEL_SUBGROUP_INDEX]: '0',
      [LABEL_SUBGROUP_KEY]: SUBGROUP_KEY_0,
    },
    env: tpuEnv(['lws-0', 'lws-0-1'], 0),
  },
  {
    name: 'leader with a zero TPU request',
    role: 'leader',
    containers: [{ name: 'app', resources: { limits: { [RESOURCE_TPU]: '0' } } }],
    labelled: { [LABEL_GROUP_INDEX]: '0', [LABEL_GROUP_KEY]: GROUP_KEY },
  },

  // workers
  { name: 'worker', role: 'worker', labelled: { [LABEL_WORKER_INDEX]: '1' } },
  {
    name: 'worker with a wrong worker-index label',
    role: 'worker',
    podName: 'lws-0-3',
    labels: { [LABEL_WORKER_INDEX]: 'invalid' },
    labelled: { [LABEL_WORKER_INDEX]: '3' },
  },
  {
    name: 'worker, exclusive topology: none of its own (it follows the leader)',
    role: 'worker',
    annotations: { [ANNOTATION_EXCLUSIVE_TOPOLOGY]: 'rack' },
    labelled: { [LABEL_WORKER_INDEX]: '1' },
  },
  {
    name: 'worker 1 of 4, subgroups of 2',
    role: 'worker',
    annotations: subgroups('2', 'LeaderWorker'),
    labelled: { [LABEL_WORKER_INDEX]: '1', [LABEL_SUBGROUP_INDEX]: '0', [LABEL_SUBGROUP_KEY]: SUBGROUP_KEY_0 },
  },
  {
    name: 'worker 2 of 4, subgroups of 2',
    role: 'worker',
    podName: 'lws-0-2',
    annotations: subgroups('2', 'LeaderWorker'),
    labelled: { [LABEL_WORKER_INDEX]: '2', [LABEL_SUBGROUP_INDEX]: '1', [LABEL_SUBGROUP_KEY]: SUBGROUP_KEY_1 },
  },
  {
    name: 'worker 2 of 5, subgroups of 2: the leader is the extra pod of subgroup 0',
    role: 'worker',
    podName: 'lws-0-2',
    annotations: { [ANNOTATION_SIZE]: '5', ...subgroups('2', 'LeaderWorker') },
    labelled: { [LABEL_WORKER_INDEX]: '2', [LABEL_SUBGROUP_INDEX]: '0', [LABEL_SUBGROUP_KEY]: SUBGROUP_KEY_0 },
  },
  {
    name: 'worker 3 of 5, subgroups of 2, LeaderExcluded',
    role: 'worker',
    podName: 'lws-0-3',
    annotations: { [ANNOTATION_SIZE]: '5', ...subgroups('2', 'LeaderExcluded') },
    labelled: { [LABEL_WORKER_INDEX]: '3', [LABEL_SUBGROUP_INDEX]: '1', [LABEL_SUBGROUP_KEY]: SUBGROUP_KEY_1 },
  },
  {
    name: 'worker, subgroup-exclusive topology',
    role: 'worker',
    annotations: { ...subgroups('2'), [ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY]: 'host' },
    labelled: { [LABEL_WORKER_INDEX]: '1', [LABEL_SUBGROUP_INDEX]: '0', [LABEL_SUBGROUP_KEY]: SUBGROUP_KEY_0 },
    placed: [subGroupPlacement(SUBGROUP_KEY_0)],
  },
  {
    name: 'worker with a subgroup-index label already',
    role: 'worker',
    labels: { [LABEL_SUBGROUP_INDEX]: '0' },
    annotations: { ...subgroups('2'), [ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY]: 'host' },
    labelled: { [LABEL_WORKER_INDEX]: '1' },
  },
  {
    name: 'worker 2 requesting TPUs, the leader too',
    role: 'worker',
    podName: 'lws-0-2',
    containers: [tpu],
    annotations: { [ANNOTATION_LEADER_REQUESTS_TPUS]: 'true' },
    labelled: { [LABEL_WORKER_INDEX]: '2' },
    env: tpuEnv(['lws-0', 'lws-0-1', 'lws-0-2', 'lws-0-3'], 2),
  },
  {
    name: 'worker 2 requesting TPUs, the leader not',
    role: 'worker',
    podName: 'lws-0-2',
    containers: [tpu],
    labelled: { [LABEL_WORKER_INDEX]: '2' },
    env: tpuEnv(['lws-0-1', 'lws-0-2', 'lws-0-3'], 1),
  },
  {
    name: 'worker requesting TPUs, leader-requests-tpus not "true"',
    role: 'worker',
    podName: 'lws-0-2',
    containers: [tpu],
    annotations: { [ANNOTATION_LEADER_REQUESTS_TPUS]: 'false' },
    labelled: { [LABEL_WORKER_INDEX]: '2' },
    env: tpuEnv(['lws-0-1', 'lws-0-2', 'lws-0-3'], 1),
  },
  {
    name: 'worker requesting TPUs in its own subdomain (UniquePerReplica)',
    role: 'worker',
    containers: [tpu],
    subdomain: 'lws-0',
    labelled: { [LABEL_WORKER_INDEX]: '1' },
    env: tpuEnv(['lws-0-1', 'lws-0-2', 'lws-0-3'], 0, 'lws-0', 'lws-0'),
  },
  {
    name: 'worker 1 of 4 requesting TPUs, the leader too, subgroups of 2',
    role: 'worker',
    containers: [tpu],
    annotations: { [ANNOTATION_LEADER_REQUESTS_TPUS]: 'true', ...subgroups('2', 'LeaderWorker') },
    labelled: { [LABEL_WORKER_INDEX]: '1', [LABEL_SUBGROUP_INDEX]: '0', [LABEL_SUBGROUP_KEY]: SUBGROUP_KEY_0 },
    env: tpuEnv(['lws-0', 'lws-0-1'], 1),
  },
  {
    name: 'worker 2 of 4 requesting TPUs, the leader too, subgroups of 2',
    role: 'worker',
    podName: 'lws-0-2',
    containers: [tpu],
    annotations: { [ANNOTATION_LEADER_REQUESTS_TPUS]: 'true', ...subgroups('2', 'LeaderWorker') },
    labelled: { [LABEL_WORKER_INDEX]: '2', [LABEL_SUBGROUP_INDEX]: '1', [LABEL_SUBGROUP_KEY]: SUBGROUP_KEY_1 },
    env: tpuEnv(['lws-0-2', 'lws-0-3'], 0),
  },
  {
    name: 'worker 3 of 5 requesting TPUs, the leader not, subgroups of 2, LeaderExcluded',
    role: 'worker',
    podName: 'lws-0-3',
    containers: [tpu],
    annotations: { [ANNOTATION_SIZE]: '5', ...subgroups('2', 'LeaderExcluded') },
    labelled: { [LABEL_WORKER_INDEX]: '3', [LABEL_SUBGROUP_INDEX]: '1', [LABEL_SUBGROUP_KEY]: SUBGROUP_KEY_1 },
    env: tpuEnv(['lws-0-3', 'lws-0-4'], 0),
  },

  // refusals
  {
    name: 'no size annotation',
    role: 'leader',
    annotations: { [ANNOTATION_SIZE]: undefined },
    error: /^pod ns\/lws-0: annotation leaderworkerset\.sigs\.k8s\.io\/size is missing$/,
  },
  {
    name: 'a size that is no number',
    role: 'worker',
    annotations: { [ANNOTATION_SIZE]: 'four' },
    error: /size is "four"/,
  },
  { name: 'a size of 0', role: 'worker', annotations: { [ANNOTATION_SIZE]: '0' }, error: /size is "0"/ },
  {
    name: 'a subgroup size that is no number (upstream "Invalid size")',
    role: 'worker',
    annotations: subgroups('invalid'),
    error: /^pod ns\/lws-0-1: annotation leaderworkerset\.sigs\.k8s\.io\/subgroup-size is "invalid"/,
  },
  {
    name: 'a worker name without ordinals (upstream "Invalid pod name")',
    role: 'worker',
    podName: 'invalidname',
    containers: [tpu],
    error:
      /^pod ns\/invalidname: cannot parse its ordinal: a worker pod of LWS lws is named lws-<groupIndex>-<workerIndex>$/,
  },
  {
    name: 'a worker with a leader name',
    role: 'worker',
    podName: 'lws-0',
    error: /^pod ns\/lws-0: cannot parse its ordinal/,
  },
  {
    name: 'a worker of another LWS name',
    role: 'worker',
    podName: 'other-0-1',
    error: /^pod ns\/other-0-1: cannot parse/,
  },
  {
    name: 'a leader name without an ordinal and no group-index label',
    role: 'leader',
    podName: 'invalidname',
    error: /^pod ns\/invalidname: cannot parse its ordinal: a leader pod of LWS lws is named lws-<groupIndex>$/,
  },
  {
    name: 'a leader with a worker name and no group-index label',
    role: 'leader',
    podName: 'lws-0-1',
    error: /^pod ns\/lws-0-1: cannot parse its ordinal/,
  },
  {
    name: 'a worker in subgroups without the leader-name annotation',
    role: 'worker',
    annotations: { ...subgroups('2'), [ANNOTATION_LEADER_NAME]: undefined },
    error: /^pod ns\/lws-0-1: annotation leaderworkerset\.sigs\.k8s\.io\/leader-name is missing$/,
  },
  {
    name: 'a LeaderExcluded leader requesting TPUs (upstream refuses it too)',
    role: 'leader',
    containers: [tpu],
    annotations: subgroups('2', 'LeaderExcluded'),
    error: /^pod ns\/lws-0: requests google\.com\/tpu with subgroups, but label .*subgroup-index is missing/,
  },
  {
    name: 'a worker requesting TPUs whose subgroup-index label is no number (upstream "Invalid index")',
    role: 'worker',
    containers: [tpu],
    labels: { [LABEL_SUBGROUP_INDEX]: 'invalid' },
    annotations: subgroups('1'),
    error: /subgroup-index is "invalid"$/,
  },
];

describe('admission/pod-mutation', () => {
  for (const row of rows) {
    it(`${row.error ? 'refuses' : 'mutates'}: ${row.name}`, () => {
      const pod = podOf(row);
      const before = structuredClone(pod);
      const out = mutatePod(pod);
      assert.deepEqual(pod, before, 'input untouched');
      if (row.error) {
        assert.ok('error' in out, 'refused');
        assert.match(out.error, row.error);
        return;
      }
      assert.ok(!('error' in out), 'error' in out ? out.error : '');
      assert.deepEqual(out.metadata?.labels, { ...before.metadata?.labels, ...row.labelled }, 'labels');
      assert.deepEqual(out.metadata?.annotations, before.metadata?.annotations, 'annotations');
      assert.deepEqual(out.spec?.affinity, affinityOf(row.placed), 'affinity');
      assert.equal(out.spec?.subdomain, row.subdomainAfter ?? row.subdomain ?? 'lws', 'subdomain');
      // The LWS_* variables have their own cases below.
      const envOf = (p: V1Pod) =>
        Object.fromEntries(
          (p.spec?.containers[0]?.env ?? []).filter((e) => !e.name.startsWith('LWS_')).map((e) => [e.name, e.value]),
        );
      assert.deepEqual(envOf(out), row.env ?? envOf(before), 'env');
      assert.deepEqual(mutatePod(out), out, 'a second call changes nothing');
    });
  }

  describe("LWS_* env, for a pod whose template has none (one made from upstream's template before a switch)", () => {
    const lwsEnv = (p: V1Pod, container = 0) =>
      (p.spec?.containers[container]?.env ?? []).filter((e) => e.name.startsWith('LWS_'));
    const literal = (groupIndex: number, address: string, workerIndex: number) => [
      { name: 'LWS_GROUP_INDEX', value: String(groupIndex) },
      { name: 'LWS_LEADER_ADDRESS', value: address },
      { name: 'LWS_GROUP_SIZE', value: '4' },
      { name: 'LWS_WORKER_INDEX', value: String(workerIndex) },
    ];
    const cases: Array<{ name: string; row: Row; env: Array<{ name: string; value?: string }> }> = [
      { name: 'a leader', row: { name: '', role: 'leader' }, env: literal(0, 'lws-0.lws.ns', 0) },
      {
        name: 'a leader of group 3',
        row: { name: '', role: 'leader', podName: 'lws-3' },
        env: literal(3, 'lws-3.lws.ns', 0),
      },
      {
        name: 'a worker',
        row: { name: '', role: 'worker', podName: 'lws-0-2' },
        env: literal(0, 'lws-0.lws.ns', 2),
      },
      {
        name: 'a leader under UniquePerReplica: its group Service',
        row: { name: '', role: 'leader', annotations: { [ANNOTATION_SUBDOMAIN_POLICY]: 'UniquePerReplica' } },
        env: literal(0, 'lws-0.lws-0.ns', 0),
      },
      {
        name: 'a worker under UniquePerReplica: its subdomain, the leader',
        row: { name: '', role: 'worker', subdomain: 'lws-0' },
        env: literal(0, 'lws-0.lws-0.ns', 1),
      },
    ];
    for (const c of cases) {
      it(`${c.name}: as literals, first, the user's after`, () => {
        const out = mutatePod(podOf(c.row));
        assert.ok(!('error' in out));
        assert.deepEqual(lwsEnv(out), c.env);
        assert.deepEqual(out.spec?.containers[0]?.env?.at(-1), { name: 'A', value: '1' });
      });
    }

    it("a pod from this project's templates keeps theirs; a user's own variable wins", () => {
      const ours = { name: 'LWS_WORKER_INDEX', valueFrom: { fieldRef: { fieldPath: "metadata.labels['x']" } } };
      const users = { name: 'LWS_GROUP_SIZE', value: '99' };
      const out = mutatePod(
        podOf({ name: '', role: 'worker', containers: [{ name: 'app', image: 'app', env: [ours, users] }] }),
      );
      assert.ok(!('error' in out));
      const env = out.spec?.containers[0]?.env ?? [];
      assert.deepEqual(
        env.filter((e) => e.name === 'LWS_WORKER_INDEX' || e.name === 'LWS_GROUP_SIZE'),
        [ours, users],
      );
    });
  });

  it('computes the group key as sha1 of <namespace>/<leader pod>', () => {
    const out = mutatePod(podOf({ name: '', role: 'leader' }));
    assert.ok(!('error' in out));
    assert.equal(out.metadata?.labels?.[LABEL_GROUP_KEY], GROUP_KEY);
  });

  const foreign: Array<[string, V1Pod]> = [
    ['a pod without labels', { metadata: { name: 'x' }, spec: { containers: [tpu] } }],
    [
      'a pod with other labels and our annotations',
      {
        metadata: {
          name: 'x-0',
          labels: { app: 'x', [LABEL_WORKER_INDEX]: '0' },
          annotations: { [ANNOTATION_SIZE]: '2' },
        },
        spec: { containers: [tpu], subdomain: 'x' },
      },
    ],
    ['a pod without metadata', { spec: { containers: [] } }],
  ];
  for (const [what, pod] of foreign) {
    it(`leaves a pod that is no LWS's alone: ${what}`, () => {
      const before = structuredClone(pod);
      assert.deepEqual(mutatePod(pod), before);
      assert.deepEqual(pod, before);
    });
  }
});
