import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'mocha';
import { checkLogSettings, createLogger } from '../../src/log.js';
import { repoRoot } from '../../tools/stack/paths.js';

/** What a logger made with `env` writes to stderr for one call per level. */
function written(env: NodeJS.ProcessEnv): string {
  const chunks: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string) => (chunks.push(String(chunk)), true)) as typeof process.stderr.write;
  try {
    const log = createLogger('t', {}, env);
    log.debug('d');
    log.info('i');
    log.warn('w');
  } finally {
    process.stderr.write = write;
  }
  return chunks.join('');
}

describe('log settings', () => {
  const accepted: [NodeJS.ProcessEnv, string[]][] = [
    [{}, ['i', 'w']],
    [{ LOG_LEVEL: 'debug' }, ['d', 'i', 'w']],
    [{ LOG_LEVEL: 'DEBUG' }, ['d', 'i', 'w']],
    [{ LOG_LEVEL: 'Warn' }, ['w']],
    [{ LOG_LEVEL: '' }, ['i', 'w']],
  ];
  for (const [env, shown] of accepted) {
    it(`LOG_LEVEL=${env.LOG_LEVEL ?? '(unset)'} is accepted and shows ${shown.join(', ')}`, () => {
      assert.doesNotThrow(() => checkLogSettings(env));
      const lines = written(env).trim().split('\n');
      assert.deepEqual(
        lines.map((l) => /\] (?:\w+ )?(\w)$/.exec(l)?.[1]),
        shown,
      );
    });
  }

  for (const [env, message] of [
    [{ LOG_LEVEL: 'verbose' }, /LOG_LEVEL=verbose: expected one of debug, info, warn, error \(any case\)$/],
    [{ LOG_FORMAT: 'JSON' }, /LOG_FORMAT=JSON: expected human or json$/],
    [{ LOG_FORMAT: 'text' }, /LOG_FORMAT=text: expected human or json$/],
  ] as const) {
    it(`refuses ${JSON.stringify(env)}, naming the variable and what is allowed`, () => {
      assert.throws(() => checkLogSettings(env), message);
    });
  }

  it('accepts LOG_FORMAT json and human', () => {
    for (const LOG_FORMAT of ['json', 'human']) assert.doesNotThrow(() => checkLogSettings({ LOG_FORMAT }));
    assert.equal(JSON.parse(written({ LOG_FORMAT: 'json' }).split('\n')[0]!).msg, 'i');
  });

  for (const role of ['worker', 'trigger']) {
    it(`the ${role} process stops at start on a bad LOG_LEVEL, before it reads anything`, function () {
      this.timeout(60_000);
      const run = spawnSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'src', role, 'main.ts')], {
        cwd: repoRoot,
        env: { ...process.env, LOG_LEVEL: 'verbose', KUBECONFIG: '/nonexistent/kubeconfig' },
        encoding: 'utf8',
      });
      assert.equal(run.status, 1, run.stderr);
      assert.match(run.stderr, /LOG_LEVEL=verbose: expected one of debug, info, warn, error/);
    });
  }
});
