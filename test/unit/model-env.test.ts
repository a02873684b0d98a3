import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import type { V1EnvVar, V1PodSpec } from '@kubernetes/client-node';
import { leaderAddress, leaderEnvVars, prependEnv, withLwsEnv, workerEnvVars } from '../../src/model/index.js';

const ours: V1EnvVar[] = [
  { name: 'LWS_LEADER_ADDRESS', value: 'demo-0.demo.default' },
  { name: 'LWS_GROUP_SIZE', value: '4' },
  { name: 'LWS_WORKER_INDEX', value: '0' },
];

/** What the kubelet does with $(NAME) references to earlier variables. */
function expand(env: V1EnvVar[], fieldValues: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of env) {
    const raw = v.valueFrom?.fieldRef ? (fieldValues[v.valueFrom.fieldRef.fieldPath] ?? '') : (v.value ?? '');
    out[v.name] = raw.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, name: string) => out[name] ?? m);
  }
  return out;
}

describe('model/env', () => {
  const cases: Array<[string, V1EnvVar[] | undefined, string[], Record<string, string>]> = [
    ['no user env', undefined, ['LWS_LEADER_ADDRESS', 'LWS_GROUP_SIZE', 'LWS_WORKER_INDEX'], {}],
    [
      'user env comes after ours',
      [{ name: 'A', value: '1' }],
      ['LWS_LEADER_ADDRESS', 'LWS_GROUP_SIZE', 'LWS_WORKER_INDEX', 'A'],
      { A: '1' },
    ],
    [
      "a user's LWS_GROUP_SIZE is kept, not overridden, at its own place",
      [
        { name: 'A', value: '1' },
        { name: 'LWS_GROUP_SIZE', value: 'mine' },
      ],
      ['LWS_LEADER_ADDRESS', 'LWS_WORKER_INDEX', 'A', 'LWS_GROUP_SIZE'],
      { LWS_GROUP_SIZE: 'mine' },
    ],
  ];
  for (const [name, user, order, values] of cases) {
    it(`prependEnv: ${name}`, () => {
      const env = prependEnv(user, ours);
      assert.deepEqual(
        env.map((v) => v.name),
        order,
      );
      for (const [k, v] of Object.entries(values)) assert.equal(env.find((e) => e.name === k)?.value, v);
    });
  }

  it('puts the variables into every container and init container, without mutating the input', () => {
    const spec: V1PodSpec = {
      initContainers: [{ name: 'init', env: [{ name: 'LWS_WORKER_INDEX', value: 'user' }] }],
      containers: [{ name: 'a' }, { name: 'b', env: [{ name: 'X', value: '$(LWS_LEADER_ADDRESS)' }] }],
    };
    const before = JSON.stringify(spec);
    const out = withLwsEnv(spec, ours);
    assert.equal(JSON.stringify(spec), before);
    assert.deepEqual(
      out.containers.map((c) => c.env?.map((v) => v.name)),
      [
        ['LWS_LEADER_ADDRESS', 'LWS_GROUP_SIZE', 'LWS_WORKER_INDEX'],
        ['LWS_LEADER_ADDRESS', 'LWS_GROUP_SIZE', 'LWS_WORKER_INDEX', 'X'],
      ],
    );
    assert.deepEqual(
      out.initContainers?.[0]?.env?.map((v) => [v.name, v.value]),
      [
        ['LWS_LEADER_ADDRESS', 'demo-0.demo.default'],
        ['LWS_GROUP_SIZE', '4'],
        ['LWS_WORKER_INDEX', 'user'],
      ],
    );
    // A user variable can refer to ours because ours come first.
    assert.equal(expand(out.containers[1]?.env ?? [], {})['X'], 'demo-0.demo.default');
  });

  it('leaves a pod spec without init containers without them', () => {
    assert.equal(withLwsEnv({ containers: [{ name: 'a' }] }, ours).initContainers, undefined);
  });

  it("gives the leader template an address that expands to the group's leader address", () => {
    const env = leaderEnvVars('demo', 'team-a', 4);
    for (const i of [0, 1, 12]) {
      const values = expand(env, { "metadata.labels['apps.kubernetes.io/pod-index']": String(i) });
      assert.equal(values['LWS_LEADER_ADDRESS'], leaderAddress('demo', i, 'team-a'));
      assert.equal(values['LWS_GROUP_INDEX'], String(i));
      assert.equal(values['LWS_GROUP_SIZE'], '4');
      assert.equal(values['LWS_WORKER_INDEX'], '0');
    }
  });

  it('gives worker templates literal group values and the worker index from the pod-index label', () => {
    const env = workerEnvVars('demo', 'team-a', 2, 4);
    const values = expand(env, { "metadata.labels['apps.kubernetes.io/pod-index']": '3' });
    assert.deepEqual(values, {
      LWS_GROUP_INDEX: '2',
      LWS_LEADER_ADDRESS: 'demo-2.demo.team-a',
      LWS_GROUP_SIZE: '4',
      LWS_WORKER_INDEX: '3',
    });
  });
});
