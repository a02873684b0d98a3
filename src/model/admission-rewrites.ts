// What upstream's LeaderWorkerSet defaulting webhook does beyond filling in absent fields (the CRD's defaults do
// that): it rewrites two values that are present. The admission webhook applies this to every LWS create and update,
// before the API server checks the schema, so the stored object is the one upstream would store.
import { cloneJson } from './json.js';
import { DEFAULT_ROLLOUT_STRATEGY_TYPE } from './defaults.js';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A rewritten copy of an LWS as the API server sent it (any JSON; the schema is checked after admission):
 * - restartPolicy `Default`, the deprecated name of `None`, becomes `None`;
 * - rolloutStrategy.type "" (what a Go client built on upstream's types sends when it is unset) becomes RollingUpdate.
 * A second call on its own result changes nothing.
 */
export function rewriteLwsValues<T>(lws: T): T {
  const out = cloneJson(lws);
  const spec = isObject(out) ? out['spec'] : undefined;
  if (!isObject(spec)) return out;
  const template = spec['leaderWorkerTemplate'];
  if (isObject(template) && template['restartPolicy'] === 'Default') template['restartPolicy'] = 'None';
  const rollout = spec['rolloutStrategy'];
  if (isObject(rollout) && rollout['type'] === '') rollout['type'] = DEFAULT_ROLLOUT_STRATEGY_TYPE;
  return out;
}
