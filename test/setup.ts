// Mocha global fixtures (loaded through .mocharc.json `require`).
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import { stopClusterIfStartedHere } from './fixtures/cluster.js';

// Workers in tests log only what needs attention; TEMPORAL_LOG_LEVEL=INFO shows their lifecycle.
Runtime.install({ logger: new DefaultLogger((process.env.TEMPORAL_LOG_LEVEL as LogLevel | undefined) ?? 'WARN') });

export async function mochaGlobalTeardown(): Promise<void> {
  await stopClusterIfStartedHere();
}
