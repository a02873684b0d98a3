// A rotated API key without a restart: a Secret mounted as a volume is updated in place (within about a minute,
// the kubelet's sync period), so the file of TEMPORAL_API_KEY_PATH is read again and a changed key given to the open
// connection, which sends it with its next call.
import type { Logger } from '../log.js';
import { readApiKeyFile, type TemporalConfig } from './temporal.js';

export const API_KEY_RELOAD_MS = 15_000;

/** Follows `path` from the key the connection was opened with; stop() ends it. */
export function followApiKeyFile(opts: {
  path: string;
  current: string | undefined;
  apply: (key: string) => unknown;
  log: Logger;
  intervalMs?: number;
}): { stop(): void } {
  let current = opts.current;
  const timer = setInterval(() => {
    try {
      const key = readApiKeyFile(opts.path);
      if (key === undefined || key === current) return;
      current = key;
      void Promise.resolve(opts.apply(key)).then(
        () => opts.log.info('API key reloaded', { path: opts.path }),
        (err: unknown) => opts.log.warn('could not use the reloaded API key', { path: opts.path, error: err }),
      );
    } catch (err) {
      opts.log.warn('could not read the API key file; the current key stays', { error: err });
    }
  }, opts.intervalMs ?? API_KEY_RELOAD_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** Follows the configuration's key file for `connection`; nothing to follow when the key did not come from a file. */
export function followConfiguredApiKey(
  temporal: TemporalConfig,
  connection: { setApiKey(key: string): unknown },
  log: Logger,
): { stop(): void } | undefined {
  if (!temporal.apiKeyPath) return undefined;
  return followApiKeyFile({
    path: temporal.apiKeyPath,
    current: temporal.apiKey,
    apply: (key) => connection.setApiKey(key),
    log,
  });
}
