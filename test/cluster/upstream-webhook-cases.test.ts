// Upstream LeaderWorkerSet's own webhook cases (kubernetes-sigs/lws, test/integration/webhooks/leaderworkerset_test.go,
// at the commit in test/fixtures/upstream/README.md) against this project's CRD and admission policies on a real API
// server. Upstream runs its LWS webhook (defaulting and validation) in front of the API server; here the CRD's schema,
// defaults and CEL rules, this project's admission webhook (the two value rewrites of upstream's defaulting webhook)
// and a ValidatingAdmissionPolicy (the annotation rule) do that work.
//
// Every row is built as its upstream entry builds it, from BuildLeaderWorkerSet (test/wrappers/wrappers.go), and sent
// as Go's encoding/json would send that struct: a field without `omitempty` goes out even when empty (`startupPolicy`,
// `rolloutStrategy.type`, `networkConfig.subdomainPolicy` as null), one with it is left out when nil or "", and empty
// structs come along (`resources: {}`, `status: {}`; not `creationTimestamp: null`, which upstream's apimachinery
// v0.36 omits, since Kubernetes 1.34). A refused row must name the field in the API server's message; an accepted one
// must be stored; a defaulting row compares the stored spec with upstream's expected one as Go would (a zero value
// equals an absent field).
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import {
  ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY,
  API_GROUP,
  API_GROUP_VERSION,
  API_VERSION,
  CEL_MESSAGES,
  KIND,
  PLURAL,
} from '../../src/model/index.js';
import { waitFor } from '../../src/dev-server/processes.js';
import { useCrdSuite } from '../fixtures/crd-suite.js';

const lwsApi = { group: API_GROUP, version: API_VERSION, plural: PLURAL };
const STRICT = 'Strict';
const NGINX = 'docker.io/nginxinc/nginx-unprivileged:1.27';

type Json = Record<string, unknown>;
interface TemplateJson {
  metadata?: Json;
  spec: Json;
}
interface RollingUpdateJson {
  partition?: number;
  maxUnavailable?: number | string;
  maxSurge?: number | string;
}
interface SpecJson {
  replicas?: number;
  leaderWorkerTemplate: {
    leaderTemplate?: TemplateJson;
    workerTemplate: TemplateJson;
    size?: number;
    restartPolicy?: string;
    subGroupPolicy?: { subGroupPolicyType?: string; subGroupSize?: number };
  };
  rolloutStrategy: { type: string; rollingUpdateConfiguration?: RollingUpdateJson };
  startupPolicy: string;
  networkConfig?: { subdomainPolicy: string | null };
  podTerminationPolicy?: string;
}
interface LwsJson {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: Record<string, string>; [key: string]: unknown };
  spec: SpecJson;
  status?: Json;
}

/** wrappers.MakeLeaderPodSpec. */
function makeLeaderPodSpec(): Json {
  return { containers: [{ name: 'leader', image: NGINX, resources: {} }] };
}

/** wrappers.MakeWorkerPodSpec. */
function makeWorkerPodSpec(): Json {
  return {
    containers: [{ name: 'worker', image: NGINX, ports: [{ containerPort: 8080, protocol: 'TCP' }], resources: {} }],
  };
}

/** A corev1.PodTemplateSpec with only its spec set, as Go encodes it (an empty ObjectMeta is `{}`). */
const template = (spec: Json): TemplateJson => ({ metadata: {}, spec });

