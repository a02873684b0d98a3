// @ts-check
import { readdirSync } from 'node:fs';
import { fileURLToPath, URL } from 'node:url';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layers of src/ (README.md, "Layout"): what each top-level folder or module of src/ may import from the rest of
// src/, besides itself; anything else there is an error. `types`: with `import type` only. Bottom up.
/** The domain without I/O: the workflows build on it as well as the processes. */
const PURE = ['model', 'shared'];
/** Process plumbing with no domain in it: logging, the payload codec, configuration from the environment. */
const PLUMBING = ['log.ts', 'codec', 'config'];
/** @type {Record<string, { imports: string[] | 'all', types?: string[] }>} */
const LAYERS = {
  model: { imports: [] },
  shared: { imports: ['model'] },
  'log.ts': { imports: [] },
  codec: { imports: ['log.ts'] },
  // The codec server's entry reads its keys through config, which builds on the codec class: no cycle of modules.
  'codec/main.ts': { imports: ['config', 'log.ts'] },
  config: { imports: ['codec', 'log.ts'] },
  kube: { imports: [...PURE, ...PLUMBING] },
  observability: { imports: [...PURE, ...PLUMBING, 'kube'] },
  activities: { imports: [...PURE, ...PLUMBING, 'kube', 'observability'] },
  // Activity code must not be bundled into the sandbox (Node built-ins, the Kubernetes client): its types only.
  workflows: { imports: PURE, types: ['activities'] },
  worker: { imports: [...PURE, ...PLUMBING, 'kube', 'observability', 'activities', 'workflows'] },
  trigger: { imports: [...PURE, ...PLUMBING, 'kube', 'observability', 'activities', 'workflows'] },
  // No Temporal process: it never loads activities or workflows.
  admission: { imports: [...PURE, ...PLUMBING, 'kube', 'observability'] },
  // Reads the cluster and the workflows' histories; runs no activities and serves no metrics.
  cli: { imports: [...PURE, ...PLUMBING, 'kube', 'workflows'] },
  'dev-server': { imports: [...PURE, ...PLUMBING, 'workflows'] },
  // The CRD's schema source, read by scripts/generate-crd.ts only.
  crd: { imports: [] },
  'main.ts': { imports: 'all' },
};
/** Outside the product: src/ never imports its tooling, tests or entry points. */
const NOT_PRODUCT = ['tools', 'test', 'scripts', 'bin'];

const topOf = (/** @type {string} */ unit) => unit.split('/')[0] ?? unit;
const TOPS = [...new Set(Object.keys(LAYERS).map(topOf))];

// A folder or module new in src/ has to be given its layer here before anything lints (empty folders do not count).
const hasFiles = (/** @type {string} */ dir) =>
  readdirSync(dir, { withFileTypes: true }).some(
    (e) => e.isFile() || (e.isDirectory() && hasFiles(`${dir}/${e.name}`)),
  );
const srcDir = fileURLToPath(new URL('./src', import.meta.url));
for (const entry of readdirSync(srcDir, { withFileTypes: true })) {
  const counts = entry.isDirectory() ? hasFiles(`${srcDir}/${entry.name}`) : entry.name.endsWith('.ts');
  if (counts && !TOPS.includes(entry.name)) throw new Error(`src/${entry.name} has no layer in eslint.config.js`);
}

/** A regex for relative import paths that reach one of `names` (folders, or modules such as log.ts) after `up`. */
function reaching(/** @type {string} */ up, /** @type {string[]} */ names) {
  const dirs = names.filter((n) => !n.endsWith('.ts'));
  const modules = names.filter((n) => n.endsWith('.ts')).map((n) => n.slice(0, -'.ts'.length));
  const parts = [];
  if (dirs.length) parts.push(`(?:${dirs.join('|')})/`);
  if (modules.length) parts.push(`(?:${modules.join('|')})\\.js$`);
  return `^${up}(?:${parts.join('|')})`;
}

