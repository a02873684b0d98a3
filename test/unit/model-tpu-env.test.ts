import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import type { V1Container, V1EnvVar, V1PodSpec } from '@kubernetes/client-node';
import {
  RESOURCE_TPU,
  containerRequestsTpus,
  podRequestsTpus,
  quantityIsNonZero,
  withTpuEnv,
  type TpuPodFacts,
} from '../../src/model/index.js';

/** upstream's wrappers.MakeContainerWithTPU */
const tpu = (name: string, ...env: V1EnvVar[]): V1Container => ({
  name,
  image: 'busybox',
  resources: { limits: { [RESOURCE_TPU]: '4' } },
  ...(env.length > 0 && { env }),
});
const plain = (name: string): V1Container => ({ name, image: 'nginx' });
const port = (value: string): V1EnvVar => ({ name: 'TPU_PROCESS_PORT', value });

/** The TPU env of one container, as upstream's tests check it. */
const env = (hostnames: string, workerId: string, name: string, addresses: string, processPort: string) => ({
  TPU_WORKER_HOSTNAMES: hostnames,
  TPU_WORKER_ID: workerId,
  TPU_NAME: name,
  TPU_PROCESS_ADDRESSES: addresses,
  TPU_PROCESS_PORT: processPort,
});

interface Row {
  name: string;
  facts?: Partial<TpuPodFacts>;
  /** default: one TPU container named worker (upstream's MakeLeaderPodSpecWithTPUResource) */
  containers?: V1Container[];
  initContainers?: V1Container[];
  /** Each container's env afterwards, by container name; a container not named keeps its env. */
  expected: Record<string, Record<string, string>>;
}

function check(row: Row, defaults: TpuPodFacts): void {
  it(row.name, () => {
    const spec: V1PodSpec = {
      containers: row.containers ?? [tpu('worker')],
      ...(row.initContainers && { initContainers: row.initContainers }),
      subdomain: 'default',
    };
    const before = structuredClone(spec);
    const out = withTpuEnv(spec, { ...defaults, ...row.facts });
    assert.deepEqual(spec, before, 'input untouched');
    const all = [...out.containers, ...(out.initContainers ?? [])];
    const original = [...before.containers, ...(before.initContainers ?? [])];
    all.forEach((c, i) => {
      const names = (c.env ?? []).map((e) => e.name);
      assert.equal(new Set(names).size, names.length, `${c.name}: an env var twice`);
      const actual = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));
      const kept = Object.fromEntries((original[i]?.env ?? []).map((e) => [e.name, e.value]));
      assert.deepEqual(actual, row.expected[c.name ?? ''] ?? kept, c.name);
    });
  });
}