/** wrappers.LeaderWorkerSetWrapper: the same methods, each writing the JSON Go would send for the struct it sets. */
class LwsWrapper {
  constructor(readonly obj: LwsJson) {}
  get spec(): SpecJson {
    return this.obj.spec;
  }
  name(name: string): this {
    this.obj.metadata.name = name;
    return this;
  }
  replica(count: number): this {
    this.spec.replicas = count;
    return this;
  }
  size(count: number): this {
    this.spec.leaderWorkerTemplate.size = count;
    return this;
  }
  /** `restartPolicy,omitempty`: "" is not sent. */
  restartPolicy(policy: string): this {
    if (policy === '') delete this.spec.leaderWorkerTemplate.restartPolicy;
    else this.spec.leaderWorkerTemplate.restartPolicy = policy;
    return this;
  }
  /** RolloutStrategy is a struct (always sent) whose `type` has no omitempty; a nil configuration is left out. */
  rolloutStrategy(strategy: { type?: string; rollingUpdateConfiguration?: RollingUpdateJson }): this {
    this.spec.rolloutStrategy = { type: strategy.type ?? '' };
    if (strategy.rollingUpdateConfiguration)
      this.spec.rolloutStrategy.rollingUpdateConfiguration = strategy.rollingUpdateConfiguration;
    return this;
  }
  /** `startupPolicy` has no omitempty: "" would be sent as "". */
  startupPolicy(policy: string): this {
    this.spec.startupPolicy = policy;
    return this;
  }
  subGroupSize(size: number): this {
    this.spec.leaderWorkerTemplate.subGroupPolicy ??= {};
    this.spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize = size;
    return this;
  }
  subGroupType(type: string): this {
    this.spec.leaderWorkerTemplate.subGroupPolicy ??= {};
    this.spec.leaderWorkerTemplate.subGroupPolicy.subGroupPolicyType = type;
    return this;
  }
  subdomainPolicy(policy: string): this {
    this.spec.networkConfig = { subdomainPolicy: policy };
    return this;
  }
  leaderTemplateSpec(spec: Json): this {
    this.spec.leaderWorkerTemplate.leaderTemplate ??= template({});
    this.spec.leaderWorkerTemplate.leaderTemplate.spec = spec;
    return this;
  }
  workerTemplateSpec(spec: Json): this {
    this.spec.leaderWorkerTemplate.workerTemplate.spec = spec;
    return this;
  }
  annotation(annotations: Record<string, string>): this {
    this.obj.metadata.annotations = annotations;
    return this;
  }
  /** A direct change of a field, as an upstream entry makes with `lws.Spec... = ...`. */
  with(change: (o: LwsJson) => void): this {
    change(this.obj);
    return this;
  }
}

/** wrappers.BuildLeaderWorkerSet: name test-sample, 2 replicas of size 2, both templates, every policy set. */
function buildLeaderWorkerSet(): LwsWrapper {
  return new LwsWrapper({
    apiVersion: API_GROUP_VERSION,
    kind: KIND,
    metadata: { name: 'test-sample' },
    spec: {
      replicas: 2,
      leaderWorkerTemplate: {
        leaderTemplate: template(makeLeaderPodSpec()),
        workerTemplate: template(makeWorkerPodSpec()),
        size: 2,
        restartPolicy: 'RecreateGroupOnPodRestart',
      },
      rolloutStrategy: {
        type: 'RollingUpdate',
        rollingUpdateConfiguration: { partition: 0, maxUnavailable: 1, maxSurge: 0 },
      },
      startupPolicy: 'LeaderCreated',
      networkConfig: { subdomainPolicy: 'Shared' },
    },
    status: {},
  });
}

/** What cmp.Diff on Go structs cannot tell apart from an absent field: null, "", and objects or lists left empty. */
function goZeroless(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(goZeroless);
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [key, v] of Object.entries(value)) {
    const kept = goZeroless(v);
    if (kept === null || kept === undefined || kept === '') continue;
    if (typeof kept === 'object' && Object.keys(kept).length === 0) continue;
    out[key] = kept;
  }
  return out;
}

/** The API server's status of a refused request. */
function refusal(err: unknown): { code: number; message: string } {
  assert.ok(err instanceof k8s.ApiException, `expected an ApiException, got ${String(err)}`);
  const body = typeof err.body === 'string' ? err.body : JSON.stringify(err.body);
  return { code: err.code, message: (JSON.parse(body) as { message: string }).message };
}