/** The same paths for `import()`, which no-restricted-imports does not see: an esquery regex has no `/` in it. */
const dynamicImport = (/** @type {string} */ regex) =>
  `ImportExpression[source.value=/${regex.replaceAll('/', '\\x2F')}/]`;

/**
 * The rules for one unit of LAYERS. `extra`: further no-restricted-imports patterns for the same files (in flat
 * config a later setting of a rule for these files would replace this one, not add to it).
 * @param {string} unit
 * @param {object[]} [extra]
 */
function layerBlock(unit, extra = []) {
  const { imports, types = [] } = LAYERS[unit] ?? { imports: [] };
  const allowed = imports === 'all' ? TOPS : imports;
  const forbidden = TOPS.filter((t) => t !== topOf(unit) && !allowed.includes(t) && !types.includes(t));
  const atRoot = !unit.includes('/') && unit.endsWith('.ts');
  // From src/<folder>/… a path climbs to src/ first; from src/main.ts it starts there.
  const up = atRoot ? '\\./' : '(?:\\.\\./)+';
  const may = allowed.filter((t) => t !== topOf(unit));
  const typesToo = types.length ? `, and types of ${types.join(', ')}` : '';
  const what = may.length
    ? `may import from the rest of src/ only ${may.join(', ')}${typesToo}`
    : 'imports nothing from the rest of src/';
  const layers = `src/${unit} ${what} (the layers: eslint.config.js, README.md "Layout").`;
  const outside = {
    regex: `^(?:\\.\\./)+(?:${NOT_PRODUCT.join('|')})/`,
    message: 'src/ is the product: it never imports tools/, test/, scripts/ or bin/.',
  };
  /** @type {{ regex: string, message: string, allowTypeImports?: boolean }[]} */
  const patterns = [outside];
  if (forbidden.length) patterns.push({ regex: reaching(up, forbidden), message: layers });
  if (types.length) patterns.push({ regex: reaching(up, types), message: layers, allowTypeImports: true });
  const runtime = [...forbidden, ...types];
  const dynamic = [outside, ...(runtime.length ? [{ regex: reaching(up, runtime), message: layers }] : [])];
  return {
    files: unit.endsWith('.ts') ? [`src/${unit}`] : [`src/${unit}/**/*.ts`],
    // A more specific unit below this folder (codec/main.ts) has its own block.
    ignores: Object.keys(LAYERS)
      .filter((u) => u.startsWith(`${unit}/`))
      .map((u) => `src/${u}`),
    rules: {
      'no-restricted-imports': ['error', { patterns: [...patterns, ...extra] }],
      'no-restricted-syntax': [
        'error',
        ...dynamic.map((d) => ({ selector: dynamicImport(d.regex), message: d.message })),
      ],
    },
  };
}

// Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no Kubernetes client.
const workflowFence = [
  {
    group: ['node:*', 'fs', 'path', 'crypto', 'os', 'child_process'],
    message: 'Workflow code must stay deterministic.',
  },
  { group: ['@kubernetes/*'], message: 'Only activities talk to Kubernetes.' },
  {
    group: ['@temporalio/client', '@temporalio/worker', '@temporalio/activity'],
    message: 'Workflows import only @temporalio/workflow.',
  },
];

// tools/ (bench, chaos, local stack, demo, build) serve scripts/ and test/, never the other way round.
const toolsRegex = '^(?:\\.\\./)+(?:test|scripts|bin)/';
const toolsMessage = 'tools/ never imports test/, scripts/ or bin/: they build on tools/, not the other way round.';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.lws-temporal/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  ...Object.keys(LAYERS).map((unit) => layerBlock(unit, unit === 'workflows' ? workflowFence : [])),
  {
    files: ['tools/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: toolsRegex, message: toolsMessage }] }],
      'no-restricted-syntax': ['error', { selector: dynamicImport(toolsRegex), message: toolsMessage }],
    },
  },
);
