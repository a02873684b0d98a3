#!/usr/bin/env node
// The `lws-temporal` command. A .js file because npm links bins as they are and Node cannot run .ts by itself:
// in a checkout it registers tsx (a devDependency) and runs src/cli/main.ts, so the CLI is never a stale build;
// where the sources or tsx are absent (a production install of a build) it runs the compiled dist/cli/main.js.
import { existsSync } from 'node:fs';
import process from 'node:process';
import { URL } from 'node:url';

const source = new URL('../src/cli/main.ts', import.meta.url);
const built = new URL('../dist/cli/main.js', import.meta.url);

const tsx = existsSync(source) ? await import('tsx/esm/api').catch(() => undefined) : undefined;
if (tsx) {
  tsx.register();
  await import(source.href);
} else if (existsSync(built)) {
  await import(built.href);
} else {
  process.stderr.write('lws-temporal: neither src/cli/main.ts with tsx nor dist/cli/main.js is available\n');
  process.exit(1);
}