/** A refusal: the HTTP code (422 Invalid unless said) and the texts its message must contain, the field path first. */
interface Refused {
  code?: number;
  says: string[];
}

function assertRefused(err: unknown, expected: Refused): void {
  const { code, message } = refusal(err);
  assert.equal(code, expected.code ?? 422, message);
  for (const text of expected.says) assert.ok(message.includes(text), `"${message}" should contain "${text}"`);
}

const ROLLING = 'spec.rolloutStrategy.rollingUpdateConfiguration';
/** The rolling update configuration of an object built by buildLeaderWorkerSet (it always has one). */
const rolling = (o: LwsJson): RollingUpdateJson => o.spec.rolloutStrategy.rollingUpdateConfiguration!;

interface ValidationRow {
  /** Upstream's entry name, or what this project adds. */
  title: string;
  make: () => LwsWrapper;
  /** Upstream's lwsCreationShouldFail. */
  creationRefused?: Refused;
  update?: (lws: LwsJson) => void;
  /** Upstream's updateShouldFail. */
  updateRefused?: Refused;
}

/** The `test creation and update` table, entry for entry, in upstream's order. */
const validationRows: ValidationRow[] = [
  {
    title: 'creation with invalid name should fail',
    make: () => buildLeaderWorkerSet().name('2cube'),
    creationRefused: { says: ['metadata.name', CEL_MESSAGES.name] },
  },
  {
    title: 'creation with invalid replicas and size should fail',
    make: () => buildLeaderWorkerSet().replica(100000).size(1000000),
    creationRefused: { says: ['spec.replicas', CEL_MESSAGES.totalPods] },
  },
  {
    title: 'creation with invalid size should fail',
    make: () => buildLeaderWorkerSet().replica(2).size(-1),
    creationRefused: { says: ['spec.leaderWorkerTemplate.size', 'greater than or equal to 1'] },
  },
  {
    title: 'creation with invalid replicas should fail',
    make: () => buildLeaderWorkerSet().size(2).replica(-1),
    creationRefused: { says: ['spec.replicas', 'greater than or equal to 0'] },
  },
  {
    title: 'creation with replicas greater than 1000000 should fail',
    make: () => buildLeaderWorkerSet().size(2).replica(1000001),
    creationRefused: { says: ['spec.replicas', 'less than or equal to 1000000'] },
  },
  {
    title: 'creation with invalid startpolicy should fail',
    make: () => buildLeaderWorkerSet().startupPolicy('invalidValue'),
    creationRefused: { says: ['spec.startupPolicy', 'Unsupported value: "invalidValue"'] },
  },
  {
    title: 'creation with invalid subGroupSize should fail',
    make: () => buildLeaderWorkerSet().size(2).subGroupSize(-1),
    creationRefused: { says: ['spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize', 'greater than or equal to 1'] },
  },
  {
    title: 'creation with subGroupSize larger than size should fail',
    make: () => buildLeaderWorkerSet().size(2).subGroupSize(3),
    creationRefused: {
      says: ['spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize', CEL_MESSAGES.subGroupSizeAboveSize],
    },
  },
  {
    title: 'creation where (subGroupSize-1) is not divisible by 1 and SubGroupPolicyTypeLeaderExcluded should fail',
    make: () => buildLeaderWorkerSet().size(4).subGroupSize(2).subGroupType('LeaderExcluded'),
    creationRefused: {
      says: ['spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize', CEL_MESSAGES.subGroupSizeLeaderExcluded],
    },
  },
  {
    title: 'update to size should succeed',
    make: () => buildLeaderWorkerSet().size(2),
    update: (lws) => (lws.spec.leaderWorkerTemplate.size = 3),
  },
  {
    title: 'update with invalid replicas should fail (larger than maxInt32)',
    make: () => buildLeaderWorkerSet().replica(100000).size(1),
    update: (lws) => (lws.spec.leaderWorkerTemplate.size = 100000000),
    updateRefused: { says: ['spec.replicas', CEL_MESSAGES.totalPods] },
  },
  {
    title: 'update with invalid replicas should fail (number is negative)',
    make: () => buildLeaderWorkerSet().replica(1).size(1),
    update: (lws) => (lws.spec.replicas = -1),
    updateRefused: { says: ['spec.replicas', 'greater than or equal to 0'] },
  },
  {
    title: 'update with invalid startpolicy should fail',
    make: () => buildLeaderWorkerSet().startupPolicy('LeaderReady'),
    update: (lws) => (lws.spec.startupPolicy = 'invalidValue'),
    updateRefused: { says: ['spec.startupPolicy', 'Unsupported value: "invalidValue"'] },
  },
  {
    title: 'number of subGroupSize can not be updated',
    make: () => buildLeaderWorkerSet().replica(1).size(2).subGroupSize(1),
    update: (lws) => (lws.spec.leaderWorkerTemplate.subGroupPolicy!.subGroupSize = 2),
    updateRefused: {
      says: ['spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize', CEL_MESSAGES.subGroupSizeImmutable],
    },
  },
  {
    title: 'number of subGroupSize cannot be added after update',
    make: () => buildLeaderWorkerSet().replica(1).size(2),
    update: (lws) => (lws.spec.leaderWorkerTemplate.subGroupPolicy = { subGroupSize: 2 }),
    updateRefused: { says: ['spec.leaderWorkerTemplate.subGroupPolicy', CEL_MESSAGES.subGroupPolicyAdded] },
  },
  {
    title: 'number of subGroupSize can not be removed after update',
    make: () => buildLeaderWorkerSet().replica(1).size(2).subGroupSize(1),
    update: (lws) => delete lws.spec.leaderWorkerTemplate.subGroupPolicy,
    updateRefused: { says: ['spec.leaderWorkerTemplate.subGroupPolicy', CEL_MESSAGES.subGroupPolicyRemoved] },
  },
  {
    title: 'number of replicas can be updated',
    make: () => buildLeaderWorkerSet().replica(1).size(1),
    update: (lws) => (lws.spec.replicas = 3),
  },
  {
    title: 'update with invalid replicas should fail (larger than 1000000)',
    make: () => buildLeaderWorkerSet().replica(1).size(1),
    update: (lws) => (lws.spec.replicas = 1000001),
    updateRefused: { says: ['spec.replicas', 'less than or equal to 1000000'] },
  },
  {
    title: 'leader/workerTemplate can be updated',
    make: () => buildLeaderWorkerSet(),
    update: (lws) => {
      lws.spec.leaderWorkerTemplate.leaderTemplate!.spec = makeWorkerPodSpec();
      lws.spec.leaderWorkerTemplate.workerTemplate.spec = makeLeaderPodSpec();
    },
  },
  {
    title: 'subdomainPolicy can be updated from UniquePerReplica to Shared',
    make: () => buildLeaderWorkerSet().subdomainPolicy('UniquePerReplica'),
    update: (lws) => (lws.spec.networkConfig!.subdomainPolicy = 'Shared'),
  },
  {
    title: 'subdomainPolicy can be updated from Shared to UniquePerReplica',
    make: () => buildLeaderWorkerSet().subdomainPolicy('Shared'),
    update: (lws) => (lws.spec.networkConfig!.subdomainPolicy = 'UniquePerReplica'),
  },
  {
    title: 'subdomainPolicy can be updated from nil to UniquePerReplica',
    make: () => buildLeaderWorkerSet().with((o) => delete o.spec.networkConfig),
    update: (lws) => (lws.spec.networkConfig!.subdomainPolicy = 'UniquePerReplica'),
  },
  {
    // Go sends `subdomainPolicy: null` (no omitempty); the API server drops the null and defaults it to Shared.
    title: 'subdomainPolicy can be updated to nil',
    make: () => buildLeaderWorkerSet(),
    update: (lws) => (lws.spec.networkConfig!.subdomainPolicy = null),
  },
  {
    title: 'set restart policy should succeed',
    make: () => buildLeaderWorkerSet().restartPolicy('None'),
  },
  {
    title: 'set restart policy should fail when value is invalid',
    make: () => buildLeaderWorkerSet().with((o) => (o.spec.leaderWorkerTemplate.restartPolicy = 'invalidValue')),
    creationRefused: { says: ['spec.leaderWorkerTemplate.restartPolicy', 'Unsupported value: "invalidValue"'] },
  },
  {
    title: 'set invalid rolloutStrategyType should be failed',
    make: () => buildLeaderWorkerSet().with((o) => (o.spec.rolloutStrategy.type = 'invalidValue')),
    creationRefused: { says: ['spec.rolloutStrategy.type', 'Unsupported value: "invalidValue"'] },
  },
  {
    title: 'set maxUnavailable greater than replicas is allowed',
    make: () => buildLeaderWorkerSet().with((o) => (rolling(o).maxUnavailable = 10)),
  },
  {
    title: 'set maxUnavailable greater than 100% should be failed',
    make: () => buildLeaderWorkerSet().with((o) => (rolling(o).maxUnavailable = '200%')),
    creationRefused: { says: [`${ROLLING}.maxUnavailable`, CEL_MESSAGES.maxUnavailable] },
  },
  {
    title: 'set maxUnavailable less than 0 should be failed',
    make: () => buildLeaderWorkerSet().with((o) => (rolling(o).maxUnavailable = -1)),
    creationRefused: { says: [`${ROLLING}.maxUnavailable`, CEL_MESSAGES.maxUnavailable] },
  },
  {
    title: 'set maxSurge greater than replicas is allowed',
    make: () => buildLeaderWorkerSet().with((o) => (rolling(o).maxSurge = 10)),
  },
  {
    title: 'set maxSurge greater than 100% should be failed',
    make: () => buildLeaderWorkerSet().with((o) => (rolling(o).maxSurge = '200%')),
    creationRefused: { says: [`${ROLLING}.maxSurge`, CEL_MESSAGES.maxSurge] },
  },
  {
    title: 'set maxSurge less than 0 should be failed',
    make: () => buildLeaderWorkerSet().with((o) => (rolling(o).maxSurge = -1)),
    creationRefused: { says: [`${ROLLING}.maxSurge`, CEL_MESSAGES.maxSurge] },
  },
  {
    title: 'set maxUnavailable and maxSurge both to 0 should be failed',
    make: () => buildLeaderWorkerSet().with((o) => (rolling(o).maxUnavailable = 0)),
    creationRefused: { says: [`${ROLLING}.maxUnavailable`, CEL_MESSAGES.maxUnavailableAndMaxSurgeZero] },
  },
  {
    title: 'set maxUnavailable to 0 and maxSurge to non-zero should succeed',
    make: () =>
      buildLeaderWorkerSet().with((o) => {
        rolling(o).maxUnavailable = 0;
        rolling(o).maxSurge = 1;
      }),
  },
  {
    title: 'set replica to 0 no matter maxUnavailable or maxSurge is should be allowed',
    make: () =>
      buildLeaderWorkerSet().with((o) => {
        o.spec.replicas = 0;
        rolling(o).maxUnavailable = '25%';
        rolling(o).maxSurge = '25%';
      }),
  },
  {
    title: 'set maxSurge to 0 and maxUnavailable to non-zero should be failed',
    make: () =>
      buildLeaderWorkerSet().with((o) => {
        rolling(o).maxUnavailable = '25%';
        rolling(o).maxSurge = 0;
      }),
    creationRefused: { says: [`${ROLLING}.maxUnavailable`, CEL_MESSAGES.maxUnavailableAndMaxSurgeZero] },
  },
  {
    title: 'creation with negative partition should fail',
    make: () => buildLeaderWorkerSet().with((o) => (rolling(o).partition = -1)),
    creationRefused: { says: [`${ROLLING}.partition`, 'greater than or equal to 0'] },
  },
  {
    title: 'creation with partition greater than replicas should succeed',
    make: () =>
      buildLeaderWorkerSet()
        .replica(3)
        .with((o) => (rolling(o).partition = 5)),
  },
  {
    title: 'creation with partition equal to replicas should succeed',
    make: () =>
      buildLeaderWorkerSet()
        .replica(3)
        .with((o) => (rolling(o).partition = 3)),
  },
  {
    title: 'creation with partition zero should succeed',
    make: () =>
      buildLeaderWorkerSet()
        .replica(3)
        .with((o) => (rolling(o).partition = 0)),
  },
  {
    title: 'update partition should succeed',
    make: () => buildLeaderWorkerSet().replica(5),
    update: (lws) => (rolling(lws).partition = 2),
  },
  {
    title: 'update partition to negative should fail',
    make: () => buildLeaderWorkerSet().replica(5),
    update: (lws) => (rolling(lws).partition = -1),
    updateRefused: { says: [`${ROLLING}.partition`, 'greater than or equal to 0'] },
  },
  {
    title: 'update partition to greater than replicas should succeed',
    make: () => buildLeaderWorkerSet().replica(5),
    update: (lws) => (rolling(lws).partition = 10),
  },
  {
    title: 'update partition to equal replicas should succeed',
    make: () => buildLeaderWorkerSet().replica(5),
    update: (lws) => (rolling(lws).partition = 5),
  },
  {
    title: 'update partition to zero should succeed',
    make: () => buildLeaderWorkerSet().replica(5),
    update: (lws) => (rolling(lws).partition = 0),
  },
];

