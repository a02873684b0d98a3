// `npm run temporal:up` / `temporal:down`: a production-shaped Temporal on loopback. PostgreSQL (the distribution's)
// with the two databases set up by temporal-sql-tool (docker/temporal/setup-schema.sh, as docker-compose.yml runs it),
// the four services as separate processes, the Web UI server, and the namespace with this project's search
// attributes (docker/temporal/setup-namespace.sh: the commands docs/install.md gives production users). Settings come
// from docker/temporal/temporal.env, which the compose file reads too. Idempotent; `down` leaves no process behind.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatDuration, type Logger } from '../../src/log.js';
import { binPath, repoRoot, stateDir } from './paths.js';
import {
  freePort,
  GiveUp,
  isAlive,
  SERVER_PORTS,
  spawnDaemon,
  stopProcessGroup,
  waitFor,
} from '../../src/dev-server/processes.js';
import { temporalSchemaDir, temporalUiDir } from './provision.js';
import { runCommand, StepError } from './run.js';

export const temporalClusterDir = join(stateDir, 'temporal-cluster');
const statePath = join(temporalClusterDir, 'state.json');
const SERVICES = ['history', 'matching', 'frontend', 'worker'] as const;
export type TemporalService = (typeof SERVICES)[number];

export interface TemporalClusterState {
  /** host:port of the frontend, for TEMPORAL_ADDRESS. */
  address: string;
  uiUrl: string;
  namespace: string;
  postgresPort: number;
  /** History shards: fixed once the cluster's data exists. */
  shards: number;
  ports: Record<string, number>;
  pids: Record<string, number>;
}

/** KEY=VALUE lines; `#` comments and blank lines skipped. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const at = trimmed.indexOf('=');
    if (at > 0) out[trimmed.slice(0, at)] = trimmed.slice(at + 1);
  }
  return out;
}

/** The distribution's PostgreSQL server binaries (Debian: /usr/lib/postgresql/<major>/bin), newest first. */
export function postgresBinDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.LWS_POSTGRES_BIN) return env.LWS_POSTGRES_BIN;
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root) ? readdirSync(root).filter((d) => /^[0-9]+$/.test(d)) : [];
  const major = majors.map(Number).sort((a, b) => b - a)[0];
  if (major === undefined || major < 12) {
    throw new StepError(
      'finding PostgreSQL',
      `ls ${root}`,
      'install PostgreSQL 12 or later (Debian: apt-get install postgresql-15; without root, any build of initdb, ' +
        'pg_ctl and psql), then set LWS_POSTGRES_BIN to the folder of its binaries if it is not under /usr/lib/postgresql',
    );
  }
  return join(root, String(major), 'bin');
}

