// src/model is imported by Temporal workflow code, which must stay deterministic and cannot load Node built-ins or
// the Kubernetes client. Only type imports of the client are allowed: they vanish at runtime. The worker loads it once
// for every workflow (preloaded into the shared V8 context), so it holds no state of its own either.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'mocha';

const dir = new URL('../../src/model/', import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));

describe('src/model purity', () => {
  it('has files to check', () => assert.ok(files.length >= 10));
  for (const file of files) {
    it(`${file} imports only model files and client types, and uses no clock or randomness`, () => {
      const text = readFileSync(new URL(file, dir), 'utf8');
      for (const match of text.matchAll(/^\s*(import|export)\s+(type\s+)?[^;]*?\sfrom\s+'([^']+)'/gms)) {
        const [, , typeOnly, source] = match;
        if (source?.startsWith('./')) {
          assert.ok(source.endsWith('.js'), `${file}: relative import ${source} needs the .js extension`);
          continue;
        }
        assert.ok(source === '@kubernetes/client-node' && typeOnly, `${file}: runtime import of ${source}`);
      }
      assert.doesNotMatch(text, /\brequire\(|import\(/, `${file}: dynamic import`);
      assert.doesNotMatch(text, /Math\.random|Date\.now|new Date\(|process\./, `${file}: nondeterminism`);
      // The worker preloads src/model once for all workflows (workflowBundleOptions): module state would be shared.
      assert.doesNotMatch(text, /^(export\s+)?(let|var)\s/m, `${file}: module-level mutable state`);
    });
  }
});