/** 51 lowercase characters: one more than the longest name of an LWS of 2 replicas of size 4 without surge. */
const name51 = `n${'a'.repeat(50)}`;

/** Upstream's webhook rules this project checks elsewhere than upstream's table does, and its own name rule. */
const projectRows: ValidationRow[] = [
  {
    title: 'subgroup-exclusive-topology annotation without subGroupPolicy is refused (ValidatingAdmissionPolicy)',
    make: () =>
      buildLeaderWorkerSet().annotation({ [ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY]: 'topology.kubernetes.io/zone' }),
    creationRefused: {
      says: [
        `metadata.annotations[${ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY}]`,
        CEL_MESSAGES.subGroupExclusiveWithoutPolicy,
        'ValidatingAdmissionPolicy',
      ],
    },
  },
  {
    title: 'subgroup-exclusive-topology annotation with subGroupPolicy is allowed',
    make: () =>
      buildLeaderWorkerSet()
        .size(4)
        .subGroupSize(2)
        .annotation({ [ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY]: 'topology.kubernetes.io/zone' }),
  },
  {
    title: 'subgroup-exclusive-topology annotation added by an update without subGroupPolicy is refused',
    make: () => buildLeaderWorkerSet(),
    update: (lws) =>
      (lws.metadata.annotations = { [ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY]: 'kubernetes.io/hostname' }),
    updateRefused: { says: [`metadata.annotations[${ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY}]`] },
  },
  {
    // The message is the same for every object (a messageExpression naming this one's limit exceeded the CEL cost
    // budget): it gives the limit by group count, 50 for up to 10 groups.
    title: 'a 51-character name with replicas 2, size 4 is refused; the message gives the longest allowed, 50',
    make: () => buildLeaderWorkerSet().name(name51).replica(2).size(4),
    creationRefused: { says: ['metadata.name', CEL_MESSAGES.nameTooLong, '50 up to 10 groups'] },
  },
  {
    title: 'a 50-character name with replicas 2, size 4 is allowed',
    make: () => buildLeaderWorkerSet().name(name51.slice(0, 50)).replica(2).size(4),
  },
  {
    title: 'the same 51-character name with size 1 is allowed (no worker StatefulSets)',
    make: () => buildLeaderWorkerSet().name(name51).replica(2).size(1),
  },
  {
    title: 'a 52-character name with size 1 is allowed',
    make: () => buildLeaderWorkerSet().name(`${name51}b`).replica(2).size(1),
  },
  {
    title: 'a 53-character name with size 1 is refused: the longest allowed is 52',
    make: () => buildLeaderWorkerSet().name(`${name51}bc`).replica(2).size(1),
    creationRefused: { says: ['metadata.name', 'the longest name allowed is 52 characters for groups of size 1'] },
  },
];

