// The CRD's rules, for objects that did not pass the API server (files, tests, replayed workflow inputs). Messages
// take its form, "<field path>: <what is wrong>: <what is allowed>"; a unit test keeps the CEL messages in step.
import {
  POD_TERMINATION_POLICY_VALUES,
  RESTART_POLICIES,
  ROLLOUT_STRATEGY_TYPES,
  STARTUP_POLICIES,
  SUBDOMAIN_POLICIES,
  SUBGROUP_POLICY_TYPES,
  type IntOrString,
  type RestartPolicy,
} from './types.js';
import {
  DEFAULT_MAX_SURGE,
  DEFAULT_MAX_UNAVAILABLE,
  DEFAULT_REPLICAS,
  DEFAULT_RESTART_POLICY,
  DEFAULT_SIZE,
} from './defaults.js';
import { ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY } from './labels.js';
import { longestLwsName } from './names.js';
import { isValidIntOrPercent, scaleIntOrPercent } from './rollout.js';

export const MIN_REPLICAS = 0;
export const MAX_REPLICAS = 1_000_000;
export const MIN_SIZE = 1;
export const MIN_PARTITION = 0;
/** Pods of one LWS are counted in int32 by Kubernetes' StatefulSets and by HPA. */
export const MAX_TOTAL_PODS = 2_147_483_647;
/** The LWS name names the headless Service, so it must be a DNS-1035 label (upstream's webhook has the same rule). */
export const NAME_PATTERN = '^[a-z]([-a-z0-9]*[a-z0-9])?$';
export const MAX_NAME_LENGTH = 63;
export const MIN_MAX_GROUP_RESTARTS = 0;
/** groupRestartBackoff's bounds: a day between two recreations, a week before its waits start over. */
export const MAX_BACKOFF_INTERVAL_SECONDS = 86_400;
export const MAX_BACKOFF_RESET_SECONDS = 604_800;
/**
 * The restart policies a group restart budget applies to. KEP-820 names only RecreateGroupOnPodRestart; upstream's
 * PR #877 also takes RecreateGroupAfterStart, which recreates groups the same way, only later.
 */
export const MAX_GROUP_RESTARTS_POLICIES = [
  'RecreateGroupOnPodRestart',
  'RecreateGroupAfterStart',
] as const satisfies readonly RestartPolicy[];

/** Messages of the CRD's CEL rules; the API server prefixes them with the field path and the value's type. */
export const CEL_MESSAGES = {
  name: `metadata.name must be a DNS-1035 label: at most ${MAX_NAME_LENGTH} characters, lowercase letters, digits or '-', starting with a letter and ending with a letter or digit`,
  maxUnavailable: `maxUnavailable must be a non-negative integer or a percentage from 0% to 100% (e.g. 1 or '25%')`,
  maxSurge: `maxSurge must be a non-negative integer or a percentage from 0% to 100% (e.g. 1 or '25%')`,
  maxUnavailableAndMaxSurgeZero:
    'must not be 0 when maxSurge is 0 (both scaled to spec.replicas): a rolling update could never make progress',
  totalPods: `spec.replicas * spec.leaderWorkerTemplate.size must not exceed ${MAX_TOTAL_PODS} pods`,
  nameTooLong:
    'metadata.name: too long for the names derived from it (pods, StatefulSets and their controller-revision-hash label must fit 63 characters): the longest name allowed is 52 characters for groups of size 1, else 51 minus the digits of the last group index, surge groups counted (50 up to 10 groups, 49 up to 100)',
  subGroupSizeAboveSize: 'subGroupSize must not be larger than size',
  subGroupSizeNotDivisor: 'size or size - 1 must be divisible by subGroupSize',
  subGroupSizeLeaderExcluded: 'size - 1 must be divisible by subGroupSize when using LeaderExcluded',
  subGroupPolicyAdded: 'subGroupPolicy must be set when the LeaderWorkerSet is created, not added later',
  subGroupPolicyRemoved: 'subGroupPolicy must not be removed once set',
  subGroupSizeImmutable: 'subGroupSize is immutable: it must not change once set',
  maxGroupRestartsPolicy: `maxGroupRestarts is allowed only with restartPolicy ${MAX_GROUP_RESTARTS_POLICIES.join(' or ')}`,
  backoffMaximumBelowInitial: 'maximumIntervalSeconds must be greater than or equal to initialIntervalSeconds',
  /** Checked by the ValidatingAdmissionPolicy (deploy/crd): CEL in a CRD cannot read annotations. */
  subGroupExclusiveWithoutPolicy: `metadata.annotations[${ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY}]: must be set only together with spec.leaderWorkerTemplate.subGroupPolicy`,
} as const;

