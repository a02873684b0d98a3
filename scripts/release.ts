// npm run release: the two release artifacts, into dist/release/ (gitignored):
//   lws-temporal-<version>.tgz   the Helm chart, packaged (`helm install lws-temporal <tgz>`, or `helm push` it to an
//                                OCI registry);
//   lws-temporal-<version>.yaml  one manifest of everything `kubectl apply -k deploy` installs: the chart rendered
//                                with its defaults, plus the namespace and the CRD (`kubectl apply --server-side -f`).
// It refuses to run while deploy/ differs from what the chart renders (npm run generate:deploy).
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { binPath, repoRoot } from '../tools/stack/paths.js';
import { chartDir, renderDeploy } from './generate-deploy.js';

const run = promisify(execFile);

export const releaseDir = join(repoRoot, 'dist', 'release');

/** The chart's version, which must be its appVersion and package.json's version: one version for everything. */
export async function releaseVersion(): Promise<string> {
  const chart = yaml.load(await readFile(join(chartDir, 'Chart.yaml'), 'utf8')) as {
    version: string;
    appVersion: string;
  };
  const pkg = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
  if (chart.version !== pkg.version || String(chart.appVersion) !== pkg.version) {
    throw new Error(
      `charts/lws-temporal/Chart.yaml has version ${chart.version} and appVersion ${chart.appVersion}, and ` +
        `package.json ${pkg.version}: set all three to the version being released`,
    );
  }
  return pkg.version;
}

/** The single-file manifest: what `kubectl kustomize deploy` renders, under a header that says how to apply it. */
export async function releaseManifest(version: string): Promise<string> {
  const { stdout } = await run(binPath('kubectl'), ['kustomize', join(repoRoot, 'deploy')], {
    cwd: repoRoot,
    maxBuffer: 64 << 20,
  });
  return (
    `# lws-temporal ${version}: the CRD, the namespace lws-temporal-system and the controller, as \`kubectl apply -k deploy\`\n` +
    `# installs them. Apply with: kubectl apply --server-side -f lws-temporal-${version}.yaml\n` +
    stdout
  );
}

/** Fails when a file of deploy/ is not what the chart renders now. */
async function checkDeployFresh(): Promise<void> {
  const stale: string[] = [];
  for (const [path, text] of await renderDeploy()) {
    const onDisk = await readFile(join(repoRoot, path), 'utf8').catch(() => '');
    if (onDisk !== text) stale.push(path);
  }
  if (stale.length) {
    throw new Error(`${stale.join(', ')} differ from what the chart renders: run \`npm run generate:deploy\` first`);
  }
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

async function main(): Promise<void> {
  const version = await releaseVersion();
  await checkDeployFresh();
  await mkdir(releaseDir, { recursive: true });
  await run(binPath('helm'), ['package', chartDir, '--destination', releaseDir], { cwd: repoRoot });
  const chart = join(releaseDir, `lws-temporal-${version}.tgz`);
  const manifest = join(releaseDir, `lws-temporal-${version}.yaml`);
  await writeFile(manifest, await releaseManifest(version));
  for (const file of [chart, manifest]) {
    console.log(`${relative(repoRoot, file)}  sha256 ${sha256(await readFile(file))}`);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    const detail = (err as { stderr?: string }).stderr?.trim();
    console.error(`release failed: ${detail || (err instanceof Error ? err.message : String(err))}`);
    process.exit(1);
  });
}