interface DefaultingRow {
  title: string;
  make: () => LwsWrapper;
  /** Upstream's getExpectedLWS; the stored spec also has this project's podTerminationPolicy, defaulted. */
  expected: () => LwsWrapper;
}

/** The `test defaulting` table, entry for entry, in upstream's order. */
const defaultingRows: DefaultingRow[] = [
  {
    title: 'apply defaulting logic for replicas',
    make: () => buildLeaderWorkerSet().with((o) => delete o.spec.replicas),
    expected: () => buildLeaderWorkerSet().replica(1).restartPolicy('RecreateGroupOnPodRestart'),
  },
  {
    title: 'apply defaulting logic for size',
    make: () => buildLeaderWorkerSet().with((o) => delete o.spec.leaderWorkerTemplate.size),
    expected: () => buildLeaderWorkerSet().size(1).restartPolicy('RecreateGroupOnPodRestart'),
  },
  {
    title: "defaulting logic won't apply when shouldn't",
    make: () => buildLeaderWorkerSet().replica(2).size(2),
    expected: () =>
      buildLeaderWorkerSet()
        .replica(2)
        .size(2)
        .leaderTemplateSpec(makeLeaderPodSpec())
        .workerTemplateSpec(makeWorkerPodSpec())
        .restartPolicy('RecreateGroupOnPodRestart'),
  },
  {
    title: 'defaulting logic applies when leaderworkertemplate.restartpolicy is not set',
    make: () => buildLeaderWorkerSet().replica(2).size(2).restartPolicy(''),
    expected: () => buildLeaderWorkerSet().replica(2).size(2).restartPolicy('RecreateGroupOnPodRestart'),
  },
  {
    title: "defaulting logic won't apply when leaderworkertemplate.restartpolicy is set",
    make: () => buildLeaderWorkerSet().replica(2).size(2).restartPolicy('None'),
    expected: () => buildLeaderWorkerSet().replica(2).size(2).restartPolicy('None'),
  },
  {
    // Upstream's defaulting webhook rewrites it; here the admission webhook's LWS path does.
    title: 'DeprecatedDefaultRestartPolicy will be shift to NoneRestartPolicy',
    make: () => buildLeaderWorkerSet().replica(2).size(2).restartPolicy('Default'),
    expected: () => buildLeaderWorkerSet().replica(2).size(2).restartPolicy('None'),
  },
  {
    title: 'defaulting logic applies when spec.startpolicy is not set',
    make: () => buildLeaderWorkerSet().replica(2).size(2),
    expected: () => buildLeaderWorkerSet().replica(2).size(2).startupPolicy('LeaderCreated'),
  },
  {
    title: 'defaulting logic applies when spec.startpolicy is set',
    make: () => buildLeaderWorkerSet().replica(2).size(2).startupPolicy('LeaderReady'),
    expected: () => buildLeaderWorkerSet().replica(2).size(2).startupPolicy('LeaderReady'),
  },
  {
    title: 'defaulting of subdomainPolicy applies when spec.NetworkConfig is not set',
    make: () => buildLeaderWorkerSet().with((o) => delete o.spec.networkConfig),
    expected: () => buildLeaderWorkerSet().subdomainPolicy('Shared'),
  },
  {
    // RolloutStrategy{} reaches the API server as `rolloutStrategy: {type: ""}`.
    title: 'apply default rollout strategy',
    make: () => buildLeaderWorkerSet().rolloutStrategy({}),
    expected: () =>
      buildLeaderWorkerSet()
        .restartPolicy('RecreateGroupOnPodRestart')
        .rolloutStrategy({
          type: 'RollingUpdate',
          rollingUpdateConfiguration: { partition: 0, maxUnavailable: 1, maxSurge: 0 },
        }),
  },
  {
    title: "wouldn't apply default rollout strategy when configured",
    make: () =>
      buildLeaderWorkerSet().rolloutStrategy({
        type: 'RollingUpdate',
        rollingUpdateConfiguration: { partition: 2, maxUnavailable: 2, maxSurge: 1 },
      }),
    expected: () =>
      buildLeaderWorkerSet()
        .restartPolicy('RecreateGroupOnPodRestart')
        .rolloutStrategy({
          type: 'RollingUpdate',
          rollingUpdateConfiguration: { partition: 2, maxUnavailable: 2, maxSurge: 1 },
        }),
  },
];

