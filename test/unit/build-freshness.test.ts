import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { staleReason } from '../../tools/build/build-freshness.js';

/** Files relative to a fresh directory, each written with the given modification time (seconds). */
function tree(files: Record<string, number>): string {
  const root = mkdtempSync(join(tmpdir(), 'lws-freshness-'));
  for (const [path, mtime] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), '');
    utimesSync(join(root, path), mtime, mtime);
  }
  return root;
}

describe('build freshness (whether npm start builds dist/ first)', () => {
  const inputs = ['src', 'package-lock.json'];
  const outputs = ['dist/main.js', 'dist/workflow-bundle.js'];
  const cases: { name: string; files: Record<string, number>; want: string | undefined }[] = [
    {
      name: 'every output newer than every input: up to date',
      files: {
        'src/a.ts': 100,
        'src/deep/b.ts': 150,
        'package-lock.json': 50,
        'dist/main.js': 200,
        'dist/workflow-bundle.js': 210,
      },
      want: undefined,
    },
    {
      name: 'an output missing',
      files: { 'src/a.ts': 100, 'package-lock.json': 50, 'dist/main.js': 200 },
      want: 'dist/workflow-bundle.js is missing',
    },
    {
      name: 'a source deep in a directory changed after the oldest output: named',
      files: {
        'src/a.ts': 100,
        'src/deep/b.ts': 205,
        'package-lock.json': 50,
        'dist/main.js': 200,
        'dist/workflow-bundle.js': 210,
      },
      want: 'src/deep/b.ts changed since the last build',
    },
    {
      name: 'the lock file changed (npm ci of other versions)',
      files: { 'src/a.ts': 100, 'package-lock.json': 300, 'dist/main.js': 200, 'dist/workflow-bundle.js': 210 },
      want: 'package-lock.json changed since the last build',
    },
    {
      name: 'an input that does not exist is no reason',
      files: { 'src/a.ts': 100, 'dist/main.js': 200, 'dist/workflow-bundle.js': 210 },
      want: undefined,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const root = tree(c.files);
      assert.equal(
        staleReason(
          root,
          inputs.map((p) => join(root, p)),
          outputs.map((p) => join(root, p)),
        ),
        c.want,
      );
    });
  }
});
