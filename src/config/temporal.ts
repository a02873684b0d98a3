import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from '@temporalio/client';

/**
 * How the worker and the trigger reach Temporal, from environment variables:
 * TEMPORAL_ADDRESS (host:port, default localhost:7233), TEMPORAL_NAMESPACE (default "default"),
 * TEMPORAL_TASK_QUEUE (default "lws-temporal-<cluster>", see defaultTaskQueue), TEMPORAL_API_KEY (Temporal Cloud or a
 * server with API keys; implies TLS),
 * or TEMPORAL_API_KEY_PATH (a file holding it, read again as it changes: config/api-key-file.ts),
 * TEMPORAL_TLS=true, TEMPORAL_TLS_CA_PATH, TEMPORAL_TLS_CERT_PATH + TEMPORAL_TLS_KEY_PATH (mTLS), TEMPORAL_TLS_SERVER_NAME.
 * The worker's Worker Versioning: workerVersioningFromEnv.
 */
export interface TemporalConfig {
  address: string;
  namespace: string;
  /** The Kubernetes cluster this controller serves (config/cluster.ts): in its workflow IDs and task queue. */
  cluster: string;
  taskQueue: string;
  apiKey?: string;
  /** The file the API key came from (TEMPORAL_API_KEY_PATH): followed for a rotated key. */
  apiKeyPath?: string;
  tls?: { serverName?: string; ca?: Buffer; cert?: Buffer; key?: Buffer };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

function readFileFromVar(env: NodeJS.ProcessEnv, variable: string): Buffer | undefined {
  const path = env[variable];
  if (!path) return undefined;
  try {
    return readFileSync(path);
  } catch (err) {
    throw new ConfigError(`${variable}=${path}: cannot read the file (${(err as Error).message})`);
  }
}

/**
 * The API key in a file (a mounted Secret), without its surrounding whitespace. No file: no key, as when the
 * Deployments mount an optional Secret that does not exist.
 */
export function readApiKeyFile(path: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(`TEMPORAL_API_KEY_PATH=${path}: cannot read the file (${(err as Error).message})`);
  }
  return text.trim() || undefined;
}

/** A true/false variable (true, false, 1, 0, any case; empty = unset). */
function readFlag(env: NodeJS.ProcessEnv, variable: string): boolean | undefined {
  const value = env[variable];
  if (value === undefined || value === '') return undefined;
  const flag = value.toLowerCase();
  if (flag === 'true' || flag === '1') return true;
  if (flag === 'false' || flag === '0') return false;
  throw new ConfigError(`${variable}=${value}: expected true or false`);
}

/** One task queue per cluster: a worker then runs only its own cluster's workflows and activities. */
export function defaultTaskQueue(cluster: string): string {
  return `lws-temporal-${cluster}`;
}

/** `cluster`: the cluster's name, as resolveClusterName gives it. */
export function temporalConfigFromEnv(env: NodeJS.ProcessEnv, cluster: string): TemporalConfig {
  const address = env.TEMPORAL_ADDRESS || 'localhost:7233';
  const port = Number(/^[^\s:]+:(\d{1,5})$/.exec(address)?.[1]);
  if (!(port >= 1 && port <= 65535)) {
    throw new ConfigError(
      `TEMPORAL_ADDRESS=${address}: expected host:port with a port from 1 to 65535, e.g. localhost:7233`,
    );
  }
  const tlsFlag = readFlag(env, 'TEMPORAL_TLS');
  const cert = readFileFromVar(env, 'TEMPORAL_TLS_CERT_PATH');
  const key = readFileFromVar(env, 'TEMPORAL_TLS_KEY_PATH');
  if (Boolean(cert) !== Boolean(key)) {
    throw new ConfigError(
      'TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH go together: set both for mTLS, or neither',
    );
  }
  const ca = readFileFromVar(env, 'TEMPORAL_TLS_CA_PATH');
  const apiKeyPath = env.TEMPORAL_API_KEY_PATH || undefined;
  if (apiKeyPath && env.TEMPORAL_API_KEY) {
    throw new ConfigError('TEMPORAL_API_KEY and TEMPORAL_API_KEY_PATH: set one of them, not both');
  }
  const apiKey = apiKeyPath ? readApiKeyFile(apiKeyPath) : env.TEMPORAL_API_KEY || undefined;
  const wantTls = tlsFlag === true || Boolean(cert || ca || apiKey);
  const explicitlyOff = tlsFlag === false;
  return {
    address,
    namespace: env.TEMPORAL_NAMESPACE || 'default',
    cluster,
    taskQueue: env.TEMPORAL_TASK_QUEUE || defaultTaskQueue(cluster),
    apiKey,
    ...(apiKeyPath ? { apiKeyPath } : {}),
    tls:
      wantTls && !explicitlyOff ? { serverName: env.TEMPORAL_TLS_SERVER_NAME || undefined, ca, cert, key } : undefined,
  };
}

