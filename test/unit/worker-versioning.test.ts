import assert from 'node:assert/strict';
import { isWorkflowFunctionWithOptions } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { ConfigError, workerVersioningFromEnv } from '../../src/config/temporal.js';
import type { Logger } from '../../src/log.js';
import {
  buildIdOf,
  deploymentOptions,
  setCurrentHint,
  setCurrentVersion,
  versionStatus,
} from '../../src/worker/versioning.js';
import * as workflows from '../../src/workflows/index.js';
import { versioningBehaviors, versioningOptions, type VersionedWorkflowType } from '../../src/workflows/versioning.js';

const version = { deploymentName: 'lws-temporal', buildId: '0.1.0-abc' };

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

describe('worker versioning', () => {
  describe('workflow types (src/workflows/versioning.ts)', () => {
    const exported = Object.entries(workflows).filter(([, value]) => typeof value === 'function');

    it('pins the lifecycles to the build that started them; the reconcile moves to the current build', () => {
      const behaviours = exported.map(([type]) => [
        type,
        versioningOptions(type as VersionedWorkflowType, version).versioningBehavior,
      ]);
      assert.deepEqual(Object.fromEntries(behaviours), {
        provisionGroup: 'PINNED',
        teardownGroup: 'PINNED',
        recreateGroup: 'PINNED',
        reconcileLeaderWorkerSet: 'AUTO_UPGRADE',
      });
    });

    it('gives no behaviour on an unversioned worker (the server would refuse its workflow tasks)', () => {
      for (const [type] of exported) {
        assert.deepEqual(versioningOptions(type as VersionedWorkflowType, undefined), {}, type);
        assert.deepEqual(versioningOptions(type as VersionedWorkflowType, { deploymentName: '' }), {}, type);
      }
    });

    it('registers the options on every workflow function, evaluated per run', () => {
      for (const [type, fn] of exported) {
        assert.ok(isWorkflowFunctionWithOptions(fn), type);
        assert.equal(typeof fn.workflowDefinitionOptions, 'function', type);
      }
    });

    it('has a behaviour for every workflow the worker bundles, and none for anything else', () => {
      assert.deepEqual(exported.map(([type]) => type).sort(), Object.keys(versioningBehaviors).sort());
    });
  });

  describe('buildIdOf', () => {
    it('is the package version and 12 hex digits of the bundle digest, the same for the same code', () => {
      const id = buildIdOf('export const code = 1;');
      assert.match(id, /^0\.1\.0-[0-9a-f]{12}$/);
      assert.equal(buildIdOf(Buffer.from('export const code = 1;')), id);
    });

    it('changes with any change to the code', () => {
      assert.notEqual(buildIdOf('export const code = 1;'), buildIdOf('export const code = 2;'));
    });

    it('is a build ID the configuration (and the server) accepts', () => {
      const buildId = buildIdOf('code');
      assert.doesNotThrow(
        () => workerVersioningFromEnv({ TEMPORAL_WORKER_BUILD_ID: buildId }, 'lws-temporal-c1'),
        ConfigError,
      );
    });
  });

  it('makes workflow types without a behaviour of their own pinned', () => {
    const version = { deploymentName: 'lws-temporal', buildId: 'b' };
    assert.deepEqual(deploymentOptions(version), {
      version,
      useWorkerVersioning: true,
      defaultVersioningBehavior: 'PINNED',
    });
  });

  it("reads version statuses as the server's enum numbers them", () => {
    const Status = temporal.api.enums.v1.WorkerDeploymentVersionStatus;
    assert.deepEqual(versionStatus, {
      [Status.WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE]: 'inactive',
      [Status.WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT]: 'current',
      [Status.WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING]: 'ramping',
      [Status.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING]: 'draining',
      [Status.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED]: 'drained',
    });
  });

  it("says what to do when the server will not leave the current version's task queues unserved", () => {
    const refusal =
      "proposed current version 'lws-temporal:0.1.0-ef4eaaa7c728' is missing active task queues from the current " +
      'version; these would become unversioned if it is set as the current version';
    assert.match(setCurrentHint(refusal) ?? '', /its own TEMPORAL_WORKER_DEPLOYMENT .*--ignore-missing-task-queues/);
    assert.equal(setCurrentHint('namespace not found'), undefined);
  });

  it('with TEMPORAL_WORKER_SET_CURRENT=never, leaves the version to the operator without asking the server', async () => {
    const unreachable = new Proxy({} as never, {
      get: () => {
        throw new Error('no server call expected');
      },
    });
    const outcome = await setCurrentVersion(
      { workflowService: unreachable },
      { namespace: 'default', version: { deploymentName: 'd', buildId: 'b' }, policy: 'never', log: silent },
    );
    assert.equal(outcome, 'left');
  });
});
