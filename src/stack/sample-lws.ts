// The spec's sample LeaderWorkerSet (a leader and workers, each one container), with the knobs the demo and the
// benchmark turn: policy, replicas, size and the pods' grace period.
import { API_GROUP, API_VERSION, type LeaderWorkerSet, type PodTerminationPolicy } from '../model/index.js';

export function sampleLeaderWorkerSet(opts: {
  name: string;
  policy: PodTerminationPolicy;
  replicas: number;
  size: number;
  graceSeconds: number;
  image: string;
}): LeaderWorkerSet {
  const template = (role: string) => ({
    spec: { terminationGracePeriodSeconds: opts.graceSeconds, containers: [{ name: role, image: opts.image }] },
  });
  return {
    apiVersion: `${API_GROUP}/${API_VERSION}`,
    kind: 'LeaderWorkerSet',
    metadata: { name: opts.name },
    spec: {
      podTerminationPolicy: opts.policy,
      replicas: opts.replicas,
      leaderWorkerTemplate: { size: opts.size, leaderTemplate: template('leader'), workerTemplate: template('worker') },
    },
  };
}
