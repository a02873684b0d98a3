// npm run build [-- <out dir>]: compile and bundle what production runs into dist/ (see tools/build/build.ts).
import { createLogger } from '../src/log.js';
import { buildDist } from '../tools/build/build.js';

const log = createLogger('build');
const outDir = process.argv[2] ?? 'dist';
const started = Date.now();
await buildDist(outDir, (step) => log.info(step));
log.info('built', { outDir, seconds: Math.round((Date.now() - started) / 100) / 10 });
