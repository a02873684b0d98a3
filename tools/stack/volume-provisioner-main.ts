// The volume provisioner as a cluster process (started by `npm run cluster:up`): node --import tsx
// volume-provisioner-main.ts <kubeconfig> <volumes dir>. See volume-provisioner.ts.
import * as k8s from '@kubernetes/client-node';
import { identifyAs, reuseConnections, userAgent } from '../../src/config/kubernetes.js';
import { createLogger } from '../../src/log.js';
import { ensureStorageClass, STORAGE_CLASS_NAME, VolumeProvisioner } from './volume-provisioner.js';

const log = createLogger('volume-provisioner');
const [kubeconfig, volumesDir] = process.argv.slice(2);
if (!kubeconfig || !volumesDir) {
  log.error('usage: volume-provisioner-main.ts <kubeconfig> <volumes dir>');
  process.exit(2);
}
const kc = identifyAs(reuseConnections(new k8s.KubeConfig()), userAgent('volume-provisioner'));
kc.loadFromFile(kubeconfig);
// cluster.ts creates the class before starting this process; again here so that a restart puts back a deleted one.
await ensureStorageClass(kc, log);
const provisioner = new VolumeProvisioner(kc, log, { volumesDir });
await provisioner.start();
log.info('provisioning volumes for claims of its class', {
  storageClass: STORAGE_CLASS_NAME,
  provisioner: provisioner.provisioner,
  volumesDir,
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void provisioner.stop().then(() => process.exit(0));
  });
}
