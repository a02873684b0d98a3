// npm run provision: build or download every pinned server binary once, then link them into .lws-temporal/bin.
import { createLogger, formatDuration } from '../src/log.js';
import { binDir, cacheDir } from '../tools/stack/paths.js';
import { provision } from '../tools/stack/provision.js';
import { StepError } from '../tools/stack/run.js';

const log = createLogger('provision');
const started = Date.now();
try {
  const result = await provision({ log });
  log.info(result.built.length ? `built ${result.built.join(', ')}` : 'everything was cached', {
    cache: cacheDir(),
    bin: binDir,
    took: formatDuration(Date.now() - started),
  });
} catch (err) {
  if (err instanceof StepError) {
    log.error(err.message);
  } else {
    log.error('provision failed', { error: err instanceof Error ? err.stack : String(err) });
  }
  process.exit(1);
}
