// The layers of src/ as eslint.config.js enforces them, proven edge by edge on one ESLint instance, and README.md's
// layout table checked against the folders that exist.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, it } from 'mocha';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const LAYER_RULES = new Set(['no-restricted-imports', 'no-restricted-syntax']);

const PURE = ['model', 'shared'];
const PLUMBING = ['log.ts', 'codec', 'config'];
const EVERYTHING = 'all';
/**
 * What each unit of src/ may import from the rest of src/, besides itself: the spec the lint rules are held to.
 * Everything else in src/ must be refused, and so must tools/, test/, scripts/ and bin/.
 */
const MAY: Record<string, string[] | typeof EVERYTHING> = {
  model: [],
  shared: ['model'],
  'log.ts': [],
  codec: ['log.ts'],
  'codec/main.ts': ['codec', 'config', 'log.ts'],
  config: ['codec', 'log.ts'],
  kube: [...PURE, ...PLUMBING],
  observability: [...PURE, ...PLUMBING, 'kube'],
  activities: [...PURE, ...PLUMBING, 'kube', 'observability'],
  workflows: PURE,
  worker: [...PURE, ...PLUMBING, 'kube', 'observability', 'activities', 'workflows'],
  trigger: [...PURE, ...PLUMBING, 'kube', 'observability', 'activities', 'workflows'],
  admission: [...PURE, ...PLUMBING, 'kube', 'observability'],
  cli: [...PURE, ...PLUMBING, 'kube', 'workflows'],
  'dev-server': [...PURE, ...PLUMBING, 'workflows'],
  crd: [],
  'main.ts': EVERYTHING,
};
/** Imports allowed with `import type` only. */
const TYPES_ONLY: Record<string, string[]> = { workflows: ['activities'] };
const topOf = (unit: string) => unit.split('/')[0]!;
const TOPS = [...new Set(Object.keys(MAY).map(topOf))];

