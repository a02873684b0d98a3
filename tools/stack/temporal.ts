import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { DevServerConfig } from '@temporalio/testing';
import { binPath } from './paths.js';
import { startRetrying } from '../../src/dev-server/processes.js';

/**
 * Temporal servers for tests and the demo, started from the provisioned binaries (the SDK's own download of them
 * cannot reach its release host from here). The SDK runs the binary as its direct child and stops it on teardown.
 */

function executable(name: 'temporal' | 'temporal-test-server'): { type: 'existing-path'; path: string } {
  const path = binPath(name);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run provision\` first`);
  return { type: 'existing-path', path };
}

/**
 * The SDK gives a server it starts 5 s to answer (a fixed limit in its core) and kills it otherwise. On a busy machine
 * (CI running a cluster and the benchmark's processes beside it) a server can take longer, so a start that timed out
 * is tried again.
 */
function startWithRetry(start: () => Promise<TestWorkflowEnvironment>): Promise<TestWorkflowEnvironment> {
  return startRetrying(start, (err) => /did not start within/.test(String(err)));
}

/** The time-skipping test server: timers jump ahead whenever every workflow is blocked. */
export function startTimeSkippingEnvironment(): Promise<TestWorkflowEnvironment> {
  return startWithRetry(() =>
    TestWorkflowEnvironment.createTimeSkipping({ server: { executable: executable('temporal-test-server') } }),
  );
}

export interface DevServerOptions {
  /** SQLite file that keeps history across restarts; omitted = in memory. */
  dbFilename?: string;
  port?: number;
  /** The Web UI listens here (default: port + 1000). */
  uiPort?: number;
  searchAttributes?: DevServerConfig['searchAttributes'];
  namespace?: string;
  /** The Temporal CLI to run (default: the provisioned one). */
  executablePath?: string;
  /** Dynamic config values (`--dynamic-config-value KEY=VALUE`, the value as JSON), e.g. shorter intervals in tests. */
  dynamicConfig?: Record<string, string | number | boolean>;
}

/** The Temporal CLI dev server with the Web UI, as a platform engineer would run it locally. */
export async function startDevServerEnvironment(opts: DevServerOptions = {}): Promise<TestWorkflowEnvironment> {
  if (opts.dbFilename) await mkdir(join(opts.dbFilename, '..'), { recursive: true });
  return startWithRetry(() =>
    TestWorkflowEnvironment.createLocal({
      server: {
        executable: opts.executablePath ? { type: 'existing-path', path: opts.executablePath } : executable('temporal'),
        dbFilename: opts.dbFilename,
        port: opts.port,
        ui: true,
        uiPort: opts.uiPort,
        namespace: opts.namespace,
        searchAttributes: opts.searchAttributes,
        extraArgs: Object.entries(opts.dynamicConfig ?? {}).flatMap(([key, value]) => [
          '--dynamic-config-value',
          `${key}=${JSON.stringify(value)}`,
        ]),
      },
    }),
  );
}
