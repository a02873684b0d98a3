import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { applyDefaults, applySpecDefaults, type LeaderWorkerSetSpec } from '../../src/model/index.js';
import { sampleLws } from './model-fixtures.js';

const worker = { spec: { containers: [{ name: 'w', image: 'nginx' }] } };

describe('model/defaults', () => {
  it('fills every default of a minimal spec', () => {
    assert.deepEqual(applySpecDefaults({ leaderWorkerTemplate: { workerTemplate: worker } }), {
      replicas: 1,
      leaderWorkerTemplate: { workerTemplate: worker, size: 1, restartPolicy: 'RecreateGroupOnPodRestart' },
      startupPolicy: 'LeaderCreated',
      rolloutStrategy: {
        type: 'RollingUpdate',
        rollingUpdateConfiguration: { partition: 0, maxUnavailable: 1, maxSurge: 0 },
      },
      networkConfig: { subdomainPolicy: 'Shared' },
      podTerminationPolicy: 'Default',
    });
  });

  const keeps: Array<[string, LeaderWorkerSetSpec, (d: ReturnType<typeof applySpecDefaults>) => unknown, unknown]> = [
    ['replicas 0', { replicas: 0, leaderWorkerTemplate: { workerTemplate: worker } }, (d) => d.replicas, 0],
    ['size 4', { leaderWorkerTemplate: { workerTemplate: worker, size: 4 } }, (d) => d.leaderWorkerTemplate.size, 4],
    [
      'restartPolicy None',
      { leaderWorkerTemplate: { workerTemplate: worker, restartPolicy: 'None' } },
      (d) => d.leaderWorkerTemplate.restartPolicy,
      'None',
    ],
    [
      'startupPolicy LeaderReady',
      { startupPolicy: 'LeaderReady', leaderWorkerTemplate: { workerTemplate: worker } },
      (d) => d.startupPolicy,
      'LeaderReady',
    ],
    [
      'podTerminationPolicy Parallel',
      { podTerminationPolicy: 'Parallel', leaderWorkerTemplate: { workerTemplate: worker } },
      (d) => d.podTerminationPolicy,
      'Parallel',
    ],
    [
      'maxSurge only: the other rollout fields still default',
      {
        rolloutStrategy: { rollingUpdateConfiguration: { maxSurge: '50%' } },
        leaderWorkerTemplate: { workerTemplate: worker },
      },
      (d) => d.rolloutStrategy.rollingUpdateConfiguration,
      { partition: 0, maxUnavailable: 1, maxSurge: '50%' },
    ],
    [
      'subdomainPolicy UniquePerReplica',
      { networkConfig: { subdomainPolicy: 'UniquePerReplica' }, leaderWorkerTemplate: { workerTemplate: worker } },
      (d) => d.networkConfig.subdomainPolicy,
      'UniquePerReplica',
    ],
    [
      'maxGroupRestarts 0 (no default: kept only when set)',
      { leaderWorkerTemplate: { workerTemplate: worker, maxGroupRestarts: 0 } },
      (d) => d.leaderWorkerTemplate.maxGroupRestarts,
      0,
    ],
    [
      'publishNotReadyAddresses false, next to the defaulted subdomainPolicy',
      { networkConfig: { publishNotReadyAddresses: false }, leaderWorkerTemplate: { workerTemplate: worker } },
      (d) => d.networkConfig,
      { subdomainPolicy: 'Shared', publishNotReadyAddresses: false },
    ],
  ];
  for (const [name, spec, pick, expected] of keeps) {
    it(`keeps a set value: ${name}`, () => assert.deepEqual(pick(applySpecDefaults(spec)), expected));
  }

  it('treats JSON null like an absent field', () => {
    const spec = {
      replicas: null,
      podTerminationPolicy: null,
      leaderWorkerTemplate: { workerTemplate: worker, size: null, maxGroupRestarts: null },
      networkConfig: { publishNotReadyAddresses: null },
    };
    const d = applySpecDefaults(spec as unknown as LeaderWorkerSetSpec);
    assert.equal(d.replicas, 1);
    assert.equal(d.podTerminationPolicy, 'Default');
    assert.equal(d.leaderWorkerTemplate.size, 1);
    assert.equal('maxGroupRestarts' in d.leaderWorkerTemplate, false);
    assert.deepEqual(d.networkConfig, { subdomainPolicy: 'Shared' });
  });

  it('leaves an absent leader template absent and copies a present one', () => {
    assert.equal(
      'leaderTemplate' in applySpecDefaults({ leaderWorkerTemplate: { workerTemplate: worker } }).leaderWorkerTemplate,
      false,
    );
    const lws = sampleLws();
    const d = applyDefaults(lws);
    assert.deepEqual(d.spec.leaderWorkerTemplate.leaderTemplate, lws.spec.leaderWorkerTemplate.leaderTemplate);
    assert.notEqual(d.spec.leaderWorkerTemplate.leaderTemplate, lws.spec.leaderWorkerTemplate.leaderTemplate);
  });

  it('returns a new object and never mutates its input', () => {
    const lws = sampleLws({ replicas: undefined });
    const before = JSON.stringify(lws);
    const d = applyDefaults(lws);
    assert.equal(JSON.stringify(lws), before);
    assert.notEqual(d, lws);
    assert.notEqual(d.metadata, lws.metadata);
    d.spec.leaderWorkerTemplate.workerTemplate.spec?.containers.push({ name: 'extra' });
    assert.equal(lws.spec.leaderWorkerTemplate.workerTemplate.spec?.containers.length, 1);
  });
});