/** Folders holding at least one file (the move to tools/ left empty ones behind; git does not keep them). */
function foldersWithFiles(dir: string): string[] {
  const holdsFiles = (path: string): boolean =>
    readdirSync(path, { withFileTypes: true }).some(
      (e) => e.isFile() || (e.isDirectory() && holdsFiles(join(path, e.name))),
    );
  return readdirSync(join(repoRoot, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory() && holdsFiles(join(repoRoot, dir, e.name)))
    .map((e) => e.name);
}

describe('layers: which folders of src/ may import which (eslint.config.js)', function () {
  // Loading ESLint and typescript-eslint takes a few seconds on a busy machine; each lint after that, milliseconds.
  this.timeout(60_000);
  const eslint = new ESLint({ cwd: repoRoot, ruleFilter: ({ ruleId }) => LAYER_RULES.has(ruleId) });

  /** The layer rules' messages for `code` as if it were the file `filePath`. */
  async function refusals(filePath: string, code: string): Promise<string[]> {
    const [result] = await eslint.lintText(code, { filePath: join(repoRoot, filePath) });
    assert.equal(result?.fatalErrorCount, 0, result?.messages.map((m) => m.message).join('; '));
    return (result?.messages ?? [])
      .filter((m) => LAYER_RULES.has(m.ruleId ?? ''))
      .map((m) => `${m.ruleId}: ${m.message}`);
  }

  /** A file of the unit, and the relative path from it to a top-level name of src/ (or of the repository). */
  const atRoot = (unit: string) => !unit.includes('/') && unit.endsWith('.ts');
  const fileOf = (unit: string) => (unit.endsWith('.ts') ? `src/${unit}` : `src/${unit}/layer-probe.ts`);
  const toSrc = (unit: string, top: string) =>
    `${atRoot(unit) ? '.' : '..'}/${top.endsWith('.ts') ? top.replace(/\.ts$/, '.js') : `${top}/x.js`}`;
  const toRepo = (unit: string, top: string) => `${atRoot(unit) ? '..' : '../..'}/${top}/x.js`;

  it('every folder and module of src/ has a layer here', () => {
    const modules = readdirSync(join(repoRoot, 'src')).filter((f) => f.endsWith('.ts'));
    assert.deepEqual([...foldersWithFiles('src'), ...modules].sort(), [...TOPS].sort());
  });

  for (const unit of Object.keys(MAY)) {
    it(`src/${unit}: each import into src/, static or import(), allowed or refused as its layer says`, async () => {
      const may = MAY[unit]!;
      const types = TYPES_ONLY[unit] ?? [];
      const wrong: string[] = [];
      for (const top of TOPS.filter((t) => t !== topOf(unit))) {
        const path = toSrc(unit, top);
        const allowed = may === EVERYTHING || may.includes(top);
        const staticOnes = await refusals(fileOf(unit), `import { x } from '${path}';\nexport { x };\n`);
        const dynamicOnes = await refusals(fileOf(unit), `export const load = () => import('${path}');\n`);
        if (allowed !== (staticOnes.length === 0))
          wrong.push(`import from ${path}: ${staticOnes.join('; ') || 'allowed'}`);
        if (allowed !== (dynamicOnes.length === 0))
          wrong.push(`import(${path}): ${dynamicOnes.join('; ') || 'allowed'}`);
        if (types.includes(top)) {
          const typeOnes = await refusals(fileOf(unit), `import type { X } from '${path}';\nexport type { X };\n`);
          if (typeOnes.length > 0) wrong.push(`import type from ${path}: ${typeOnes.join('; ')}`);
        }
      }
      assert.deepEqual(wrong, []);
    });

    it(`src/${unit}: nothing from tools/, test/, scripts/ or bin/`, async () => {
      for (const top of ['tools', 'test', 'scripts', 'bin']) {
        const path = toRepo(unit, top);
        assert.match(
          (await refusals(fileOf(unit), `import { x } from '${path}';\nexport { x };\n`)).join(),
          /never imports tools/,
          path,
        );
        assert.match(
          (await refusals(fileOf(unit), `export const load = () => import('${path}');\n`)).join(),
          /never imports tools/,
          path,
        );
      }
    });
  }

  it('the workflow fence holds next to the layers: no Node built-ins, no client, only the workflow SDK', async () => {
    const file = 'src/workflows/layer-probe.ts';
    const refused = async (from: string) =>
      (await refusals(file, `import { x } from '${from}';\nexport { x };\n`)).join();
    assert.match(await refused('node:fs'), /deterministic/);
    assert.match(await refused('crypto'), /deterministic/);
    assert.match(await refused('@kubernetes/client-node'), /Only activities talk to Kubernetes/);
    assert.match(await refused('@temporalio/activity'), /only @temporalio\/workflow/);
    assert.equal(await refused('@temporalio/workflow'), '');
    assert.equal(await refused('./activities.js'), '', "the workflows' own activities.ts is not src/activities");
  });

  it('tools/ builds on src/ but never on test/, scripts/ or bin/', async () => {
    const file = 'tools/bench/layer-probe.ts';
    assert.deepEqual(await refusals(file, "import { x } from '../../src/model/index.js';\nexport { x };\n"), []);
    assert.deepEqual(await refusals(file, "import { x } from '../stack/paths.js';\nexport { x };\n"), []);
    for (const top of ['test', 'scripts', 'bin']) {
      const path = `../../${top}/x.js`;
      assert.match(
        (await refusals(file, `import { x } from '${path}';\nexport { x };\n`)).join(),
        /tools\/ never imports/,
      );
      assert.match(
        (await refusals(file, `export const load = () => import('${path}');\n`)).join(),
        /tools\/ never imports/,
      );
    }
  });

  it('the tree as it is breaks no layer', async () => {
    const results = await eslint.lintFiles(['src', 'tools']);
    const broken = results.flatMap((r) =>
      r.messages.filter((m) => LAYER_RULES.has(m.ruleId ?? '')).map((m) => `${r.filePath}:${m.line}: ${m.message}`),
    );
    assert.deepEqual(broken, []);
  });
});

describe("layout: README.md's table names every folder of src/ and tools/", () => {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = /^## Layout\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? '';
  /** The paths in the first cell of each row of the section's table (the header and the rule excluded). */
  const listed = section
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|\s*-/.test(line))
    .slice(1)
    .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]!));

  it('README.md has a Layout section with a table', () => assert.ok(listed.length > 0, 'no "## Layout" table'));

  for (const dir of ['src', 'tools']) {
    it(`every folder of ${dir}/ has a row`, () => {
      const missing = foldersWithFiles(dir).filter((name) => !listed.includes(`${dir}/${name}/`));
      assert.deepEqual(missing, [], `missing from README.md's Layout table`);
    });
  }

  it('every path the table names exists', () => {
    assert.deepEqual(
      listed.filter((path) => !existsSync(join(repoRoot, path))),
      [],
    );
  });
});