/** The worker's and the trigger's error when the server cannot be reached: what to set, or how to run one. */
export function temporalUnreachable(config: TemporalConfig, err: unknown): Error {
  return new Error(
    `cannot reach Temporal at ${config.address} (${(err as Error).message}): set TEMPORAL_ADDRESS, or unset it with \`npm start\` to run an embedded dev server`,
    { cause: err },
  );
}

/** Options shared by the client's Connection and the worker's NativeConnection. */
export function connectionOptions(
  config: TemporalConfig,
): Pick<ConnectionOptions, 'address' | 'tls'> & { apiKey?: string } {
  return {
    address: config.address,
    apiKey: config.apiKey,
    // false, not undefined: with an API key the SDK turns an undefined tls into TLS on.
    tls: config.tls
      ? {
          serverNameOverride: config.tls.serverName,
          serverRootCACertificate: config.tls.ca,
          clientCertPair: config.tls.cert && config.tls.key ? { crt: config.tls.cert, key: config.tls.key } : undefined,
        }
      : false,
  };
}

/**
 * When a worker makes its build the current version of its Worker Deployment (docs/operations.md, "Upgrades and
 * Worker Versioning"):
 * - `if-new`: the first time the build runs (the server has never had it current); a build an operator moved away
 *   from (a rollback) stays where it is, even when one of its workers restarts.
 * - `always`: at every start (a checkout switched back to an older commit gets its build back).
 * - `never`: an operator promotes it (`temporal worker deployment set-current-version`).
 */
export const setCurrentPolicies = ['if-new', 'always', 'never'] as const;
export type SetCurrentPolicy = (typeof setCurrentPolicies)[number];

/**
 * The worker's Worker Versioning, from TEMPORAL_WORKER_VERSIONING (default true), TEMPORAL_WORKER_DEPLOYMENT (default:
 * `taskQueue`, see defaultDeploymentName), TEMPORAL_WORKER_BUILD_ID (default: derived from the workflow bundle by
 * the worker) and TEMPORAL_WORKER_SET_CURRENT (default `if-new`, or `defaults.setCurrent`).
 */
export type WorkerVersioningConfig =
  { enabled: false } | { enabled: true; deploymentName: string; buildId?: string; setCurrent: SetCurrentPolicy };

/** What the server accepts, and a bound that keeps the name readable in the Web UI and the CLI. */
const maxVersionPart = 255;

function checkVersionPart(variable: string, value: string, what: string): void {
  if (value.length > maxVersionPart) {
    throw new ConfigError(`${variable}: ${what} is ${value.length} characters long; at most ${maxVersionPart}`);
  }
  if (/[\s\p{Cc}]/u.test(value)) {
    throw new ConfigError(`${variable}=${JSON.stringify(value)}: ${what} cannot contain spaces or control characters`);
  }
}

/**
 * One deployment per task queue unless told otherwise: the server refuses to make a version current that does not poll
 * every task queue of the current one, so two controllers on different task queues must not share a deployment
 * (with the default task queue: `lws-temporal-<cluster>`). The server's version names use ".", which a deployment name
 * cannot hold.
 */
export function defaultDeploymentName(taskQueue: string): string {
  return taskQueue.replaceAll('.', '-');
}

export function workerVersioningFromEnv(
  env: NodeJS.ProcessEnv,
  taskQueue: string,
  defaults: { setCurrent?: SetCurrentPolicy } = {},
): WorkerVersioningConfig {
  if (readFlag(env, 'TEMPORAL_WORKER_VERSIONING') === false) return { enabled: false };
  const deploymentName = env.TEMPORAL_WORKER_DEPLOYMENT || defaultDeploymentName(taskQueue);
  const named = env.TEMPORAL_WORKER_DEPLOYMENT
    ? 'TEMPORAL_WORKER_DEPLOYMENT'
    : `the task queue ${taskQueue} (the deployment name)`;
  checkVersionPart(named, deploymentName, 'a deployment name');
  // The server names a version "<deployment>.<build ID>" and refuses a deployment name with a dot.
  if (deploymentName.includes('.')) {
    throw new ConfigError(`TEMPORAL_WORKER_DEPLOYMENT=${deploymentName}: a deployment name cannot contain "."`);
  }
  const buildId = env.TEMPORAL_WORKER_BUILD_ID || undefined;
  if (buildId !== undefined) {
    checkVersionPart('TEMPORAL_WORKER_BUILD_ID', buildId, 'a build ID');
    // The server reserves "__" (its "__unversioned__").
    if (buildId.startsWith('__')) {
      throw new ConfigError(`TEMPORAL_WORKER_BUILD_ID=${buildId}: a build ID cannot start with "__"`);
    }
  }
  const setCurrent = env.TEMPORAL_WORKER_SET_CURRENT || defaults.setCurrent || 'if-new';
  if (!(setCurrentPolicies as readonly string[]).includes(setCurrent)) {
    throw new ConfigError(
      `TEMPORAL_WORKER_SET_CURRENT=${setCurrent}: expected one of ${setCurrentPolicies.join(', ')}`,
    );
  }
  return { enabled: true, deploymentName, buildId, setCurrent: setCurrent as SetCurrentPolicy };
}
