// Shared sample objects for the model unit tests.
import type { LeaderWorkerSet } from '../../src/model/index.js';

/** The parallel-termination example of the spec, with the metadata the API server would add. */
export function sampleLws(overrides: Partial<LeaderWorkerSet['spec']> = {}): LeaderWorkerSet {
  return {
    apiVersion: 'leaderworkerset.x-k8s.io/v1',
    kind: 'LeaderWorkerSet',
    metadata: { name: 'demo', namespace: 'default', uid: 'lws-uid-1', generation: 3 },
    spec: {
      podTerminationPolicy: 'Parallel',
      replicas: 2,
      leaderWorkerTemplate: {
        size: 4,
        leaderTemplate: { spec: { containers: [{ name: 'leader', image: 'nginx:latest' }] } },
        workerTemplate: { spec: { containers: [{ name: 'worker', image: 'nginx:latest' }] } },
      },
      ...overrides,
    },
  };
}
