// The Temporal SDK's log lines (its worker, the activity and workflow context loggers, and the native core's,
// forwarded) through this project's logger: a process prints one format, LOG_FORMAT's.
import type { LogLevel, LogMetadata, Logger as SdkLogger } from '@temporalio/common';
import { makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import type { Logger } from '../log.js';

/**
 * The SDK's lines at INFO and above, as its default logger shows them; its DEBUG and TRACE lines (one per task and
 * activity) stay off even at LOG_LEVEL=debug, which is for this project's decisions.
 */
export function sdkLogger(log: Logger): SdkLogger {
  const emit = (level: LogLevel, message: string, meta: LogMetadata = {}) => {
    if (level === 'INFO') log.info(message, meta);
    else if (level === 'WARN') log.warn(message, meta);
    else if (level === 'ERROR') log.error(message, meta);
  };
  return {
    log: emit,
    trace: (message, meta) => emit('TRACE', message, meta),
    debug: (message, meta) => emit('DEBUG', message, meta),
    info: (message, meta) => emit('INFO', message, meta),
    warn: (message, meta) => emit('WARN', message, meta),
    error: (message, meta) => emit('ERROR', message, meta),
  };
}

/**
 * The SDK's runtime, installed once before any worker or connection: its logs through `log`, and with
 * `prometheusPort` its own metrics (task latencies, slots, pollers) on a Prometheus endpoint.
 */
export function installSdkRuntime(log: Logger, prometheusPort?: string): void {
  Runtime.install({
    logger: sdkLogger(log),
    // The worker stops on SIGTERM / SIGINT itself (runWorker): an old build first drains the runs pinned to it.
    shutdownSignals: [],
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'WARN', other: 'WARN' }), forward: {} },
      ...(prometheusPort ? { metrics: { prometheus: { bindAddress: `0.0.0.0:${prometheusPort}` } } } : {}),
    },
  });
}
