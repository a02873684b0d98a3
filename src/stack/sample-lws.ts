// The spec's sample LeaderWorkerSet (a leader and workers, each one container), with the knobs the demo and the
// benchmark turn: policy (none for upstream's controller), replicas, size, the pods' grace period and, for a rolling
// update, maxUnavailable / maxSurge.
import { API_GROUP, API_VERSION, type LeaderWorkerSet, type PodTerminationPolicy } from '../model/index.js';

export function sampleLeaderWorkerSet(opts: {
  name: string;
  /** None: the field left out, as upstream's manifests have it. */
  policy?: PodTerminationPolicy;
  replicas: number;
  size: number;
  graceSeconds: number;
  image: string;
  /** Rolling-update limits (the defaults when absent: maxUnavailable 1, maxSurge 0). */
  rollingUpdate?: { maxUnavailable: number; maxSurge: number };
}): LeaderWorkerSet {
  const template = (role: string) => ({
    spec: { terminationGracePeriodSeconds: opts.graceSeconds, containers: [{ name: role, image: opts.image }] },
  });
  return {
    apiVersion: `${API_GROUP}/${API_VERSION}`,
    kind: 'LeaderWorkerSet',
    metadata: { name: opts.name },
    spec: {
      ...(opts.policy && { podTerminationPolicy: opts.policy }),
      replicas: opts.replicas,
      leaderWorkerTemplate: { size: opts.size, leaderTemplate: template('leader'), workerTemplate: template('worker') },
      ...(opts.rollingUpdate && {
        rolloutStrategy: { type: 'RollingUpdate', rollingUpdateConfiguration: opts.rollingUpdate },
      }),
    },
  };
}
