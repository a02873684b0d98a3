// npm run cpu-profile -- <dir> [--window <text>] [--top <n>]
//   Summarises the CPU profiles that `npm run bench -- --cpu-profile <dir>` left: for each process and thread of the
//   controller, its time inside the bench's windows (each provisioning from nothing and each round; --window keeps
//   those whose label holds the text, e.g. "provisioning Parallel"), by area and by function. Wall time per thread:
//   on a saturated machine it is more than the CPU. Frames of dist/'s bundles are named by their source file
//   through the bundles' source maps. Prints Markdown.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  formatSummary,
  summarizeProfile,
  type CpuProfile,
  type ProfileWindow,
  type SourceResolver,
} from '../tools/bench/cpu-profile.js';
import { createLogger } from '../src/log.js';
import { repoRoot } from '../tools/stack/paths.js';

/** Our own bundles' maps only: the SDK's maps would name its files as if they were this project's src/. */
function sourceResolver(): SourceResolver {
  const maps = new Map<string, SourceMap | null>();
  return (frame) => {
    if (!frame.url.startsWith('file://')) return undefined;
    const js = fileURLToPath(frame.url);
    if (!js.startsWith(join(repoRoot, 'dist') + '/')) return undefined;
    let map = maps.get(js);
    if (map === undefined) {
      map = existsSync(js + '.map')
        ? new SourceMap(JSON.parse(readFileSync(js + '.map', 'utf8')) as ConstructorParameters<typeof SourceMap>[0])
        : null;
      maps.set(js, map);
    }
    const entry = map?.findEntry(frame.lineNumber, frame.columnNumber);
    if (!entry || !('originalSource' in entry)) return undefined;
    return { file: relative(repoRoot, resolve(dirname(js), entry.originalSource)), line: entry.originalLine + 1 };
  };
}

const log = createLogger('cpu-profile');
try {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { window: { type: 'string' }, top: { type: 'string', default: '20' } },
  });
  const dir = positionals[0];
  if (dir === undefined) throw new Error('expected the folder given to npm run bench -- --cpu-profile <dir>');
  const windowsFile = join(dir, 'windows.json');
  if (!existsSync(windowsFile)) throw new Error(`${windowsFile} is missing: did the bench run with --cpu-profile?`);
  const windows = (JSON.parse(readFileSync(windowsFile, 'utf8')) as ProfileWindow[]).filter(
    (w) => values.window === undefined || w.label.includes(values.window),
  );
  if (windows.length === 0) throw new Error(`no window's label holds "${values.window}"; see ${windowsFile}`);
  const top = Number(values.top);
  const resolver = sourceResolver();
  process.stdout.write(`Windows: ${windows.map((w) => w.label).join('; ')}\n\n`);
  for (const role of readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory())) {
    // node names them CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile: thread 0 is the main thread.
    for (const file of readdirSync(join(dir, role.name)).filter((f) => f.endsWith('.cpuprofile'))) {
      const thread = file.split('.')[4] === '0' ? 'main thread' : `thread ${file.split('.')[4]}`;
      const profile = JSON.parse(readFileSync(join(dir, role.name, file), 'utf8')) as CpuProfile;
      const summary = summarizeProfile(profile, windows, resolver, top);
      process.stdout.write(formatSummary(`${role.name}, ${thread} (${file})`, summary) + '\n');
    }
  }
} catch (err) {
  log.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}