describe('model/tpu-env', () => {
  describe('which pods request TPUs', () => {
    const withResources = (resources: V1Container['resources']): V1PodSpec => ({
      containers: [{ name: 'c', resources }],
    });
    // [case, spec, requests TPUs]: upstream's TestPodRequestsTPUs and TestGetContainersRequestingTPUs, then quantities
    const rows: Array<[string, V1PodSpec, boolean]> = [
      ['in a container', { containers: [tpu('c1')] }, true],
      ['in requests, not limits', withResources({ requests: { [RESOURCE_TPU]: '1' } }), true],
      ['in an init container', { containers: [], initContainers: [tpu('i1')] }, true],
      ['no containers', { containers: [] }, false],
      ['a container without resources', { containers: [plain('c1')] }, false],
      ['two TPU containers', { containers: [tpu('c1'), tpu('c2')] }, true],
      ['a TPU and a plain container', { containers: [tpu('c1'), plain('c2')] }, true],
      ['another resource only', withResources({ limits: { 'nvidia.com/gpu': '1' } }), false],
      ['a JSON number', withResources({ limits: { [RESOURCE_TPU]: 4 as unknown as string } }), true],
      ['a zero JSON number', withResources({ limits: { [RESOURCE_TPU]: 0 as unknown as string } }), false],
      ['"0"', withResources({ limits: { [RESOURCE_TPU]: '0' } }), false],
      [
        'zero limits, non-zero requests',
        withResources({ limits: { [RESOURCE_TPU]: '0' }, requests: { [RESOURCE_TPU]: '1' } }),
        true,
      ],
      [
        'non-zero limits, zero requests',
        withResources({ limits: { [RESOURCE_TPU]: '1' }, requests: { [RESOURCE_TPU]: '0' } }),
        true,
      ],
    ];
    for (const [what, spec, expected] of rows) {
      it(`${expected ? 'requests' : 'does not request'} TPUs: ${what}`, () =>
        assert.equal(podRequestsTpus(spec), expected));
    }

    it('asks a container alone', () => {
      assert.equal(containerRequestsTpus(tpu('c')), true);
      assert.equal(containerRequestsTpus(plain('c')), false);
    });

    // [quantity, non-zero] in Kubernetes' quantity syntax
    const quantities: Array<[unknown, boolean]> = [
      ['4', true],
      [4, true],
      ['0', false],
      [0, false],
      ['+1', true],
      ['0.0', false],
      ['.5', true],
      ['500m', true],
      ['0m', false],
      ['1Ki', true],
      ['1e3', true],
      ['0e3', false],
      ['1E', true],
      ['four', false],
      ['4 ', false],
      ['', false],
      [undefined, false],
      [null, false],
    ];
    for (const [quantity, expected] of quantities) {
      it(`reads the quantity ${JSON.stringify(quantity)} as ${expected ? 'non-zero' : 'none'}`, () => {
        assert.equal(quantityIsNonZero(quantity), expected);
      });
    }
  });

  describe('without subgroups (upstream TestAddTPUVariables, TestAddTPUVariablesSkip)', () => {
    const defaults: TpuPodFacts = {
      leaderName: 'test-sample-0',
      workerIndex: 0,
      subdomain: 'default',
      size: 2,
      leaderRequestsTpus: false,
    };
    const hosts2 = 'test-sample-0.default,test-sample-0-1.default';
    const addresses2 = 'test-sample-0.default:8476,test-sample-0-1.default:8476';
    const rows: Row[] = [
      {
        name: 'leader requests TPUs, leader pod',
        facts: { leaderRequestsTpus: true },
        expected: { worker: env(hosts2, '0', 'test-sample-0', addresses2, '8476') },
      },
      {
        name: 'leader requests TPUs, worker pod',
        facts: { workerIndex: 1, leaderRequestsTpus: true },
        expected: { worker: env(hosts2, '1', 'test-sample-0', addresses2, '8476') },
      },
      {
        name: 'leader pod without the leader-requests-tpus annotation',
        expected: { worker: env(hosts2, '0', 'test-sample-0', addresses2, '8476') },
      },
      {
        name: 'leader does not request TPUs, worker pod',
        facts: { workerIndex: 1 },
        expected: {
          worker: env('test-sample-0-1.default', '0', 'test-sample-0', 'test-sample-0-1.default:8476', '8476'),
        },
      },
      {
        name: 'two TPU containers, leader pod: a host each, ports counting up',
        facts: { leaderRequestsTpus: true },
        containers: [tpu('c1'), tpu('c2')],
        expected: {
          c1: env(
            'test-sample-0.default,test-sample-0.default,test-sample-0-1.default,test-sample-0-1.default',
            '0',
            'test-sample-0',
            'test-sample-0.default:8476,test-sample-0.default:8477,test-sample-0-1.default:8476,test-sample-0-1.default:8477',
            '8476',
          ),
          c2: env(
            'test-sample-0.default,test-sample-0.default,test-sample-0-1.default,test-sample-0-1.default',
            '1',
            'test-sample-0',
            'test-sample-0.default:8476,test-sample-0.default:8477,test-sample-0-1.default:8476,test-sample-0-1.default:8477',
            '8477',
          ),
        },
      },
      {
        name: 'two TPU containers with their own ports',
        facts: { leaderRequestsTpus: true },
        containers: [tpu('c1', port('8478')), tpu('c2', port('8479'))],
        expected: {
          c1: env(
            'test-sample-0.default,test-sample-0.default,test-sample-0-1.default,test-sample-0-1.default',
            '0',
            'test-sample-0',
            'test-sample-0.default:8478,test-sample-0.default:8479,test-sample-0-1.default:8478,test-sample-0-1.default:8479',
            '8478',
          ),
          c2: env(
            'test-sample-0.default,test-sample-0.default,test-sample-0-1.default,test-sample-0-1.default',
            '1',
            'test-sample-0',
            'test-sample-0.default:8478,test-sample-0.default:8479,test-sample-0-1.default:8478,test-sample-0-1.default:8479',
            '8479',
          ),
        },
      },
      {
        name: 'TPUs in an init container',
        facts: { leaderName: 'sample-0', size: 1 },
        containers: [],
        initContainers: [tpu('i1')],
        expected: { i1: env('sample-0.default', '0', 'sample-0', 'sample-0.default:8476', '8476') },
      },
      { name: 'no container requests TPUs', containers: [plain('c1')], expected: {} },
      {
        name: 'TPU_WORKER_ID already set: nothing added',
        containers: [tpu('c1', { name: 'TPU_WORKER_ID', value: '0' })],
        expected: {},
      },
      {
        name: 'TPU_WORKER_HOSTNAMES already set: nothing added',
        containers: [tpu('c1', { name: 'TPU_WORKER_HOSTNAMES', value: 'h' })],
        expected: {},
      },
      // beyond upstream's tests, from its code
      {
        name: 'two TPU containers, worker 2 of 3, leader without TPUs: IDs from the pod before it',
        facts: { workerIndex: 2, size: 3 },
        containers: [tpu('c1'), tpu('c2')],
        expected: {
          c1: env(
            'test-sample-0-1.default,test-sample-0-1.default,test-sample-0-2.default,test-sample-0-2.default',
            '2',
            'test-sample-0',
            'test-sample-0-1.default:8476,test-sample-0-1.default:8477,test-sample-0-2.default:8476,test-sample-0-2.default:8477',
            '8476',
          ),
          c2: env(
            'test-sample-0-1.default,test-sample-0-1.default,test-sample-0-2.default,test-sample-0-2.default',
            '3',
            'test-sample-0',
            'test-sample-0-1.default:8476,test-sample-0-1.default:8477,test-sample-0-2.default:8476,test-sample-0-2.default:8477',
            '8477',
          ),
        },
      },
      {
        name: 'a plain container beside the TPU one keeps its env',
        containers: [{ ...plain('sidecar'), env: [{ name: 'A', value: '1' }] }, tpu('worker')],
        expected: { worker: env(hosts2, '0', 'test-sample-0', addresses2, '8476') },
      },
      {
        name: 'a TPU container and a TPU init container: the app container first',
        facts: { size: 1 },
        containers: [tpu('c1')],
        initContainers: [tpu('i1')],
        expected: {
          c1: env(
            'test-sample-0.default,test-sample-0.default',
            '0',
            'test-sample-0',
            'test-sample-0.default:8476,test-sample-0.default:8477',
            '8476',
          ),
          i1: env(
            'test-sample-0.default,test-sample-0.default',
            '1',
            'test-sample-0',
            'test-sample-0.default:8476,test-sample-0.default:8477',
            '8477',
          ),
        },
      },
    ];
    for (const row of rows) check(row, defaults);
  });

  describe('with subgroups (upstream TestAddTPUVariablesSubGroup, TestAddTPUVariablesSkip)', () => {
    const defaults: TpuPodFacts = {
      leaderName: 'test-sample-0',
      workerIndex: 0,
      subdomain: 'default',
      size: 4,
      leaderRequestsTpus: false,
      subGroup: { size: 1, index: 0 },
    };
    /** One subgroup's slice: its pods, in order, all on one port. */
    const sub = (leader: string, pods: string[], workerId: string, p = '8476') =>
      env(
        pods.map((pod) => `${pod}.default`).join(','),
        workerId,
        leader,
        pods.map((pod) => `${pod}.default:${p}`).join(','),
        p,
      );
    const rows: Row[] = [
      {
        name: 'leader, subgroups of 1',
        expected: { worker: sub('test-sample-0', ['test-sample-0'], '0') },
      },
      {
        name: 'leader, subgroups of 2',
        facts: { subGroup: { size: 2, index: 0 } },
        expected: { worker: sub('test-sample-0', ['test-sample-0', 'test-sample-0-1'], '0') },
      },
      {
        name: 'leader requests TPUs, worker 3 in subgroup 0 of 5',
        facts: {
          leaderName: 'test-sample-1',
          workerIndex: 3,
          leaderRequestsTpus: true,
          subGroup: { size: 5, index: 0 },
        },
        expected: {
          worker: sub(
            'test-sample-1',
            ['test-sample-1', 'test-sample-1-1', 'test-sample-1-2', 'test-sample-1-3', 'test-sample-1-4'],
            '3',
          ),
        },
      },
      {
        name: 'leader requests TPUs, worker 7 in subgroup 1 of 4',
        facts: {
          leaderName: 'test-sample-1',
          workerIndex: 7,
          leaderRequestsTpus: true,
          subGroup: { size: 4, index: 1 },
        },
        expected: {
          worker: sub(
            'test-sample-1',
            ['test-sample-1-4', 'test-sample-1-5', 'test-sample-1-6', 'test-sample-1-7'],
            '3',
          ),
        },
      },
      {
        name: 'leader without TPUs, worker 5 in subgroup 1 of 4',
        facts: { leaderName: 'test-sample-1', workerIndex: 5, subGroup: { size: 4, index: 1 } },
        expected: {
          worker: sub(
            'test-sample-1',
            ['test-sample-1-5', 'test-sample-1-6', 'test-sample-1-7', 'test-sample-1-8'],
            '0',
          ),
        },
      },
      {
        name: 'leader without TPUs, LeaderExcluded, worker 2 in subgroup 0 of 2',
        facts: { workerIndex: 2, subGroup: { size: 2, index: 0 } },
        expected: { worker: sub('test-sample-0', ['test-sample-0-1', 'test-sample-0-2'], '1') },
      },
      {
        name: 'leader without TPUs, worker 5 in subgroup 1 of 4, TPU_PROCESS_PORT set',
        facts: { leaderName: 'test-sample-1', workerIndex: 5, subGroup: { size: 4, index: 1 } },
        containers: [tpu('worker', port('8478'))],
        expected: {
          worker: sub(
            'test-sample-1',
            ['test-sample-1-5', 'test-sample-1-6', 'test-sample-1-7', 'test-sample-1-8'],
            '0',
            '8478',
          ),
        },
      },
      {
        name: 'leader requests TPUs, worker 1 of 3 in subgroup 1 of 1',
        facts: { leaderName: 'prefill-0', workerIndex: 1, leaderRequestsTpus: true, subGroup: { size: 1, index: 1 } },
        expected: { worker: sub('prefill-0', ['prefill-0-1'], '0') },
      },
      {
        name: 'leader requests TPUs, worker 2 of 3 in subgroup 2 of 1',
        facts: { leaderName: 'prefill-0', workerIndex: 2, leaderRequestsTpus: true, subGroup: { size: 1, index: 2 } },
        expected: { worker: sub('prefill-0', ['prefill-0-2'], '0') },
      },
      {
        name: 'leader without TPUs, worker 1 in subgroup 1 of 1',
        facts: { leaderName: 'prefill-0', workerIndex: 1, subGroup: { size: 1, index: 1 } },
        expected: { worker: sub('prefill-0', ['prefill-0-1'], '0') },
      },
      {
        name: 'leader without TPUs, worker 2 in subgroup 2 of 1',
        facts: { leaderName: 'prefill-0', workerIndex: 2, subGroup: { size: 1, index: 2 } },
        expected: { worker: sub('prefill-0', ['prefill-0-2'], '0') },
      },
      { name: 'no container requests TPUs', containers: [plain('c1')], expected: {} },
      {
        name: 'TPU_WORKER_ID already set: nothing added',
        containers: [tpu('c1', { name: 'TPU_WORKER_ID', value: '0' })],
        expected: {},
      },
      // beyond upstream's tests, from its code
      {
        name: 'two TPU containers: only the first gets the env (upstream assumes one)',
        facts: { subGroup: { size: 2, index: 0 } },
        containers: [tpu('c1'), tpu('c2')],
        expected: { c1: sub('test-sample-0', ['test-sample-0', 'test-sample-0-1'], '0') },
      },
      {
        name: 'the TPU container after a plain one (upstream GetContainerRequestingTPUs)',
        containers: [plain('leader'), tpu('worker')],
        expected: { worker: sub('test-sample-0', ['test-sample-0'], '0') },
      },
      {
        name: 'leader without TPUs: the slice is cut from worker 1 on, whatever the label says',
        facts: { workerIndex: 2, subGroup: { size: 2, index: 1 } },
        expected: { worker: sub('test-sample-0', ['test-sample-0-1', 'test-sample-0-2'], '1') },
      },
    ];
    for (const row of rows) check(row, defaults);
  });

  it("appends after the container's own env, in upstream's order", () => {
    const out = withTpuEnv(
      { containers: [tpu('c', { name: 'A', value: '1' })], subdomain: 'svc' },
      { leaderName: 'l-0', workerIndex: 0, subdomain: 'svc', size: 1, leaderRequestsTpus: false },
    );
    assert.deepEqual(out.containers[0]?.env, [
      { name: 'A', value: '1' },
      { name: 'TPU_WORKER_HOSTNAMES', value: 'l-0.svc' },
      { name: 'TPU_WORKER_ID', value: '0' },
      { name: 'TPU_NAME', value: 'l-0' },
      { name: 'TPU_PROCESS_ADDRESSES', value: 'l-0.svc:8476' },
      { name: 'TPU_PROCESS_PORT', value: '8476' },
    ]);
  });

  it('tells a set env by TPU_WORKER_ID or TPU_WORKER_HOSTNAMES only: a lone TPU_NAME gets a second one', () => {
    const out = withTpuEnv(
      { containers: [tpu('c', { name: 'TPU_NAME', value: 'mine' })], subdomain: 'svc' },
      { leaderName: 'l-0', workerIndex: 0, subdomain: 'svc', size: 1, leaderRequestsTpus: false },
    );
    assert.deepEqual(
      out.containers[0]?.env?.filter((e) => e.name === 'TPU_NAME'),
      [
        { name: 'TPU_NAME', value: 'mine' },
        { name: 'TPU_NAME', value: 'l-0' },
      ],
    );
  });

  it('writes a port set through valueFrom as empty, as upstream reads only value', () => {
    const fromField: V1EnvVar = { name: 'TPU_PROCESS_PORT', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } };
    const out = withTpuEnv(
      { containers: [tpu('c', fromField)], subdomain: 'svc' },
      { leaderName: 'l-0', workerIndex: 0, subdomain: 'svc', size: 1, leaderRequestsTpus: false },
    );
    assert.equal(out.containers[0]?.env?.find((e) => e.name === 'TPU_PROCESS_ADDRESSES')?.value, 'l-0.svc:');
  });
});
