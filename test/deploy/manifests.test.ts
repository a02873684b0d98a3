// The deployment files hold together: docker-compose.yml, the Dockerfile, .dockerignore and every YAML file under
// deploy/ parse, and what they reference (files, stages, services, ServiceAccounts, ConfigMap keys, ports, the
// image's entry points) exists. No Docker engine is needed; `docker compose config` runs only where the compose
// plugin is installed.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import type * as k8s from '@kubernetes/client-node';
import { MUTATE_LWS_PATH, MUTATE_POD_PATH } from '../../src/admission/server.js';
import { lwsWebhook, podWebhook } from '../../tools/stack/admission.js';
import { memorySettings } from '../../tools/stack/controller-processes.js';
import { parseEnvFile } from '../../tools/stack/temporal-cluster.js';
import { versions } from '../../tools/stack/versions.js';
import { repoRoot } from '../../tools/stack/paths.js';
import { workflowBundleFile } from '../../src/worker/run.js';
import { allSearchAttributes } from '../../src/workflows/search-attributes.js';
import {
  deployDir,
  deployObjects,
  findObject,
  loadYamlFile,
  podSpec,
  yamlFilesUnder,
  type Container,
  type Manifest,
} from './manifests.js';

const run = promisify(execFile);
const read = (file: string) => readFileSync(join(repoRoot, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  version: string;
  engines: { node: string };
  scripts: Record<string, string>;
};

// --- Dockerfile ------------------------------------------------------------------------------------------------------

interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

interface Stage {
  base: string;
  name?: string;
  instructions: Instruction[];
}

/** Instructions (continuation lines joined, comments dropped), grouped by stage; ARGs before FROM kept apart. */
function parseDockerfile(text: string): { globalArgs: Record<string, string>; stages: Stage[] } {
  const instructions: Instruction[] = [];
  let pending = '';
  let start = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) return;
    if (pending === '') start = i + 1;
    if (line.startsWith('#')) return;
    if (line.endsWith('\\')) {
      pending += line.slice(0, -1) + ' ';
      return;
    }
    const full = (pending + line).trim();
    pending = '';
    const match = /^(\S+)\s*(.*)$/.exec(full);
    if (match) instructions.push({ keyword: (match[1] ?? '').toUpperCase(), args: match[2] ?? '', line: start });
  });
  const globalArgs: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const ins of instructions) {
    if (ins.keyword === 'FROM') {
      const match = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      assert.ok(match, `Dockerfile:${ins.line}: cannot read FROM ${ins.args}`);
      const base = (match[1] ?? '').replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a, b) => globalArgs[a ?? b] ?? '');
      stages.push({ base, name: match[2], instructions: [] });
    } else if (stages.length === 0) {
      assert.equal(ins.keyword, 'ARG', `Dockerfile:${ins.line}: only ARG may precede the first FROM`);
      const [name = '', value = ''] = ins.args.split('=');
      globalArgs[name] = value;
    } else {
      stages.at(-1)?.instructions.push(ins);
    }
  }
  return { globalArgs, stages };
}

/** Sources and destination of a COPY (exec form or shell form), and its --from. */
function copyArgs(ins: Instruction): { from?: string; sources: string[]; dest: string } {
  const flags = [...ins.args.matchAll(/--(\w+)=(\S+)/g)];
  const rest = ins.args.replace(/--\w+=\S+\s*/g, '').trim();
  const parts = rest.startsWith('[') ? (JSON.parse(rest) as string[]) : rest.split(/\s+/);
  return {
    from: flags.find((f) => f[1] === 'from')?.[2],
    sources: parts.slice(0, -1),
    dest: parts.at(-1) ?? '',
  };
}

/**
 * Whether .dockerignore excludes a path: its patterns are paths, `*` within a segment and a `**\/` prefix; a `!`
 * pattern re-includes, and the last matching pattern wins, as in Docker.
 */
