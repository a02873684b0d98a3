// The pod finisher as a cluster process (started by `npm run cluster:up`): node --import tsx pod-finisher-main.ts
// <kubeconfig>. See pod-finisher.ts.
import * as k8s from '@kubernetes/client-node';
import { identifyAs, reuseConnections, userAgent } from '../../src/config/kubernetes.js';
import { createLogger } from '../../src/log.js';
import { PodFinisher } from './pod-finisher.js';

const log = createLogger('pod-finisher');
const kubeconfig = process.argv[2];
if (!kubeconfig) {
  log.error('usage: pod-finisher-main.ts <kubeconfig>');
  process.exit(2);
}
const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);
const finisher = new PodFinisher(identifyAs(reuseConnections(kc), userAgent('pod-finisher')), log);
await finisher.start();
log.info('removing terminating pods of the fake nodes when their grace period ends');
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void finisher.stop().then(() => process.exit(0));
  });
}
