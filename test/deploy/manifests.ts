// Reading the deployment files: every YAML document under deploy/, docker-compose.yml, the Dockerfile.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import yaml from 'js-yaml';
import { repoRoot } from '../../tools/stack/paths.js';

export const deployDir = join(repoRoot, 'deploy');

/** A Kubernetes object as loose JSON, with the file it came from. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
  file: string;
}

export function yamlFilesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** Every document of a YAML file (empty documents dropped). Throws with the file name on a parse error. */
export function loadYamlFile(file: string): unknown[] {
  const text = readFileSync(file, 'utf8');
  try {
    return yaml.loadAll(text).filter((d) => d !== null && d !== undefined);
  } catch (err) {
    throw new Error(`${relative(repoRoot, file)}: ${(err as Error).message}`, { cause: err });
  }
}

/** The Kubernetes objects of the files under deploy/ (kustomizations and components excluded). */
export function deployObjects(): Manifest[] {
  return yamlFilesUnder(deployDir)
    .filter((f) => !/kustomization\.ya?ml$/.test(f))
    .flatMap((file) => loadYamlFile(file).map((doc) => ({ ...(doc as Manifest), file: relative(repoRoot, file) })));
}

export function findObject(objects: Manifest[], kind: string, name: string): Manifest {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in deploy/`);
  return found;
}

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Container {
  name: string;
  image: string;
  args?: string[];
  command?: string[];
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
  }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  securityContext?: Record<string, unknown>;
  volumeMounts?: { name: string; mountPath: string }[];
}

export interface Probe {
  httpGet?: { path: string; port: number | string };
}

export interface PodSpec {
  serviceAccountName?: string;
  securityContext?: Record<string, unknown>;
  containers: Container[];
  volumes?: { name: string; secret?: { secretName: string; optional?: boolean }; emptyDir?: object }[];
}

export function podSpec(deployment: Manifest): PodSpec {
  return (deployment as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
}