function dockerIgnored(path: string): boolean {
  const patterns = read('.dockerignore')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  let ignored = false;
  for (const line of patterns) {
    const negated = line.startsWith('!');
    const pattern = negated ? line.slice(1) : line;
    const anyDepth = pattern.startsWith('**/');
    const body = pattern
      .replace(/^\*\*\//, '')
      .replace(/\/$/, '')
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('[^/]*');
    if (new RegExp(`^${anyDepth ? '(.*/)?' : ''}${body}(/.*)?$`).test(path)) ignored = !negated;
  }
  return ignored;
}

function execForm(args: string): string[] {
  return JSON.parse(args) as string[];
}

describe('deployment files', function () {
  describe('Dockerfile and .dockerignore', () => {
    const { stages } = parseDockerfile(read('Dockerfile'));
    const final = stages.at(-1) as Stage;
    const named = (n: string) => stages.find((s) => s.name === n);

    it('has a build stage, a production-dependency stage and a runtime stage on a pinned Node.js 20 image', () => {
      assert.ok(stages.length >= 3, 'multi-stage');
      for (const stage of stages) {
        const match = /^node:(\d+)\.(\d+)\.(\d+)-[a-z]+(-slim)?$/.exec(stage.base);
        assert.ok(match, `stage ${stage.name}: base image ${stage.base} is not pinned to a Node.js release`);
        const [major, minor] = [Number(match[1]), Number(match[2])];
        // package.json engines: >=20.19.0 <21 || >=22.12.0
        assert.ok((major === 20 && minor >= 19) || (major === 22 && minor >= 12) || major > 22, stage.base);
      }
      assert.ok(pkg.engines.node.includes('20.19'), 'engines changed: revisit the base image check');
    });

    it('copies only files that exist in the repository and that .dockerignore lets through', () => {
      for (const stage of stages) {
        for (const ins of stage.instructions.filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD')) {
          assert.equal(ins.keyword, 'COPY', `Dockerfile:${ins.line}: use COPY`);
          const { from, sources } = copyArgs(ins);
          if (from !== undefined) {
            const index = stages.findIndex((s) => s.name === from);
            assert.ok(index >= 0 && index < stages.indexOf(stage), `Dockerfile:${ins.line}: no earlier stage ${from}`);
            continue;
          }
          for (const source of sources) {
            assert.ok(existsSync(join(repoRoot, source)), `Dockerfile:${ins.line}: ${source} does not exist`);
            assert.ok(!dockerIgnored(source.replace(/^\.\//, '').replace(/\/$/, '')), `${source} is in .dockerignore`);
          }
        }
      }
    });

    it('.dockerignore keeps local state, dependencies and the git history out of the build context', () => {
      for (const path of ['node_modules', 'src/node_modules', '.lws-temporal', '.git', 'dist', 'test']) {
        assert.ok(dockerIgnored(path), `${path} should be ignored`);
      }
      assert.ok(dockerIgnored('scripts/demo.ts'));
      for (const path of [
        'package.json',
        'package-lock.json',
        'tsconfig.json',
        'src',
        'docker/tsconfig.build.json',
        'scripts/build.ts',
      ]) {
        assert.ok(!dockerIgnored(path), `${path} is needed by the build`);
      }
    });

    it('installs production dependencies only into the runtime stage, and runs as a non-root uid', () => {
      const copied = final.instructions
        .filter((i) => i.keyword === 'COPY')
        .map(copyArgs)
        .filter((c) => c.from !== undefined);
      const modules = copied.find((c) => c.sources.some((s) => s.endsWith('node_modules')));
      assert.ok(modules?.from, 'the runtime stage copies node_modules from a stage');
      const depsStage = named(modules.from);
      assert.ok(
        depsStage?.instructions.some((i) => i.keyword === 'RUN' && /npm ci\b.*--omit=dev/.test(i.args)),
        `stage ${modules.from} runs npm ci --omit=dev`,
      );
      assert.ok(!final.instructions.some((i) => i.keyword === 'RUN' && /npm (ci|install)/.test(i.args)));
      const users = final.instructions.filter((i) => i.keyword === 'USER');
      const user = users.at(-1)?.args ?? '';
      assert.match(user, /^\d+(:\d+)?$/, 'USER numeric, so that Kubernetes can check runAsNonRoot');
      assert.notEqual(Number(user.split(':')[0]), 0, 'not root');
    });

    it('builds as npm run build does (scripts/build.ts) and starts the built worker (or trigger) with node, not tsx', () => {
      const build = stages.find((s) =>
        s.instructions.some((i) => i.keyword === 'RUN' && /\bscripts\/build\.ts\b/.test(i.args)),
      );
      assert.ok(build?.name, 'a stage runs scripts/build.ts');
      assert.equal(pkg.scripts.build, 'tsx scripts/build.ts', 'npm run build runs the same script');
      const copied = build.instructions.filter((i) => i.keyword === 'COPY').flatMap((i) => copyArgs(i).sources);
      assert.ok(copied.includes('scripts/build.ts'), 'the build stage copies the script it runs');
      const dist = final.instructions
        .filter((i) => i.keyword === 'COPY')
        .map(copyArgs)
        .find((c) => c.from === build.name);
      assert.deepEqual(dist?.sources, ['/app/dist'], 'the runtime stage copies dist/ from the build stage');
      const entrypoint = execForm(final.instructions.find((i) => i.keyword === 'ENTRYPOINT')?.args ?? '[]');
      const cmd = execForm(final.instructions.find((i) => i.keyword === 'CMD')?.args ?? '[]');
      assert.equal(entrypoint[0], 'node');
      assert.deepEqual(cmd, ['dist/worker/main.js']);
      assert.ok(!read('Dockerfile').match(/^(ENTRYPOINT|CMD).*tsx/m), 'tsx is a devDependency');
      const buildConfig = JSON.parse(read('docker/tsconfig.build.json')) as {
        compilerOptions: { rootDir: string; outDir: string };
        files: string[];
      };
      assert.equal(buildConfig.compilerOptions.rootDir, '../src');
      assert.equal(buildConfig.compilerOptions.outDir, '../dist');
      for (const file of buildConfig.files) assert.ok(existsSync(join(repoRoot, 'docker', file)), file);
      for (const entry of ['worker/main', 'trigger/main', 'workflows/index']) {
        assert.ok(buildConfig.files.includes(`../src/${entry}.ts`), `${entry} is compiled`);
      }
    });

    it('bundles the workflows in the build stage into dist/, where LWS_WORKFLOW_BUNDLE points the worker', () => {
      const build = stages.find((s) =>
        s.instructions.some((i) => i.keyword === 'RUN' && i.args.includes('scripts/build.ts')),
      );
      const buildRun = build?.instructions.find((i) => i.keyword === 'RUN' && i.args.includes('scripts/build.ts'));
      const outDir = /scripts\/build\.ts\s+(\S+)/.exec(buildRun?.args ?? '')?.[1];
      assert.equal(outDir, 'dist', 'built into dist/, which the runtime stage copies');
      const output = `${outDir}/${workflowBundleFile}`;
      const workdir = build?.instructions.filter((i) => i.keyword === 'WORKDIR').at(-1)?.args;
      const env = final.instructions
        .filter((i) => i.keyword === 'ENV')
        .map((i) => i.args)
        .join(' ');
      assert.match(env, new RegExp(`LWS_WORKFLOW_BUNDLE=${workdir}/${output}(\\s|$)`));
      assert.match(read('src/worker/run.ts'), /\bLWS_WORKFLOW_BUNDLE\b/, 'the worker reads LWS_WORKFLOW_BUNDLE');
    });

    it('sets the malloc settings the benchmark measures for every process (the heap limits are per Deployment)', () => {
      const env = final.instructions
        .filter((i) => i.keyword === 'ENV')
        .map((i) => i.args)
        .join(' ');
      for (const role of ['worker', 'trigger', 'main'] as const) {
        const { NODE_OPTIONS: _perProcess, ...malloc } = memorySettings[role];
        for (const [key, value] of Object.entries(malloc)) {
          assert.match(env, new RegExp(`(^|\\s)${key}=${value.replaceAll('.', '\\.')}(\\s|$)`), `${role}: ${key}`);
        }
      }
    });
  });

  describe('docker-compose.yml', () => {
    type Service = {
      image?: string;
      build?: { context: string; dockerfile: string };
      command?: string[];
      entrypoint?: string[];
      environment?: Record<string, string>;
      volumes?: string[];
      depends_on?: Record<string, { condition: string }>;
      healthcheck?: { test: string[] };
    };
    const compose = loadYamlFile(join(repoRoot, 'docker-compose.yml'))[0] as { services: Record<string, Service> };
    const services = compose.services;
    const names = Object.keys(services);
    /** `${VAR:-default}` -> default. */
    const defaults = (s: string) => s.replace(/\$\{\w+:-([^}]*)\}/g, '$1');

    it('runs PostgreSQL, the schema setup, the server, the Web UI, the namespace setup, the worker and the trigger', () => {
      assert.deepEqual(names.sort(), [
        'postgresql',
        'temporal',
        'temporal-schema',
        'temporal-setup',
        'temporal-ui',
        'trigger',
        'worker',
      ]);
    });

    it('pins every image to a version', () => {
      for (const [name, service] of Object.entries(services)) {
        const image = defaults(service.image ?? '');
        const tag = /:([^:/]+)$/.exec(image)?.[1];
        assert.ok(tag && tag !== 'latest' && /\d/.test(tag), `${name}: image ${image} is not pinned`);
      }
      const version = (name: string) => services[name]?.image?.split(':')[1];
      assert.equal(version('temporal-schema'), version('temporal'), 'admin-tools matches the server');
      assert.equal(version('temporal-setup'), version('temporal'), 'admin-tools matches the server');
      assert.equal(defaults(services.worker?.image ?? ''), `ghcr.io/lws-temporal/lws-temporal:${pkg.version}`);
    });

    it('runs the server and its schema setup from docker/temporal/temporal.env, the settings temporal:up reads', () => {
      const env = parseEnvFile(readFileSync(join(repoRoot, 'docker', 'temporal', 'temporal.env'), 'utf8'));
      for (const name of ['temporal', 'temporal-schema']) {
        assert.equal((services[name] as { env_file?: string }).env_file, 'docker/temporal/temporal.env', name);
      }
      assert.equal(env['DB'], 'postgres12');
      assert.equal(services.temporal?.image, `temporalio/server:${versions.temporalServer}`);
      assert.equal(services['temporal-ui']?.image, `temporalio/ui:${versions.temporalUi}`);
      // The dynamic config the server's template requires: the mounted folder holds the file the env file names.
      const mount = services.temporal?.volumes?.find((v) => v.startsWith('./docker/temporal:'))?.split(':')[1];
      assert.ok(mount && env['DYNAMIC_CONFIG_FILE_PATH']?.startsWith(`${mount}/`), 'the dynamic config is mounted');
      const file = env['DYNAMIC_CONFIG_FILE_PATH']!.slice(mount.length + 1);
      assert.ok(existsSync(join(repoRoot, 'docker', 'temporal', file)), `docker/temporal/${file} exists`);
    });

    it('builds the worker and the trigger from the Dockerfile and runs the compiled entry points', () => {
      for (const name of ['worker', 'trigger']) {
        const service = services[name] as Service;
        assert.ok(service.build, `${name} is built`);
        assert.ok(statSync(join(repoRoot, service.build.context)).isDirectory());
        assert.ok(existsSync(join(repoRoot, service.build.context, service.build.dockerfile)));
        assert.deepEqual(service.command, [`dist/${name}/main.js`]);
        assert.ok(existsSync(join(repoRoot, `src/${name}/main.ts`)), `dist/${name}/main.js is compiled from it`);
      }
    });

    it('mounts the kubeconfig read-only at KUBECONFIG=/kube/config and points at the temporal service', () => {
      for (const name of ['worker', 'trigger']) {
        const service = services[name] as Service;
        assert.ok(service.volumes?.includes('${KUBECONFIG_HOST_PATH:-~/.kube/config}:/kube/config:ro'), name);
        assert.equal(service.environment?.KUBECONFIG, '/kube/config');
        const [host, port] = (service.environment?.TEMPORAL_ADDRESS ?? '').split(':');
        assert.ok(host && names.includes(host), `${name}: TEMPORAL_ADDRESS names a service`);
        assert.equal(port, '7233');
        assert.equal(service.environment?.METRICS_PORT, '9464');
        assert.match(service.healthcheck?.test.join(' ') ?? '', /127\.0\.0\.1:9464\/healthz/);
      }
    });

    it('bind-mounts only directories of the repository, and runs scripts that are in them', () => {
      for (const [name, service] of Object.entries(services)) {
        const binds = (service.volumes ?? []).map((v) => v.split(':')).filter(([source]) => source?.startsWith('./'));
        for (const [source = '', target = ''] of binds) {
          assert.ok(existsSync(join(repoRoot, source)), `${name}: ${source} does not exist`);
          const script = [...(service.entrypoint ?? []), ...(service.command ?? [])].find((a) => a.startsWith(target));
          if (script) {
            const file = join(repoRoot, source, relative(target, script));
            assert.ok(existsSync(file), `${name}: ${script} is ${relative(repoRoot, file)}, which does not exist`);
          }
        }
      }
    });

    it('starts in order: database, schema, server, namespace and search attributes, then worker and trigger', () => {
      const waitsFor = (name: string) => services[name]?.depends_on ?? {};
      assert.deepEqual(waitsFor('temporal-schema'), { postgresql: { condition: 'service_healthy' } });
      assert.deepEqual(waitsFor('temporal'), { 'temporal-schema': { condition: 'service_completed_successfully' } });
      assert.deepEqual(waitsFor('temporal-setup'), { temporal: { condition: 'service_healthy' } });
      assert.deepEqual(waitsFor('temporal-ui'), { temporal: { condition: 'service_healthy' } });
      for (const name of ['worker', 'trigger']) {
        assert.deepEqual(waitsFor(name), { 'temporal-setup': { condition: 'service_completed_successfully' } });
      }
      for (const [name, service] of Object.entries(services)) {
        for (const [dep, { condition }] of Object.entries(service.depends_on ?? {})) {
          if (condition === 'service_healthy')
            assert.ok(services[dep]?.healthcheck, `${name} waits on ${dep}'s health`);
        }
      }
    });

    it('its setup scripts are valid POSIX shell', async () => {
      const dir = join(repoRoot, 'docker/temporal');
      for (const script of readdirSync(dir).filter((f) => f.endsWith('.sh'))) {
        await run('sh', ['-n', join(dir, script)]);
      }
    });

    it('registers exactly the search attributes the workflows set', () => {
      const script = read('docker/temporal/setup-namespace.sh');
      const pairs = /for pair in ([^;]+);/.exec(script)?.[1]?.trim().split(/\s+/) ?? [];
      const typeName = (t: string) => (t === 'INT' ? 'Int' : t === 'KEYWORD' ? 'Keyword' : t);
      assert.deepEqual(pairs.sort(), allSearchAttributes.map((k) => `${k.name}:${typeName(k.type)}`).sort());
      assert.match(script, /temporal operator search-attribute create/);
    });

    it('is valid for `docker compose config`', async function () {
      this.timeout(60_000);
      const version = await run('docker', ['compose', 'version']).catch(() => undefined);
      if (!version) {
        // The only skipped check: it needs the Docker CLI's compose plugin, which this machine lacks.
        console.log('      (skipped: `docker compose version` fails here: no Docker CLI with the compose plugin)');
        this.skip();
      }
      await run('docker', ['compose', '-f', 'docker-compose.yml', 'config', '--quiet'], {
        cwd: repoRoot,
        env: { ...process.env, KUBECONFIG_HOST_PATH: join(repoRoot, 'package.json') },
      });
    });
  });

  describe('deploy/', () => {
    let objects: Manifest[];
    before(() => {
      objects = deployObjects();
    });

    it('every YAML file parses and every document is a Kubernetes object', () => {
      for (const file of yamlFilesUnder(deployDir)) {
        for (const doc of loadYamlFile(file)) {
          const obj = doc as { apiVersion?: string; kind?: string; metadata?: { name?: string } };
          assert.ok(obj.apiVersion && obj.kind, `${relative(repoRoot, file)}: a document without apiVersion/kind`);
          if (!/kustomization\.ya?ml$/.test(file)) assert.ok(obj.metadata?.name, `${file}: a ${obj.kind} without name`);
        }
      }
    });

    it('every kustomization lists files that exist, and every object file is in one', () => {
      const listed = new Set<string>();
      for (const file of yamlFilesUnder(deployDir).filter((f) => /kustomization\.ya?ml$/.test(f))) {
        const k = loadYamlFile(file)[0] as { resources?: string[]; components?: string[] };
        for (const entry of [...(k.resources ?? []), ...(k.components ?? [])]) {
          const path = join(dirname(file), entry);
          assert.ok(existsSync(path), `${relative(repoRoot, file)}: ${entry} does not exist`);
          if (statSync(path).isDirectory()) {
            assert.ok(
              readdirSync(path).some((f) => /^kustomization\.ya?ml$/.test(f)),
              `${relative(repoRoot, file)}: ${entry} has no kustomization`,
            );
          }
          listed.add(path);
        }
      }
      for (const file of yamlFilesUnder(deployDir).filter((f) => !/kustomization\.ya?ml$/.test(f))) {
        assert.ok(listed.has(file), `${relative(repoRoot, file)} is in no kustomization`);
      }
      const root = loadYamlFile(join(deployDir, 'kustomization.yaml'))[0] as {
        resources: string[];
        images: { name: string; newTag: string }[];
      };
      assert.ok(root.resources.includes('crd'), 'deploy/ includes the CRD');
      assert.deepEqual(root.images, [{ name: 'ghcr.io/lws-temporal/lws-temporal', newTag: pkg.version }]);
    });

    it('namespaced objects live in lws-temporal-system, which deploy/ creates', () => {
      findObject(objects, 'Namespace', 'lws-temporal-system');
      const namespaced = [
        'ServiceAccount',
        'ConfigMap',
        'Deployment',
        'Service',
        'Role',
        'RoleBinding',
        'PodDisruptionBudget',
      ];
      for (const o of objects.filter((o) => namespaced.includes(o.kind))) {
        assert.equal(o.metadata.namespace, 'lws-temporal-system', `${o.kind} ${o.metadata.name}`);
      }
    });

    describe('Deployments', () => {
      const container = (name: string): Container => {
        const spec = podSpec(findObject(objects, 'Deployment', `lws-temporal-${name}`));
        assert.equal(spec.containers.length, 1);
        return spec.containers[0] as Container;
      };

      for (const name of ['worker', 'trigger']) {
        it(`${name}: runs the image's compiled ${name} as its own ServiceAccount`, () => {
          const spec = podSpec(findObject(objects, 'Deployment', `lws-temporal-${name}`));
          findObject(objects, 'ServiceAccount', spec.serviceAccountName ?? '(none)');
          const c = container(name);
          assert.equal(c.image, `ghcr.io/lws-temporal/lws-temporal:${pkg.version}`);
          assert.deepEqual(c.args, [`dist/${name}/main.js`]);
          assert.equal(c.command, undefined, 'the image entrypoint (node) stays');
        });

        it(`${name}: reads the ConfigMap, and optional Secrets for the API key and the TLS files`, () => {
          const c = container(name);
          const spec = podSpec(findObject(objects, 'Deployment', `lws-temporal-${name}`));
          const refs = (c.envFrom ?? []).map((e) => e.configMapRef?.name);
          assert.deepEqual(refs, ['lws-temporal-config']);
          const data = (
            findObject(objects, 'ConfigMap', 'lws-temporal-config') as unknown as { data: Record<string, string> }
          ).data;
          for (const key of ['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE']) {
            assert.ok(data[key], `ConfigMap key ${key}`);
          }
          // Present and empty: each cluster gets its own name and task queue unless the operator sets them.
          for (const key of ['LWS_CLUSTER_NAME', 'TEMPORAL_TASK_QUEUE']) {
            assert.equal(data[key], '', `ConfigMap key ${key}`);
          }
          // The API key as a file of an optional Secret, followed for rotation; never an environment value.
          assert.equal(
            c.env?.find((e) => e.name === 'TEMPORAL_API_KEY'),
            undefined,
          );
          const apiKey = spec.volumes?.find((v) => v.secret?.secretName === 'lws-temporal-api-key');
          assert.equal(apiKey?.secret?.optional, true);
          const apiKeyMount = c.volumeMounts?.find((m) => m.name === apiKey?.name);
          assert.equal(
            `${apiKeyMount?.mountPath}/api-key`,
            c.env?.find((e) => e.name === 'TEMPORAL_API_KEY_PATH')?.value,
          );
          const tls = spec.volumes?.find((v) => v.secret?.secretName === 'lws-temporal-tls');
          assert.equal(tls?.secret?.optional, true);
          const mount = c.volumeMounts?.find((m) => m.name === tls?.name);
          assert.equal(mount?.mountPath, '/etc/lws-temporal/tls');
          const keys = spec.volumes?.find((v) => v.secret?.secretName === 'lws-temporal-payload-keys');
          assert.equal(keys?.secret?.optional, true);
          const keysMount = c.volumeMounts?.find((m) => m.name === keys?.name);
          assert.equal(keysMount?.mountPath, c.env?.find((e) => e.name === 'LWS_PAYLOAD_KEYS_DIR')?.value);
        });

        it(`${name}: two replicas, spread over nodes, one kept through a drain and a rollout`, () => {
          const deployment = findObject(objects, 'Deployment', `lws-temporal-${name}`) as unknown as {
            spec: {
              replicas: number;
              strategy: { rollingUpdate: object };
              template: {
                metadata: { labels: Record<string, string> };
                spec: { topologySpreadConstraints?: { topologyKey: string }[] };
              };
            };
          };
          assert.equal(deployment.spec.replicas, 2);
          assert.deepEqual(deployment.spec.strategy.rollingUpdate, { maxUnavailable: 0, maxSurge: 1 });
          assert.equal(
            deployment.spec.template.spec.topologySpreadConstraints?.[0]?.topologyKey,
            'kubernetes.io/hostname',
          );
          const pdb = findObject(objects, 'PodDisruptionBudget', `lws-temporal-${name}`) as unknown as {
            spec: { minAvailable: number; selector: { matchLabels: Record<string, string> } };
          };
          assert.equal(pdb.spec.minAvailable, 1);
          for (const [key, value] of Object.entries(pdb.spec.selector.matchLabels)) {
            assert.equal(deployment.spec.template.metadata.labels[key], value, `the budget selects the pods by ${key}`);
          }
        });

        it(`${name}: probes GET /healthz on METRICS_PORT 9464`, () => {
          const c = container(name);
          const port = c.ports?.find((p) => p.name === 'metrics');
          assert.equal(port?.containerPort, 9464);
          assert.equal(c.env?.find((e) => e.name === 'METRICS_PORT')?.value, String(port?.containerPort));
          for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
            assert.deepEqual(probe?.httpGet, { path: '/healthz', port: 'metrics' });
          }
        });

        it(`${name}: runs with the memory settings the benchmark measures, a heap limit inside its memory limit`, () => {
          const c = container(name);
          const role = name as keyof typeof memorySettings;
          for (const [key, value] of Object.entries(memorySettings[role])) {
            assert.equal(c.env?.find((e) => e.name === key)?.value, value, key);
          }
          const heapMb = Number(/--max-old-space-size=(\d+)/.exec(memorySettings[role].NODE_OPTIONS)?.[1]);
          const limit = /^(\d+)(Mi|Gi)$/.exec(c.resources?.limits?.memory ?? '');
          assert.ok(limit, `memory limit ${c.resources?.limits?.memory} in Mi or Gi`);
          const limitMb = Number(limit[1]) * (limit[2] === 'Gi' ? 1024 : 1);
          // The rest of the process (code, the Temporal core, buffers, a workflow thread) needs room beside the heap.
          assert.ok(heapMb > 0 && heapMb <= limitMb / 2, `heap ${heapMb} MB within half the limit ${limitMb} MB`);
        });

        it(`${name}: has requests and limits, and a restricted security context matching the image's user`, () => {
          const c = container(name);
          for (const kind of ['requests', 'limits'] as const) {
            assert.ok(c.resources?.[kind]?.cpu && c.resources[kind].memory, `${kind}`);
          }
          const spec = podSpec(findObject(objects, 'Deployment', `lws-temporal-${name}`));
          const imageUser = /^USER\s+(\d+)/m.exec(read('Dockerfile'))?.[1];
          assert.equal(spec.securityContext?.runAsNonRoot, true);
          assert.equal(String(spec.securityContext?.runAsUser), imageUser);
          assert.deepEqual(spec.securityContext?.seccompProfile, { type: 'RuntimeDefault' });
          assert.deepEqual(c.securityContext, {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
          });
          assert.ok(
            c.volumeMounts?.some((m) => m.mountPath === '/tmp'),
            'a writable /tmp',
          );
        });
      }

      it('every ConfigMap key is a variable the code reads', () => {
        const data = (
          findObject(objects, 'ConfigMap', 'lws-temporal-config') as unknown as { data: Record<string, string> }
        ).data;
        const sources = [
          'src/config/cluster.ts',
          'src/config/temporal.ts',
          'src/config/kubernetes.ts',
          'src/config/payload-codec.ts',
          'src/log.ts',
        ]
          .map(read)
          .join('\n');
        for (const key of Object.keys(data)) {
          assert.match(sources, new RegExp(`\\b${key}\\b`), `${key} is read by no configuration code`);
        }
      });

      describe('the admission webhook (deploy/admission)', () => {
        type Webhook = k8s.V1MutatingWebhook & { clientConfig: { service?: { port?: number } } };
        const deployment = () => findObject(objects, 'Deployment', 'lws-temporal-admission');
        const spec = () => podSpec(deployment());
        const c = () => spec().containers[0] as Container;
        const env = (name: string) => c().env?.find((e) => e.name === name)?.value;
        const service = () =>
          findObject(objects, 'Service', 'lws-temporal-admission') as unknown as {
            metadata: { name: string; namespace: string };
            spec: { selector: Record<string, string>; ports: { port: number; targetPort: string }[] };
          };
        const configuration = () =>
          findObject(
            objects,
            'MutatingWebhookConfiguration',
            env('ADMISSION_WEBHOOK_CONFIGURATION') ?? '',
          ) as unknown as {
            webhooks: Webhook[];
          };
        const templateLabels = () =>
          (deployment() as unknown as { spec: { template: { metadata: { labels: Record<string, string> } } } }).spec
            .template.metadata.labels;

        it("runs the image's compiled webhook, two replicas, as its own ServiceAccount", () => {
          assert.equal(c().image, `ghcr.io/lws-temporal/lws-temporal:${pkg.version}`);
          assert.deepEqual(c().args, ['dist/admission/main.js']);
          assert.equal(c().command, undefined);
          assert.ok(existsSync(join(repoRoot, 'src/admission/main.ts')), 'dist/admission/main.js is compiled from it');
          assert.equal(pkg.scripts.admission, 'tsx src/admission/main.ts');
          assert.equal((deployment() as unknown as { spec: { replicas: number } }).spec.replicas, 2);
          findObject(objects, 'ServiceAccount', spec().serviceAccountName ?? '(none)');
        });

        it('sets only variables the code reads, and keeps its certificate in a Secret of its own', () => {
          const config = read('src/config/admission.ts') + read('src/log.ts');
          for (const { name } of c().env ?? []) {
            if (name === 'NODE_OPTIONS') continue;
            assert.match(config, new RegExp(`\\b${name}\\b`), `${name} is read by no configuration code`);
          }
          assert.equal(env('ADMISSION_CERT_DIR'), undefined);
          assert.ok(env('ADMISSION_CERT_SECRET'));
          assert.equal(env('ADMISSION_SERVICE'), service().metadata.name);
          const podNamespace = c().env?.find((e) => e.name === 'POD_NAMESPACE') as unknown as {
            valueFrom: { fieldRef: { fieldPath: string } };
          };
          assert.equal(podNamespace.valueFrom.fieldRef.fieldPath, 'metadata.namespace');
          const heapMb = Number(/--max-old-space-size=(\d+)/.exec(env('NODE_OPTIONS') ?? '')?.[1]);
          assert.ok(heapMb > 0 && heapMb <= 256 / 2, 'a heap limit within half the memory limit');
          assert.equal(c().resources?.limits?.memory, '256Mi');
        });

        it('listens on ADMISSION_PORT, which the Service sends 443 to, and probes /healthz over HTTPS', () => {
          const port = c().ports?.find((p) => p.name === 'webhook');
          assert.equal(String(port?.containerPort), env('ADMISSION_PORT'));
          assert.deepEqual(
            service().spec.ports.map((p) => [p.port, p.targetPort]),
            [[443, 'webhook']],
          );
          for (const [key, value] of Object.entries(service().spec.selector)) {
            assert.equal(templateLabels()[key], value, `the Service selects the pods by ${key}`);
          }
          for (const probe of [c().readinessProbe, c().livenessProbe, c().startupProbe]) {
            assert.deepEqual(probe?.httpGet, { path: '/healthz', port: 'webhook', scheme: 'HTTPS' });
          }
        });

        it('its configuration calls the Service at the webhook paths, without a caBundle (the process sets it)', () => {
          const webhooks = configuration().webhooks;
          assert.deepEqual(
            webhooks.map((w) => w.clientConfig),
            [MUTATE_POD_PATH, MUTATE_LWS_PATH].map((path) => ({
              service: {
                name: service().metadata.name,
                namespace: service().metadata.namespace,
                path,
                port: service().spec.ports[0]?.port,
              },
            })),
          );
        });

        it('has the same webhooks as the local stack registers (LWS pod CREATEs, LWS writes; both Fail)', () => {
          const [pods, lws, ...others] = configuration().webhooks;
          assert.equal(others.length, 0);
          assert.deepEqual({ ...pods, clientConfig: {} }, podWebhook({}));
          assert.deepEqual({ ...lws, clientConfig: {} }, lwsWebhook({}));
        });

        it('keeps a replica through a drain (PodDisruptionBudget) and through a rollout', () => {
          const pdb = findObject(objects, 'PodDisruptionBudget', 'lws-temporal-admission') as unknown as {
            spec: { minAvailable: number; selector: { matchLabels: Record<string, string> } };
          };
          assert.equal(pdb.spec.minAvailable, 1);
          for (const [key, value] of Object.entries(pdb.spec.selector.matchLabels)) {
            assert.equal(templateLabels()[key], value);
          }
          const strategy = (deployment() as unknown as { spec: { strategy: { rollingUpdate: object } } }).spec.strategy;
          assert.deepEqual(strategy.rollingUpdate, { maxUnavailable: 0, maxSurge: 1 });
        });

        it('has requests and limits, and the restricted security context of the other Deployments', () => {
          for (const kind of ['requests', 'limits'] as const) {
            assert.ok(c().resources?.[kind]?.cpu && c().resources?.[kind]?.memory, kind);
          }
          const worker = podSpec(findObject(objects, 'Deployment', 'lws-temporal-worker'));
          assert.deepEqual(spec().securityContext, worker.securityContext);
          assert.deepEqual(c().securityContext, worker.containers[0]?.securityContext);
          assert.ok(c().volumeMounts?.some((m) => m.mountPath === '/tmp'));
        });
      });

      it('the prometheus component: a metrics Service per process on its named metrics port, one ServiceMonitor over them', () => {
        const dir = join(deployDir, 'components/prometheus');
        const services = loadYamlFile(join(dir, 'services.yaml')) as unknown as k8s.V1Service[];
        const [monitor] = loadYamlFile(join(dir, 'servicemonitor.yaml')) as unknown as {
          kind: string;
          spec: { selector: { matchLabels: Record<string, string> }; endpoints: { port: string; path: string }[] };
        }[];
        assert.deepEqual(
          services.map((svc) => svc.metadata?.name),
          ['worker', 'trigger', 'admission'].map((p) => `lws-temporal-${p}-metrics`),
        );
        for (const svc of services) {
          const deployment = objects.find(
            (o) =>
              o.kind === 'Deployment' &&
              Object.entries(svc.spec!.selector!).every(
                ([k, v]) =>
                  (o as unknown as { spec: { template: { metadata: { labels: Record<string, string> } } } }).spec
                    .template.metadata.labels[k] === v,
              ),
          );
          assert.ok(deployment, `${svc.metadata?.name}: selects a Deployment's pods`);
          const port = podSpec(deployment).containers[0]?.ports?.find((p) => p.name === 'metrics');
          assert.ok(port, `${deployment.metadata.name}: a container port named metrics`);
          assert.equal(svc.spec?.ports?.[0]?.targetPort, 'metrics');
          for (const servicePort of svc.spec?.ports ?? []) {
            const named = podSpec(deployment).containers[0]?.ports?.some((p) => p.name === servicePort.targetPort);
            assert.ok(named, `${svc.metadata?.name}: ${servicePort.name} targets a container port`);
          }
          assert.equal(svc.metadata?.namespace, deployment.metadata.namespace);
          for (const [k, v] of Object.entries(monitor!.spec.selector.matchLabels)) {
            assert.equal(svc.metadata?.labels?.[k], v, `${svc.metadata?.name}: selected by the ServiceMonitor`);
          }
        }
        assert.equal(monitor!.kind, 'ServiceMonitor');
        assert.deepEqual(
          monitor!.spec.endpoints.map((e) => [e.port, e.path]),
          [
            ['metrics', '/metrics'],
            ['sdk-metrics', '/metrics'],
          ],
        );
        // The SDK's endpoint (the dashboard's Temporal SDK row) is the worker's, on the port its Service names.
        const worker = podSpec(findObject(objects, 'Deployment', 'lws-temporal-worker')).containers[0]!;
        const sdkPort = worker.ports?.find((p) => p.name === 'sdk-metrics')?.containerPort;
        assert.equal(worker.env?.find((e) => e.name === 'TEMPORAL_METRICS_PORT')?.value, String(sdkPort));
        assert.deepEqual(
          services
            .filter((svc) => svc.spec?.ports?.some((p) => p.name === 'sdk-metrics'))
            .map((svc) => svc.metadata?.name),
          ['lws-temporal-worker-metrics'],
        );
      });

      // Temporal Cloud's mTLS has no private CA: the client certificate alone, the server verified by the system CAs.
      const components: [string, [string, string][]][] = [
        [
          'temporal-mtls',
          [
            ['TEMPORAL_TLS_CERT_PATH', 'tls.crt'],
            ['TEMPORAL_TLS_KEY_PATH', 'tls.key'],
          ],
        ],
        ['temporal-private-ca', [['TEMPORAL_TLS_CA_PATH', 'ca.crt']]],
      ];
      for (const [name, paths] of components) {
        it(`the component ${name} points exactly ${paths.map(([k]) => k).join(', ')} at the mounted Secret`, () => {
          const component = loadYamlFile(join(deployDir, `components/${name}/kustomization.yaml`))[0] as {
            patches: { patch: string }[];
          };
          const patch = component.patches.map((p) => p.patch).join('\n');
          for (const [key, file] of paths) {
            assert.match(patch, new RegExp(`/data/${key}\\s+value: /etc/lws-temporal/tls/${file.replace('.', '\\.')}`));
          }
          assert.equal([...patch.matchAll(/op: replace/g)].length, paths.length, 'no other key');
        });
      }
    });
  });
});
