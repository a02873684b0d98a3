// Pure LeaderWorkerSet types and functions, safe in Temporal workflow code: no Kubernetes client, no Node built-ins.
export * from './labels.js';
export * from './types.js';
export * from './objects.js';
export * from './defaults.js';
export * from './validate.js';
export * from './rollout.js';
export * from './names.js';
export * from './env.js';
export * from './policy.js';
export * from './lifecycle.js';
export * from './teardown.js';
export * from './revision.js';
export * from './templates.js';
export { canonicalJson, cloneJson } from './json.js';
export * from './status.js';
export * from './subgroups.js';
export * from './exclusive-placement.js';
export * from './tpu-env.js';
