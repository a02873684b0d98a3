// The spec's sample LeaderWorkerSet (a leader and workers, each one container), with the knobs the demo and the
// benchmark and the end-to-end tests turn: policy (none for upstream's controller), replicas, size, the pods' grace
// period and annotations, the restart budget and, for a rolling update, maxUnavailable / maxSurge.
import { API_GROUP, API_VERSION, type LeaderWorkerSet, type PodTerminationPolicy } from '../../src/model/index.js';

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
  /** On every pod (the local cluster's `lws-temporal.test/ready-after`, say). */
  podAnnotations?: Record<string, string>;
  maxGroupRestarts?: number;
}): LeaderWorkerSet {
  const template = (role: string) => ({
    ...(opts.podAnnotations && { metadata: { annotations: opts.podAnnotations } }),
    spec: { terminationGracePeriodSeconds: opts.graceSeconds, containers: [{ name: role, image: opts.image }] },
  });
  return {
    apiVersion: `${API_GROUP}/${API_VERSION}`,
    kind: 'LeaderWorkerSet',
    metadata: { name: opts.name },
    spec: {
      ...(opts.policy && { podTerminationPolicy: opts.policy }),
      replicas: opts.replicas,
      leaderWorkerTemplate: {
        size: opts.size,
        ...(opts.maxGroupRestarts !== undefined && { maxGroupRestarts: opts.maxGroupRestarts }),
        leaderTemplate: template('leader'),
        workerTemplate: template('worker'),
      },
      ...(opts.rollingUpdate && {
        rolloutStrategy: { type: 'RollingUpdate', rollingUpdateConfiguration: opts.rollingUpdate },
      }),
    },
  };
}
