// npm run bundle:workflows [-- <output path>]: bundle the workflow code once, ahead of time. A worker started with
// LWS_WORKFLOW_BUNDLE=<path> loads it instead of running webpack at start: it starts faster and its peak memory
// drops by the bundler's share (see docs/benchmarks.md).
import { join, resolve } from 'node:path';
import { createLogger } from '../src/log.js';
import { writeWorkflowBundle } from '../tools/build/build.js';
import { stateDir } from '../tools/stack/paths.js';
import { workflowBundleFile } from '../src/worker/run.js';

const log = createLogger('bundle');
const out = resolve(process.argv[2] ?? join(stateDir, workflowBundleFile));
const size = await writeWorkflowBundle(out);
log.info('workflow bundle written', { path: out, sizeKb: Math.round(size / 1024) });
