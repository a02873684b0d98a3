import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'mocha';
import { repoRoot } from '../../tools/stack/paths.js';
import { parseEnvFile } from '../../tools/stack/temporal-cluster.js';

describe('stack/temporal-cluster: the shared env file', () => {
  it('reads KEY=VALUE lines, skipping comments and blank lines, keeping `=` inside values', () => {
    assert.deepEqual(parseEnvFile('# a comment\n\nDB=postgres12\n  NUM_HISTORY_SHARDS=4  \nOPTS=a=b\nnot a pair\n'), {
      DB: 'postgres12',
      NUM_HISTORY_SHARDS: '4',
      OPTS: 'a=b',
    });
  });

  it('docker/temporal/temporal.env names the PostgreSQL plugin, both databases and the dynamic config', () => {
    const env = parseEnvFile(readFileSync(join(repoRoot, 'docker', 'temporal', 'temporal.env'), 'utf8'));
    assert.equal(env['DB'], 'postgres12');
    assert.deepEqual([env['DBNAME'], env['VISIBILITY_DBNAME']], ['temporal', 'temporal_visibility']);
    assert.ok(Number(env['NUM_HISTORY_SHARDS']) >= 1);
    assert.match(env['DYNAMIC_CONFIG_FILE_PATH'] ?? '', /\.yaml$/);
  });
});