export type FieldErrorType = 'Required value' | 'Unsupported value' | 'Invalid value';

export interface FieldError {
  /** Dotted path of the offending field, e.g. `spec.leaderWorkerTemplate.size`. */
  field: string;
  type: FieldErrorType;
  /** The full message: `<field>: <type>[: <value>]: <what is allowed>`. */
  message: string;
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The API server treats an explicit null like an absent field (and then defaults it). */
function isAbsent(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

function jsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function showValue(value: unknown): string {
  return typeof value === 'number' ? String(value) : JSON.stringify(value);
}

function required(field: string): FieldError {
  return { field, type: 'Required value', message: `${field}: Required value` };
}

function invalid(field: string, value: unknown, detail: string): FieldError {
  return { field, type: 'Invalid value', message: `${field}: Invalid value: ${showValue(value)}: ${detail}` };
}

function wrongType(field: string, value: unknown, expected: string): FieldError {
  const actual = jsonTypeName(value);
  return invalid(field, actual, `${field} in body must be of type ${expected}: ${JSON.stringify(actual)}`);
}

function unsupported(field: string, value: unknown, allowed: readonly string[]): FieldError {
  const list = allowed.map((v) => JSON.stringify(v)).join(', ');
  return {
    field,
    type: 'Unsupported value',
    message: `${field}: Unsupported value: ${showValue(value)}: supported values: ${list}`,
  };
}

function checkEnum(errors: FieldError[], field: string, value: unknown, allowed: readonly string[]): void {
  if (isAbsent(value)) return;
  if (typeof value !== 'string') errors.push(wrongType(field, value, 'string'));
  else if (!allowed.includes(value)) errors.push(unsupported(field, value, allowed));
}

function checkInteger(
  errors: FieldError[],
  field: string,
  value: unknown,
  bounds: { min?: number; max?: number },
): number | undefined {
  if (isAbsent(value)) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    errors.push(wrongType(field, value, 'integer'));
    return undefined;
  }
  if (bounds.min !== undefined && value < bounds.min) {
    errors.push(invalid(field, value, `${field} in body should be greater than or equal to ${bounds.min}`));
    return undefined;
  }
  if (bounds.max !== undefined && value > bounds.max) {
    errors.push(invalid(field, value, `${field} in body should be less than or equal to ${bounds.max}`));
    return undefined;
  }
  return value;
}

function checkBoolean(errors: FieldError[], field: string, value: unknown): void {
  if (!isAbsent(value) && typeof value !== 'boolean') errors.push(wrongType(field, value, 'boolean'));
}

function checkObject(errors: FieldError[], field: string, value: unknown): JsonObject | undefined {
  if (isAbsent(value)) return undefined;
  if (!isObject(value)) {
    errors.push(wrongType(field, value, 'object'));
    return undefined;
  }
  return value;
}

function checkIntOrPercent(
  errors: FieldError[],
  field: string,
  value: unknown,
  message: string,
): IntOrString | undefined {
  if (isAbsent(value)) return undefined;
  if (typeof value !== 'number' && typeof value !== 'string') {
    errors.push(wrongType(field, value, 'integer or string'));
    return undefined;
  }
  if (!isValidIntOrPercent(value)) {
    errors.push(invalid(field, value, message));
    return undefined;
  }
  return value;
}

/** The name when it is a valid DNS-1035 label, for the derived-names rule. */
function checkName(errors: FieldError[], metadata: unknown): string | undefined {
  if (!isObject(metadata)) return undefined;
  const name = metadata['name'];
  if (isAbsent(name)) return undefined; // generateName objects get their name from the API server
  if (typeof name !== 'string' || name.length > MAX_NAME_LENGTH || !new RegExp(NAME_PATTERN).test(name)) {
    errors.push(invalid('metadata.name', name, CEL_MESSAGES.name));
    return undefined;
  }
  return name;
}

interface RollingNumbers {
  mu?: IntOrString;
  ms?: IntOrString;
  muValid: boolean;
  msValid: boolean;
}

const ROLLING_PATH = 'spec.rolloutStrategy.rollingUpdateConfiguration';

function checkRollingUpdate(errors: FieldError[], value: unknown): RollingNumbers {
  const path = ROLLING_PATH;
  const config = checkObject(errors, path, value);
  if (config === undefined) return { muValid: isAbsent(value), msValid: isAbsent(value) };
  checkInteger(errors, `${path}.partition`, config['partition'], { min: MIN_PARTITION });
  const mu = checkIntOrPercent(errors, `${path}.maxUnavailable`, config['maxUnavailable'], CEL_MESSAGES.maxUnavailable);
  const ms = checkIntOrPercent(errors, `${path}.maxSurge`, config['maxSurge'], CEL_MESSAGES.maxSurge);
  return {
    mu,
    ms,
    muValid: mu !== undefined || isAbsent(config['maxUnavailable']),
    msValid: ms !== undefined || isAbsent(config['maxSurge']),
  };
}

function checkSubGroupPolicy(errors: FieldError[], value: unknown, size: number | undefined): void {
  const path = 'spec.leaderWorkerTemplate.subGroupPolicy';
  const policy = checkObject(errors, path, value);
  if (policy === undefined) return;
  checkEnum(errors, `${path}.subGroupPolicyType`, policy['subGroupPolicyType'], SUBGROUP_POLICY_TYPES);
  const sizePath = `${path}.subGroupSize`;
  if (isAbsent(policy['subGroupSize'])) {
    errors.push(required(sizePath));
    return;
  }
  const sub = checkInteger(errors, sizePath, policy['subGroupSize'], { min: 1 });
  if (sub === undefined || size === undefined) return;
  if (sub > size) errors.push(invalid(sizePath, sub, CEL_MESSAGES.subGroupSizeAboveSize));
  if (size % sub !== 0 && (size - 1) % sub !== 0)
    errors.push(invalid(sizePath, sub, CEL_MESSAGES.subGroupSizeNotDivisor));
  if (policy['subGroupPolicyType'] === 'LeaderExcluded' && (size - 1) % sub !== 0) {
    errors.push(invalid(sizePath, sub, CEL_MESSAGES.subGroupSizeLeaderExcluded));
  }
}

/** A restart budget only where groups are recreated; on valid values, unset restartPolicy being its default. */
function checkMaxGroupRestarts(errors: FieldError[], lwt: JsonObject): void {
  const path = 'spec.leaderWorkerTemplate.maxGroupRestarts';
  const max = checkInteger(errors, path, lwt['maxGroupRestarts'], { min: MIN_MAX_GROUP_RESTARTS });
  const policy = lwt['restartPolicy'];
  if (max === undefined || (!isAbsent(policy) && !RESTART_POLICIES.includes(policy as RestartPolicy))) return;
  const effective = isAbsent(policy) ? DEFAULT_RESTART_POLICY : (policy as RestartPolicy);
  if (!(MAX_GROUP_RESTARTS_POLICIES as readonly RestartPolicy[]).includes(effective)) {
    errors.push(invalid(path, max, CEL_MESSAGES.maxGroupRestartsPolicy));
  }
}

/** Ours: spec.leaderWorkerTemplate.groupRestartBackoff, bounded as the CRD bounds it. */
function checkGroupRestartBackoff(errors: FieldError[], value: unknown): void {
  const path = 'spec.leaderWorkerTemplate.groupRestartBackoff';
  const backoff = checkObject(errors, path, value);
  if (backoff === undefined) return;
  const initial = checkInteger(errors, `${path}.initialIntervalSeconds`, backoff['initialIntervalSeconds'], {
    min: 0,
    max: MAX_BACKOFF_INTERVAL_SECONDS,
  });
  const maximum = checkInteger(errors, `${path}.maximumIntervalSeconds`, backoff['maximumIntervalSeconds'], {
    min: 0,
    max: MAX_BACKOFF_INTERVAL_SECONDS,
  });
  checkInteger(errors, `${path}.resetAfterSeconds`, backoff['resetAfterSeconds'], {
    min: 1,
    max: MAX_BACKOFF_RESET_SECONDS,
  });
  if (initial !== undefined && maximum !== undefined && maximum < initial) {
    errors.push(invalid(`${path}.maximumIntervalSeconds`, maximum, CEL_MESSAGES.backoffMaximumBelowInitial));
  }
}

function checkSpec(errors: FieldError[], spec: JsonObject, name: string | undefined): void {
  const replicasValue = spec['replicas'];
  const replicas = checkInteger(errors, 'spec.replicas', replicasValue, { min: MIN_REPLICAS, max: MAX_REPLICAS });

  let size: number | undefined;
  let sizeValue: unknown;
  const lwtValue = spec['leaderWorkerTemplate'];
  if (isAbsent(lwtValue)) {
    errors.push(required('spec.leaderWorkerTemplate'));
  } else {
    const lwt = checkObject(errors, 'spec.leaderWorkerTemplate', lwtValue);
    if (lwt !== undefined) {
      if (isAbsent(lwt['workerTemplate'])) errors.push(required('spec.leaderWorkerTemplate.workerTemplate'));
      else checkObject(errors, 'spec.leaderWorkerTemplate.workerTemplate', lwt['workerTemplate']);
      checkObject(errors, 'spec.leaderWorkerTemplate.leaderTemplate', lwt['leaderTemplate']);
      sizeValue = lwt['size'];
      size = checkInteger(errors, 'spec.leaderWorkerTemplate.size', sizeValue, { min: MIN_SIZE });
      checkEnum(errors, 'spec.leaderWorkerTemplate.restartPolicy', lwt['restartPolicy'], RESTART_POLICIES);
      checkMaxGroupRestarts(errors, lwt);
      checkGroupRestartBackoff(errors, lwt['groupRestartBackoff']);
      const sizeOk = size !== undefined || isAbsent(sizeValue);
      checkSubGroupPolicy(errors, lwt['subGroupPolicy'], sizeOk ? (size ?? DEFAULT_SIZE) : undefined);
    }
  }

  checkEnum(errors, 'spec.startupPolicy', spec['startupPolicy'], STARTUP_POLICIES);
  checkEnum(errors, 'spec.podTerminationPolicy', spec['podTerminationPolicy'], POD_TERMINATION_POLICY_VALUES);
  checkInteger(errors, 'spec.forceDeleteOnNodeNotReadySeconds', spec['forceDeleteOnNodeNotReadySeconds'], { min: 0 });

  const rollout = checkObject(errors, 'spec.rolloutStrategy', spec['rolloutStrategy']);
  let rolling: RollingNumbers = { muValid: true, msValid: true };
  if (rollout !== undefined) {
    checkEnum(errors, 'spec.rolloutStrategy.type', rollout['type'], ROLLOUT_STRATEGY_TYPES);
    rolling = checkRollingUpdate(errors, rollout['rollingUpdateConfiguration']);
  } else if (!isAbsent(spec['rolloutStrategy'])) {
    rolling = { muValid: false, msValid: false };
  }

  const network = checkObject(errors, 'spec.networkConfig', spec['networkConfig']);
  if (network !== undefined) {
    checkEnum(errors, 'spec.networkConfig.subdomainPolicy', network['subdomainPolicy'], SUBDOMAIN_POLICIES);
    checkBoolean(errors, 'spec.networkConfig.publishNotReadyAddresses', network['publishNotReadyAddresses']);
  }

  // Cross-field rules, on defaulted values, only when the fields are themselves valid.
  const replicasOk = replicas !== undefined || isAbsent(replicasValue);
  const sizeOk = size !== undefined || isAbsent(sizeValue);
  if (!replicasOk) return;
  const r = replicas ?? DEFAULT_REPLICAS;
  const effectiveSize = size ?? DEFAULT_SIZE;
  if (sizeOk && r * effectiveSize > MAX_TOTAL_PODS) {
    errors.push(invalid('spec.replicas', r, CEL_MESSAGES.totalPods));
  }
  if (rolling.muValid && rolling.msValid) {
    const mu = rolling.mu ?? DEFAULT_MAX_UNAVAILABLE;
    const ms = rolling.ms ?? DEFAULT_MAX_SURGE;
    if (r !== 0 && scaleIntOrPercent(mu, r, false) === 0 && scaleIntOrPercent(ms, r, true) === 0) {
      errors.push(invalid(`${ROLLING_PATH}.maxUnavailable`, mu, CEL_MESSAGES.maxUnavailableAndMaxSurgeZero));
    }
    if (sizeOk && name !== undefined) {
      const longest = longestLwsName({ replicas: r, size: effectiveSize, surge: scaleIntOrPercent(ms, r, true) });
      if (name.length > longest) {
        errors.push(
          invalid(
            'metadata.name',
            name,
            // The CRD's CEL message cannot compute the limit (a messageExpression would exceed the cost budget).
            `${CEL_MESSAGES.nameTooLong}; here ${longest}`,
          ),
        );
      }
    }
  }
}

function annotationsOf(metadata: unknown): JsonObject {
  const annotations = isObject(metadata) ? metadata['annotations'] : undefined;
  return isObject(annotations) ? annotations : {};
}

function subGroupPolicyOf(obj: JsonObject): unknown {
  const spec = obj['spec'];
  const lwt = isObject(spec) ? spec['leaderWorkerTemplate'] : undefined;
  return isObject(lwt) ? lwt['subGroupPolicy'] : undefined;
}

/** Every error in untrusted JSON data (before or after defaulting); empty when valid. */
export function validateLeaderWorkerSet(obj: unknown): FieldError[] {
  const errors: FieldError[] = [];
  if (!isObject(obj)) {
    errors.push(invalid('<root>', jsonTypeName(obj), 'a LeaderWorkerSet must be an object'));
    return errors;
  }
  const name = checkName(errors, obj['metadata']);
  if (isAbsent(obj['spec'])) {
    errors.push(required('spec'));
  } else {
    const spec = checkObject(errors, 'spec', obj['spec']);
    if (spec !== undefined) checkSpec(errors, spec, name);
  }
  const subExclusive = annotationsOf(obj['metadata'])[ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY];
  if (subExclusive !== undefined && isAbsent(subGroupPolicyOf(obj))) {
    errors.push(
      invalid(
        `metadata.annotations[${ANNOTATION_SUBGROUP_EXCLUSIVE_TOPOLOGY}]`,
        subExclusive,
        CEL_MESSAGES.subGroupExclusiveWithoutPolicy,
      ),
    );
  }
  return errors;
}

/** The update rules on top of validateLeaderWorkerSet's: the subgroup policy is fixed at creation. */
export function validateLeaderWorkerSetUpdate(oldObj: unknown, newObj: unknown): FieldError[] {
  const errors = validateLeaderWorkerSet(newObj);
  if (!isObject(oldObj) || !isObject(newObj)) return errors;
  const path = 'spec.leaderWorkerTemplate.subGroupPolicy';
  const before = subGroupPolicyOf(oldObj);
  const after = subGroupPolicyOf(newObj);
  if (isAbsent(before) && !isAbsent(after)) errors.push(invalid(path, after, CEL_MESSAGES.subGroupPolicyAdded));
  if (!isAbsent(before) && isAbsent(after)) errors.push(invalid(path, null, CEL_MESSAGES.subGroupPolicyRemoved));
  if (isObject(before) && isObject(after) && before['subGroupSize'] !== after['subGroupSize']) {
    errors.push(invalid(`${path}.subGroupSize`, after['subGroupSize'], CEL_MESSAGES.subGroupSizeImmutable));
  }
  return errors;
}
