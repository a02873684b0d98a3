// Run by bin/controller.sh before `npm start`, `npm run worker` and `npm run trigger`: builds dist/ when the sources
// changed since the last build (progress on stderr), then prints on stdout, one KEY=VALUE per line, the memory
// settings the role's Deployment gives it, of which bin/controller.sh keeps those the caller set itself.
import { createLogger } from '../src/log.js';
import { buildDist, distStaleReason } from '../tools/build/build.js';
import { isControllerRole, memorySettings } from '../tools/stack/controller-processes.js';
import { repoRoot } from '../tools/stack/paths.js';

const log = createLogger('build');
const role = process.argv[2] ?? '';
if (!isControllerRole(role)) {
  log.error('unknown role', { role, allowed: Object.keys(memorySettings).join(', ') });
  process.exit(2);
}
const outDir = `${repoRoot}/dist`;
const reason = distStaleReason(outDir);
if (reason) {
  const started = Date.now();
  log.info('building dist/ first (npm run build)', { reason });
  await buildDist(outDir, (step) => log.info(step));
  log.info('built', { seconds: Math.round((Date.now() - started) / 100) / 10 });
}
for (const [key, value] of Object.entries(memorySettings[role])) process.stdout.write(`${key}=${value}\n`);
