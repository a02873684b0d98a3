// npm run bundle:workflows [-- <output path>]: bundle the workflow code once, ahead of time. A worker started with
// LWS_WORKFLOW_BUNDLE=<path> loads it instead of running webpack at start: it starts faster and its peak memory
// drops by the bundler's share (see docs/benchmarks.md).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { createLogger } from '../src/log.js';
import { stateDir } from '../src/stack/paths.js';
import { workflowBundleOptions } from '../src/worker/run.js';

const log = createLogger('bundle');
const out = resolve(process.argv[2] ?? join(stateDir, 'workflow-bundle.js'));
const { code } = await bundleWorkflowCode({ ...workflowBundleOptions, logger: undefined });
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, code);
log.info('workflow bundle written', { path: out, sizeKb: Math.round(code.length / 1024) });
