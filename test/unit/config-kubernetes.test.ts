import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { userAgent, VERSION } from '../../src/config/kubernetes.js';

describe('config/kubernetes: how the processes name themselves to the API server', () => {
  it('VERSION is package.json version', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    assert.equal(VERSION, pkg.version);
  });

  it('the User-Agent names the project, its version and the component', () => {
    assert.equal(userAgent('trigger'), `lws-temporal/${VERSION} (trigger)`);
  });
});