/** initdb refuses root: as root, PostgreSQL runs as the `postgres` user, owner of its data folder. */
function asPostgres(cmd: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

async function readState(): Promise<TemporalClusterState | undefined> {
  try {
    return JSON.parse(await readFile(statePath, 'utf8')) as TemporalClusterState;
  } catch {
    return undefined;
  }
}

/** The processes of `state` that are gone (empty: the cluster is running). */
function gone(state: TemporalClusterState): string[] {
  return Object.entries(state.pids)
    .filter(([, pid]) => !isAlive(pid))
    .map(([name]) => name);
}

/**
 * As root, PostgreSQL runs as `postgres`, which may not be able to enter the checkout (a folder of mode 0700, say):
 * its data then lives under the system's temporary folder, one per checkout, owned by it.
 */
export function postgresDataDir(): string {
  if (process.getuid?.() !== 0) return join(temporalClusterDir, 'postgres');
  const checkout = createHash('sha1').update(temporalClusterDir).digest('hex').slice(0, 12);
  return join(tmpdir(), `lws-temporal-postgres-${checkout}`);
}

async function startPostgres(log: Logger, pgBin: string, port: number): Promise<number> {
  const data = postgresDataDir();
  const logFile = join(temporalClusterDir, 'postgres.log');
  if (!existsSync(join(data, 'PG_VERSION'))) {
    log.info('initialising PostgreSQL', { data });
    await mkdir(data, { recursive: true, mode: 0o700 });
    if (process.getuid?.() === 0) execFileSync('chown', ['-R', 'postgres:', data]);
    const [cmd, args] = asPostgres(join(pgBin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
    await runCommand(cmd, args, { cwd: data, step: 'initdb', hint: `see ${logFile}; delete ${data} to start over` });
  }
  const [cmd, args] = asPostgres(join(pgBin, 'postgres'), [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    data,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'max_connections=300',
  ]);
  const pid = spawnDaemon(cmd, args, logFile, process.env, data);
  await waitFor(
    `PostgreSQL on 127.0.0.1:${port}`,
    async () => {
      try {
        execFileSync(join(pgBin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
        return true;
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  return pid;
}

/** Something accepts TCP connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

function psql(pgBin: string, port: number, sql: string): void {
  execFileSync(
    join(pgBin, 'psql'),
    ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-v', 'ON_ERROR_STOP=1'],
    {
      input: sql,
      stdio: ['pipe', 'ignore', 'pipe'],
    },
  );
}

/** The role of docker/temporal/temporal.env, as the compose file's postgres image makes its POSTGRES_USER. */
function ensureRole(pgBin: string, port: number, user: string, password: string): void {
  psql(
    pgBin,
    port,
    `DO $$ BEGIN
       IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${user}') THEN
         CREATE ROLE "${user}" LOGIN CREATEDB PASSWORD '${password}';
       END IF;
     END $$;`,
  );
}

/** docker/temporal/temporal.env: the settings docker-compose.yml reads too. */
async function sharedSettings(): Promise<Record<string, string>> {
  return parseEnvFile(await readFile(join(repoRoot, 'docker', 'temporal', 'temporal.env'), 'utf8'));
}

/** What `temporal-server start` reads for one service of this cluster: the shared settings, then loopback ports. */
function serviceEnv(
  state: TemporalClusterState,
  service: TemporalService,
  shared: Record<string, string>,
): NodeJS.ProcessEnv {
  const p = state.ports;
  const ports = Object.fromEntries(
    SERVICES.flatMap((s) => [
      [`${s.toUpperCase()}_GRPC_PORT`, String(p[`${s}-grpc`])],
      [`${s.toUpperCase()}_MEMBERSHIP_PORT`, String(p[`${s}-membership`])],
    ]),
  );
  return {
    ...process.env,
    ...shared,
    ...ports,
    POSTGRES_SEEDS: '127.0.0.1',
    DB_PORT: String(state.postgresPort),
    BIND_ON_IP: '127.0.0.1',
    TEMPORAL_BROADCAST_ADDRESS: '127.0.0.1',
    // A state file from before the count was recorded: the cluster was started with the shared one.
    NUM_HISTORY_SHARDS: String(state.shards ?? shared['NUM_HISTORY_SHARDS']),
    DYNAMIC_CONFIG_FILE_PATH: join(repoRoot, 'docker', 'temporal', 'dynamicconfig.yaml'),
    FRONTEND_HTTP_PORT: String(p['frontend-http']),
    // The server's own metrics, among them `action`: what Temporal Cloud would bill (npm run actions).
    ...(p[`${service}-metrics`] ? { PROMETHEUS_ENDPOINT: `127.0.0.1:${p[`${service}-metrics`]}` } : {}),
    PUBLIC_FRONTEND_ADDRESS: `127.0.0.1:${p['frontend-grpc']}`,
  };
}

/** Starts one service (its log appended to) and waits until it listens. */
async function startService(
  state: TemporalClusterState,
  service: TemporalService,
  shared: Record<string, string>,
): Promise<void> {
  const pid = spawnDaemon(
    binPath('temporal-server'),
    ['start', '--service', service],
    join(temporalClusterDir, `${service}.log`),
    serviceEnv(state, service, shared),
    temporalClusterDir,
  );
  state.pids[service] = pid;
  await writeFile(statePath, JSON.stringify(state, null, 2));
  const port = state.ports[`${service}-grpc`]!;
  await waitFor(
    `the ${service} service listening on 127.0.0.1:${port}`,
    async () => {
      if (!isAlive(pid)) throw new GiveUp(`the ${service} service exited; see ${temporalClusterDir}/${service}.log`);
      return (await listening(port)) ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
}

function runningState(state: TemporalClusterState | undefined): TemporalClusterState {
  if (!state) throw new Error('no Temporal cluster is running here: start it with `npm run temporal:up`');
  return state;
}

/** kill -9 of one service of the running cluster, as a crashed node: no drain, no goodbye to its peers. */
export async function killTemporalService(service: TemporalService): Promise<void> {
  const state = runningState(await readState());
  const pid = state.pids[service];
  if (pid === undefined || !isAlive(pid)) return;
  process.kill(pid, 'SIGKILL');
  await waitFor(`the ${service} service (pid ${pid}) gone`, async () => (isAlive(pid) ? undefined : true), {
    timeoutMs: 10_000,
    intervalMs: 20,
  });
}

/** Starts one service of the running cluster again, on its ports (after killTemporalService). */
export async function startTemporalService(service: TemporalService): Promise<void> {
  const state = runningState(await readState());
  const pid = state.pids[service];
  if (pid !== undefined && isAlive(pid)) return;
  await startService(state, service, await sharedSettings());
}

/** Brings the cluster up, or confirms the one running. */
export async function temporalClusterUp(log: Logger, opts: { shards?: number } = {}): Promise<TemporalClusterState> {
  const started = Date.now();
  const before = await readState();
  const stopped = before && gone(before);
  if (before && stopped?.length === 0) {
    log.info('Temporal cluster is already up', { address: before.address, ui: before.uiUrl });
    return before;
  }
  if (before) {
    log.warn('Temporal cluster found with processes gone; starting it again', { gone: stopped?.join(', ') });
    await temporalClusterDown(log);
  }
  await mkdir(temporalClusterDir, { recursive: true });
  const shared = await sharedSettings();
  const pgBin = postgresBinDir();
  const postgresPort = await freePort(SERVER_PORTS);
  const pids: Record<string, number> = {};
  const state: TemporalClusterState = {
    address: '',
    uiUrl: '',
    namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    postgresPort,
    shards: opts.shards ?? Number(shared['NUM_HISTORY_SHARDS'] ?? 4),
    ports: {},
    pids,
  };
  try {
    log.info('starting PostgreSQL', { port: postgresPort, bin: pgBin });
    pids['postgres'] = await startPostgres(log, pgBin, postgresPort);
    await writeFile(statePath, JSON.stringify(state, null, 2));
    ensureRole(pgBin, postgresPort, shared['POSTGRES_USER'] ?? 'temporal', shared['POSTGRES_PWD'] ?? 'temporal');

    log.info('setting up the schemas (temporal-sql-tool)', { elapsed: formatDuration(Date.now() - started) });
    const toolsPath = `${join(stateDir, 'bin')}:${process.env.PATH ?? ''}`;
    await runCommand('sh', [join(repoRoot, 'docker', 'temporal', 'setup-schema.sh')], {
      env: {
        ...process.env,
        ...shared,
        PATH: toolsPath,
        POSTGRES_SEEDS: '127.0.0.1',
        DB_PORT: String(postgresPort),
        SQL_PASSWORD: shared['POSTGRES_PWD'] ?? 'temporal',
        SCHEMA_DIR: temporalSchemaDir(),
      },
      step: 'temporal-sql-tool: databases and schemas',
      hint: 'see the output above; `npm run temporal:down` and up again starts from the same data',
    });

    const perService = SERVICES.flatMap((s) => [`${s}-grpc`, `${s}-membership`, `${s}-metrics`]);
    for (const name of [...perService, 'frontend-http', 'ui']) {
      state.ports[name] = await freePort(SERVER_PORTS);
    }
    // One after the other: each service writes the cluster's metadata at its start, and concurrent writers lose
    // the optimistic version check and exit.
    for (const service of SERVICES) {
      log.info(`starting the ${service} service`, { elapsed: formatDuration(Date.now() - started) });
      await startService(state, service, shared);
    }
    state.address = `127.0.0.1:${state.ports['frontend-grpc']}`;
    await writeFile(statePath, JSON.stringify(state, null, 2));

    log.info('registering the namespace and search attributes', { address: state.address });
    await runCommand('sh', [join(repoRoot, 'docker', 'temporal', 'setup-namespace.sh')], {
      env: { ...process.env, PATH: toolsPath, TEMPORAL_ADDRESS: state.address, TEMPORAL_NAMESPACE: state.namespace },
      step: 'temporal operator: namespace and search attributes',
      hint: `see ${temporalClusterDir}/*.log`,
    });

    pids['ui'] = spawnDaemon(
      binPath('temporal-ui-server'),
      ['--root', temporalUiDir(), '--config', 'config', '--env', 'docker', 'start'],
      join(temporalClusterDir, 'ui.log'),
      {
        ...process.env,
        TEMPORAL_ADDRESS: state.address,
        TEMPORAL_UI_PORT: String(state.ports['ui']),
        TEMPORAL_BIND_ON_IP: '127.0.0.1',
      },
      temporalClusterDir,
    );
    state.uiUrl = `http://127.0.0.1:${state.ports['ui']}`;
    await writeFile(statePath, JSON.stringify(state, null, 2));
    await waitFor(
      `the Web UI at ${state.uiUrl}`,
      async () => ((await fetch(state.uiUrl).catch(() => undefined))?.ok ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 250 },
    );
  } catch (err) {
    await temporalClusterDown(log).catch(() => undefined);
    throw err;
  }
  log.info('Temporal cluster is up', {
    address: state.address,
    ui: state.uiUrl,
    took: formatDuration(Date.now() - started),
  });
  return state;
}

/** Stops every process it started (services, UI, PostgreSQL), newest first; the data folder stays. */
export async function temporalClusterDown(log: Logger, opts: { wipe?: boolean } = {}): Promise<void> {
  const state = await readState();
  if (state) {
    for (const name of ['ui', ...[...SERVICES].reverse(), 'postgres']) {
      const pid = state.pids[name];
      if (pid !== undefined) await stopProcessGroup(pid, name === 'postgres' ? 30_000 : 10_000);
    }
    await rm(statePath, { force: true });
    log.info('Temporal cluster stopped');
  }
  if (opts.wipe) {
    await rm(postgresDataDir(), { recursive: true, force: true });
    await rm(temporalClusterDir, { recursive: true, force: true });
  }
}

/** The Prometheus endpoints of the running cluster's services (none for a cluster started before they existed). */
export function temporalMetricsUrls(state: TemporalClusterState): string[] {
  return SERVICES.flatMap((s) => {
    const port = state.ports[`${s}-metrics`];
    return port ? [`http://127.0.0.1:${port}/metrics`] : [];
  });
}

export function readTemporalClusterState(): Promise<TemporalClusterState | undefined> {
  return readState();
}
