import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from '@temporalio/client';

/**
 * How the worker and the trigger reach Temporal, from environment variables:
 * TEMPORAL_ADDRESS (host:port, default localhost:7233), TEMPORAL_NAMESPACE (default "default"),
 * TEMPORAL_TASK_QUEUE (default "lws-temporal"), TEMPORAL_API_KEY (Temporal Cloud or a server with API keys; implies TLS),
 * TEMPORAL_TLS=true, TEMPORAL_TLS_CA_PATH, TEMPORAL_TLS_CERT_PATH + TEMPORAL_TLS_KEY_PATH (mTLS), TEMPORAL_TLS_SERVER_NAME.
 */
export interface TemporalConfig {
  address: string;
  namespace: string;
  taskQueue: string;
  apiKey?: string;
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

export function temporalConfigFromEnv(env: NodeJS.ProcessEnv = process.env): TemporalConfig {
  const address = env.TEMPORAL_ADDRESS || 'localhost:7233';
  const port = Number(/^[^\s:]+:(\d{1,5})$/.exec(address)?.[1]);
  if (!(port >= 1 && port <= 65535)) {
    throw new ConfigError(
      `TEMPORAL_ADDRESS=${address}: expected host:port with a port from 1 to 65535, e.g. localhost:7233`,
    );
  }
  const tlsFlag = env.TEMPORAL_TLS?.toLowerCase();
  if (tlsFlag !== undefined && tlsFlag !== '' && !['true', 'false', '1', '0'].includes(tlsFlag)) {
    throw new ConfigError(`TEMPORAL_TLS=${env.TEMPORAL_TLS}: expected true or false`);
  }
  const cert = readFileFromVar(env, 'TEMPORAL_TLS_CERT_PATH');
  const key = readFileFromVar(env, 'TEMPORAL_TLS_KEY_PATH');
  if (Boolean(cert) !== Boolean(key)) {
    throw new ConfigError(
      'TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH go together: set both for mTLS, or neither',
    );
  }
  const ca = readFileFromVar(env, 'TEMPORAL_TLS_CA_PATH');
  const apiKey = env.TEMPORAL_API_KEY || undefined;
  const wantTls = tlsFlag === 'true' || tlsFlag === '1' || Boolean(cert || ca || apiKey);
  const explicitlyOff = tlsFlag === 'false' || tlsFlag === '0';
  return {
    address,
    namespace: env.TEMPORAL_NAMESPACE || 'default',
    taskQueue: env.TEMPORAL_TASK_QUEUE || 'lws-temporal',
    apiKey,
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
