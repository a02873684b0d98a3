// npm run generate:deploy: writes the object files of deploy/, the kustomize install, from the Helm chart
// charts/lws-temporal rendered with its default values (Helm's own labels left out), so that the chart is their single
// source. The kustomizations and the components' patches in deploy/ stay hand-written; the CRD is generate:crd's.
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import * as prettier from 'prettier';
import { binPath, repoRoot } from '../tools/stack/paths.js';

const run = promisify(execFile);

export const chartDir = join(repoRoot, 'charts', 'lws-temporal');
export const RELEASE = 'lws-temporal';
export const NAMESPACE = 'lws-temporal-system';

const HEADER =
  '# Generated from charts/lws-temporal by `npm run generate:deploy`; do not edit: change the chart, then run it.';

/** Each template of the chart and the file of deploy/ it becomes; the metrics ones go to the prometheus component. */
const FILES: Record<string, string> = {
  'templates/crd/leaderworkersets-admission-policy.yaml': 'deploy/crd/leaderworkersets-admission-policy.yaml',
  'templates/controller/serviceaccounts.yaml': 'deploy/controller/serviceaccounts.yaml',
  'templates/controller/rbac.yaml': 'deploy/controller/rbac.yaml',
  'templates/controller/config.yaml': 'deploy/controller/config.yaml',
  'templates/controller/worker.yaml': 'deploy/controller/worker.yaml',
  'templates/controller/trigger.yaml': 'deploy/controller/trigger.yaml',
  'templates/controller/pdb.yaml': 'deploy/controller/pdb.yaml',
  'templates/admission/serviceaccount.yaml': 'deploy/admission/serviceaccount.yaml',
  'templates/admission/rbac.yaml': 'deploy/admission/rbac.yaml',
  'templates/admission/deployment.yaml': 'deploy/admission/deployment.yaml',
  'templates/admission/service.yaml': 'deploy/admission/service.yaml',
  'templates/admission/pdb.yaml': 'deploy/admission/pdb.yaml',
  'templates/admission/webhook.yaml': 'deploy/admission/webhook.yaml',
  'templates/metrics/services.yaml': 'deploy/components/prometheus/services.yaml',
  'templates/metrics/servicemonitor.yaml': 'deploy/components/prometheus/servicemonitor.yaml',
};

/**
 * The namespace, which Helm users create with `helm install --create-namespace` (a chart's own Namespace would be
 * deleted with the release, and everything in it).
 */
const NAMESPACE_FILE = `apiVersion: v1
kind: Namespace
metadata:
  name: ${NAMESPACE}
  labels:
    app.kubernetes.io/name: lws-temporal
    # The controller's own pods run restricted; the workloads it manages live in other namespaces.
    pod-security.kubernetes.io/enforce: restricted
`;

/** `helm template` of the chart into lws-temporal-system; `set` holds more --set values. */
export async function helmTemplate(set: string[] = [], extra: string[] = []): Promise<string> {
  const args = ['template', RELEASE, chartDir, '--namespace', NAMESPACE, ...set.flatMap((s) => ['--set', s]), ...extra];
  try {
    return (await run(binPath('helm'), args, { cwd: repoRoot, maxBuffer: 64 << 20 })).stdout;
  } catch (err) {
    const detail = (err as { stderr?: string }).stderr?.trim() || (err as Error).message;
    throw new Error(`helm ${args.join(' ')} failed (is helm provisioned? npm run provision): ${detail}`, {
      cause: err,
    });
  }
}

/** The documents of `helm template`'s output, each without its `# Source:` line, by template path. */
export function documentsBySource(rendered: string): Map<string, string[]> {
  const bySource = new Map<string, string[]>();
  for (const chunk of rendered.split(/^---[ \t]*$/m)) {
    const match = /^# Source: [^/]+\/(.+)\n/m.exec(chunk);
    if (!match) {
      if (chunk.trim() !== '') throw new Error(`a rendered document without a # Source line:\n${chunk}`);
      continue;
    }
    const body = chunk.slice(match.index + match[0].length).trim();
    if (body === '') continue;
    bySource.set(match[1]!, [...(bySource.get(match[1]!) ?? []), body]);
  }
  return bySource;
}

async function format(relativePath: string, text: string): Promise<string> {
  const filepath = join(repoRoot, relativePath);
  const options = await prettier.resolveConfig(filepath);
  // Formatted as `npm run lint` wants it, so that the generated files pass prettier --check as they are.
  return prettier.format(text, { ...options, filepath });
}

/** What generate:deploy writes: the path under the repository of each file, and its text. */
export async function renderDeploy(): Promise<Map<string, string>> {
  const kustomize = ['helmMetadata=false'];
  const [base, withMetrics] = await Promise.all([
    helmTemplate(kustomize),
    helmTemplate([...kustomize, 'metrics.serviceMonitor.enabled=true']),
  ]);
  const documents = documentsBySource(base);
  for (const [source, docs] of documentsBySource(withMetrics)) {
    if (source.startsWith('templates/metrics/')) documents.set(source, docs);
  }
  const files = new Map<string, string>();
  for (const [source, docs] of documents) {
    const target = FILES[source];
    if (!target) throw new Error(`${source} has no file in deploy/: add it to FILES in scripts/generate-deploy.ts`);
    files.set(target, await format(target, `${HEADER}\n${docs.join('\n---\n')}\n`));
  }
  const missing = Object.entries(FILES).filter(([source]) => !documents.has(source));
  if (missing.length) throw new Error(`rendered nothing for ${missing.map(([s]) => s).join(', ')}`);
  const namespaceFile = 'deploy/controller/namespace.yaml';
  files.set(namespaceFile, await format(namespaceFile, `${HEADER}\n${NAMESPACE_FILE}`));
  return new Map([...files].sort(([a], [b]) => a.localeCompare(b)));
}

async function main(): Promise<void> {
  const files = await renderDeploy();
  let changed = 0;
  for (const [path, text] of files) {
    const before = await readFile(join(repoRoot, path), 'utf8').catch(() => undefined);
    if (before === text) continue;
    await writeFile(join(repoRoot, path), text);
    changed++;
    console.log(`wrote ${path}`);
  }
  console.log(`${files.size} files from charts/lws-temporal, ${changed} changed`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(`generate:deploy failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
