// `lws-temporal status|history <namespace>/<name> [--json]`: what the controller did to an LWS, for people.
// Exit codes: 0 done, 1 a failure to read (not found, unreachable, bad configuration), 2 a bad command line.
import { parseCommandLine, UsageError, USAGE, type Command } from './args.js';

function write(stream: NodeJS.WriteStream, text: string): Promise<void> {
  return new Promise((resolve) => stream.write(text, () => resolve()));
}

/** Each command loads its own clients only when it runs: --help and usage errors answer at once. */
async function run(command: Exclude<Command, { kind: 'help' }>): Promise<string> {
  const { formatStatus, toJson } = await import('./format.js');
  if (command.kind === 'status') {
    const { readStatus } = await import('./status.js');
    const report = await readStatus(command.ref);
    return command.json ? toJson(report) : formatStatus(report);
  }
  const [{ readHistory }, { formatRecoveryReport }] = await Promise.all([
    import('./history.js'),
    import('./recovery-report.js'),
  ]);
  const report = await readHistory(command.ref, command.uiUrl);
  return command.json ? toJson(report) : formatRecoveryReport(report);
}

async function main(argv: string[]): Promise<number> {
  let command: Command;
  try {
    command = parseCommandLine(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    await write(process.stderr, `lws-temporal: ${err.message}\nRun \`lws-temporal --help\` for usage.\n`);
    return 2;
  }
  if (command.kind === 'help') {
    await write(process.stdout, USAGE);
    return 0;
  }
  try {
    await write(process.stdout, await run(command));
    return 0;
  } catch (err) {
    await write(process.stderr, `lws-temporal: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

// Exit explicitly: keep-alive sockets to the API server would otherwise hold the process open for a while.
process.exit(await main(process.argv.slice(2)));