describe("upstream LeaderWorkerSet's webhook cases against the CRD and admission policy (real API server)", function () {
  this.timeout(60_000);
  const suite = useCrdSuite('upstream-webhook');

  // Upstream gives each entry a suite.namespace of its own; here the entries share one and each starts with it empty.
  afterEach(async () => {
    await suite.custom.deleteCollectionNamespacedCustomObject({ ...lwsApi, namespace: suite.namespace });
    await waitFor(
      'no LeaderWorkerSet left in the namespace',
      async () => {
        const list = (await suite.custom.listNamespacedCustomObject({ ...lwsApi, namespace: suite.namespace })) as {
          items: unknown[];
        };
        return list.items.length === 0 ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
  });

  const create = (lws: LwsJson) =>
    suite.custom.createNamespacedCustomObject({
      ...lwsApi,
      namespace: suite.namespace,
      body: lws,
      fieldValidation: STRICT,
    }) as Promise<LwsJson>;
  const get = (name: string) =>
    suite.custom.getNamespacedCustomObject({ ...lwsApi, namespace: suite.namespace, name }) as Promise<LwsJson>;
  const replace = (lws: LwsJson) =>
    suite.custom.replaceNamespacedCustomObject({
      ...lwsApi,
      namespace: suite.namespace,
      name: lws.metadata.name,
      body: lws,
      fieldValidation: STRICT,
    }) as Promise<LwsJson>;
  const refused = (request: Promise<unknown>, what: string) =>
    request.then(
      () => assert.fail(`the API server accepted the ${what}`),
      (err: unknown) => err,
    );

  function runValidation(row: ValidationRow): void {
    it(row.title, async () => {
      const lws = row.make().obj;
      if (row.creationRefused) {
        assertRefused(await refused(create(lws), 'creation'), row.creationRefused);
        return;
      }
      await create(lws);
      const fetched = await get(lws.metadata.name);
      if (!row.update) return;
      row.update(fetched);
      if (row.updateRefused) assertRefused(await refused(replace(fetched), 'update'), row.updateRefused);
      else await replace(fetched);
    });
  }

  describe('test creation and update (upstream entries)', () => {
    for (const row of validationRows) runValidation(row);
  });

  describe('what the project adds: the subgroup-exclusive annotation rule, the derived-names rule', () => {
    for (const row of projectRows) runValidation(row);
  });

  describe('test defaulting (upstream entries)', () => {
    for (const row of defaultingRows) {
      it(row.title, async () => {
        const lws = row.make().obj;
        await create(lws);
        const stored = await get(lws.metadata.name);
        // The fixture's upstream commit predates the field; KEP-956 defaults it to Default, as the CRD here does.
        const expected = { ...row.expected().spec, podTerminationPolicy: 'Default' };
        assert.deepEqual(goZeroless(stored.spec), goZeroless(expected));
      });
    }
  });
});
