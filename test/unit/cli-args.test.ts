import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { ConfigError } from '../../src/config/temporal.js';
import { DEFAULT_UI_URL, parseCommandLine, resolveUiUrl, UsageError } from '../../src/cli/args.js';

/** Asserts a UsageError whose message contains every one of `parts`. */
function rejects(argv: string[], ...parts: string[]): void {
  assert.throws(
    () => parseCommandLine(argv),
    (err: unknown) => {
      assert.ok(err instanceof UsageError, `expected a UsageError, got ${String(err)}`);
      for (const p of parts) assert.ok(err.message.includes(p), `"${err.message}" lacks "${p}"`);
      return true;
    },
  );
}

describe('cli/args: parseCommandLine', () => {
  it('status and history take <namespace>/<name>', () => {
    assert.deepEqual(parseCommandLine(['status', 'default/demo']), {
      kind: 'status',
      ref: { namespace: 'default', name: 'demo' },
      json: false,
      uiUrl: undefined,
    });
    assert.deepEqual(parseCommandLine(['history', 'e2e-x/my.lws-1', '--json', '--ui-url', 'https://ui.example/']), {
      kind: 'history',
      ref: { namespace: 'e2e-x', name: 'my.lws-1' },
      json: true,
      uiUrl: 'https://ui.example',
    });
  });

  it('options may come first, and --ui-url=<url> works too', () => {
    assert.deepEqual(parseCommandLine(['--json', 'history', 'a/b', '--ui-url=http://h:1']), {
      kind: 'history',
      ref: { namespace: 'a', name: 'b' },
      json: true,
      uiUrl: 'http://h:1',
    });
  });

  it('--help and -h win over everything else', () => {
    assert.deepEqual(parseCommandLine(['--help']), { kind: 'help' });
    assert.deepEqual(parseCommandLine(['status', '-h']), { kind: 'help' });
    assert.deepEqual(parseCommandLine(['frob', '--help']), { kind: 'help' });
  });

  it('no command names the commands', () => rejects([], 'missing command', 'status', 'history'));
  it('an unknown command names the commands', () =>
    rejects(['get', 'a/b'], 'unknown command "get"', 'status or history'));
  it('a command without its target', () => rejects(['history'], 'history needs <namespace>/<name>'));
  it('a name without a namespace', () => rejects(['status', 'demo'], '"demo" has no namespace', '<namespace>/<name>'));
  it('too many slashes', () => rejects(['status', 'a/b/c'], 'is not <namespace>/<name>'));
  it('an empty namespace', () => rejects(['status', '/demo'], 'is not a namespace name'));
  it('an invalid name', () => rejects(['status', 'default/Demo'], '"Demo" is not a LeaderWorkerSet name'));
  it('quotes cannot reach the visibility query', () =>
    rejects(['history', 'default/a"b'], 'is not a LeaderWorkerSet name'));
  it('a too long namespace', () => rejects(['status', `${'n'.repeat(64)}/demo`], 'at most 63'));
  it('an extra argument', () => rejects(['status', 'a/b', 'c'], 'unexpected argument "c"'));
  it('an unknown flag names the allowed ones', () =>
    rejects(['status', 'a/b', '--watch'], 'unknown option --watch', '--json', '--ui-url', '--help'));
  it('an unknown short flag', () => rejects(['-x', 'status', 'a/b'], 'unknown option -x'));
  it('--ui-url without a value', () => rejects(['history', 'a/b', '--ui-url'], '--ui-url', 'allowed options'));
  it('--json with a value', () => rejects(['status', 'a/b', '--json=yes'], '--json'));
  it('--ui-url that is not http(s)', () => rejects(['history', 'a/b', '--ui-url', 'localhost:8233'], 'http(s) URL'));
});

describe('cli/args: resolveUiUrl', () => {
  it('flag, then TEMPORAL_UI_URL, then the dev server default', () => {
    assert.equal(resolveUiUrl('http://flag:1', { TEMPORAL_UI_URL: 'http://env:2' }), 'http://flag:1');
    assert.equal(resolveUiUrl(undefined, { TEMPORAL_UI_URL: 'http://env:2/' }), 'http://env:2');
    assert.equal(resolveUiUrl(undefined, { TEMPORAL_UI_URL: '' }), DEFAULT_UI_URL);
    assert.equal(resolveUiUrl(undefined, {}), 'http://localhost:8233');
  });

  it('a bad TEMPORAL_UI_URL is a configuration error naming the variable', () => {
    assert.throws(
      () => resolveUiUrl(undefined, { TEMPORAL_UI_URL: 'ui:8233' }),
      (err: unknown) => err instanceof ConfigError && err.message.startsWith('TEMPORAL_UI_URL=ui:8233'),
    );
  });
});
