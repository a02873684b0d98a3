// The command line of `lws-temporal`: parsed with node:util parseArgs, checked before anything connects anywhere.
import { parseArgs } from 'node:util';
import { ConfigError } from '../config/temporal.js';
import type { ObjectKey } from '../model/index.js';

export const DEFAULT_UI_URL = 'http://localhost:8233';

export const USAGE = `Usage: lws-temporal <command> <namespace>/<name> [options]

Commands:
  status <namespace>/<name>    the LeaderWorkerSet (policy, replicas, conditions) and one row per group:
                               leader pod, phase, ready pods, worker StatefulSet, revision up to date
  history <namespace>/<name>   each group's rebuilds from Temporal visibility, newest first: when, why
                               (which pod, restart, deletion, recover, scale-down, ...), policy, backoff,
                               teardown and recovery times, restarts left, links to the runs in the Web UI

Options:
  --json             print JSON instead of a table
  --ui-url <url>     Temporal Web UI base URL for the links (default: $TEMPORAL_UI_URL, else ${DEFAULT_UI_URL})
  -h, --help         show this help

Environment:
  KUBECONFIG         the cluster (status); default ~/.kube/config, else in-cluster
  TEMPORAL_ADDRESS   the Temporal frontend (history); default localhost:7233, and as for the controller
                     TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS, TEMPORAL_TLS_CA_PATH, ...
  LWS_CLUSTER_NAME   the cluster whose runs history lists, as its controller names it; default the uid of
                     kube-system on the KUBECONFIG cluster, as the controller's default
`;

const COMMANDS = ['status', 'history'] as const;
export type CommandName = (typeof COMMANDS)[number];

const ALLOWED_OPTIONS = '--json, --ui-url <url>, -h/--help';

export type Command = { kind: 'help' } | { kind: CommandName; ref: ObjectKey; json: boolean; uiUrl?: string };

/** Bad command line: printed with a pointer to --help, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** `<namespace>/<name>`: a namespace (DNS label) and an LWS name (DNS subdomain), as Kubernetes allows them. */
export function parseRef(text: string, command: string): ObjectKey {
  const example = `e.g. \`lws-temporal ${command} default/demo\``;
  const parts = text.split('/');
  if (parts.length !== 2) {
    throw new UsageError(
      parts.length === 1
        ? `"${text}" has no namespace: ${command} takes <namespace>/<name>, ${example}`
        : `"${text}" is not <namespace>/<name>, ${example}`,
    );
  }
  const [namespace = '', name = ''] = parts;
  if (!(namespace.length <= 63 && DNS_LABEL.test(namespace))) {
    throw new UsageError(
      `"${namespace}" is not a namespace name (lowercase letters, digits and '-', at most 63), ${example}`,
    );
  }
  if (!(name.length <= 253 && DNS_SUBDOMAIN.test(name))) {
    throw new UsageError(
      `"${name}" is not a LeaderWorkerSet name (lowercase letters, digits, '-' and '.', at most 253), ${example}`,
    );
  }
  return { namespace, name };
}

/** The Web UI base URL: --ui-url, else TEMPORAL_UI_URL, else the dev server's. Only http(s) URLs. */
export function resolveUiUrl(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.TEMPORAL_UI_URL || undefined;
  const value = flag ?? fromEnv ?? DEFAULT_UI_URL;
  let ok: boolean;
  try {
    ok = ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    ok = false;
  }
  if (!ok) {
    const what = flag !== undefined ? `--ui-url ${value}` : `TEMPORAL_UI_URL=${value}`;
    const message = `${what}: expected an http(s) URL such as ${DEFAULT_UI_URL}`;
    throw flag !== undefined ? new UsageError(message) : new ConfigError(message);
  }
  return value.replace(/\/+$/, '');
}

export function parseCommandLine(argv: string[]): Command {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        json: { type: 'boolean' },
        'ui-url': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const option = /'([^']+)'/.exec(e.message ?? '')?.[1] ?? '';
      throw new UsageError(`unknown option ${option}: allowed are ${ALLOWED_OPTIONS}`);
    }
    throw new UsageError(`${e.message ?? String(err)} (allowed options: ${ALLOWED_OPTIONS})`);
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: 'help' };
  const [command, target, ...extra] = positionals;
  if (command === undefined) {
    throw new UsageError(`missing command: expected ${COMMANDS.join(' or ')} <namespace>/<name>`);
  }
  if (!(COMMANDS as readonly string[]).includes(command)) {
    throw new UsageError(`unknown command "${command}": expected ${COMMANDS.join(' or ')}`);
  }
  const kind = command as CommandName;
  if (target === undefined) {
    throw new UsageError(`${kind} needs <namespace>/<name>, e.g. \`lws-temporal ${kind} default/demo\``);
  }
  if (extra.length > 0) {
    throw new UsageError(`unexpected argument "${extra[0]}": ${kind} takes exactly one <namespace>/<name>`);
  }
  const ref = parseRef(target, kind);
  const uiUrl = values['ui-url'] === undefined ? undefined : resolveUiUrl(values['ui-url'], {});
  return { kind, ref, json: values.json ?? false, uiUrl };
}
