// The CRD's rules, for objects that did not pass the API server (files, tests, replayed workflow inputs). Messages
// take its form, "<field path>: <what is wrong>: <what is allowed>"; a unit test keeps the CEL messages in step.
import {
  POD_TERMINATION_POLICIES,
  RESTART_POLICIES,
  ROLLOUT_STRATEGY_TYPES,
  STARTUP_POLICIES,
  SUBDOMAIN_POLICIES,
  type IntOrString,
} from './types.js';
import { DEFAULT_MAX_SURGE, DEFAULT_MAX_UNAVAILABLE, DEFAULT_REPLICAS, DEFAULT_SIZE } from './defaults.js';
import { isValidIntOrPercent, isZeroIntOrPercent } from './rollout.js';

export const MIN_REPLICAS = 0;
export const MAX_REPLICAS = 1_000_000;
export const MIN_SIZE = 1;
export const MIN_PARTITION = 0;
/** Pods of one LWS are counted in int32 by Kubernetes' StatefulSets and by HPA. */
export const MAX_TOTAL_PODS = 2_147_483_647;
/** The LWS name names the headless Service, so it must be a DNS-1035 label (upstream's webhook has the same rule). */
export const NAME_PATTERN = '^[a-z]([-a-z0-9]*[a-z0-9])?$';
export const MAX_NAME_LENGTH = 63;

/** Messages of the CRD's CEL rules; the API server prefixes them with the field path and the value's type. */
export const CEL_MESSAGES = {
  name: `metadata.name must be a DNS-1035 label: at most ${MAX_NAME_LENGTH} characters, lowercase letters, digits or '-', starting with a letter and ending with a letter or digit`,
  maxUnavailable: `maxUnavailable must be a non-negative integer or a percentage from 0% to 100% (e.g. 1 or '25%')`,
  maxSurge: `maxSurge must be a non-negative integer or a percentage from 0% to 100% (e.g. 1 or '25%')`,
  maxUnavailableAndMaxSurgeZero:
    'maxUnavailable must not be 0 when maxSurge is 0: a rolling update could never make progress',
  totalPods: `spec.replicas * spec.leaderWorkerTemplate.size must not exceed ${MAX_TOTAL_PODS} pods`,
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

function checkName(errors: FieldError[], metadata: unknown): void {
  if (!isObject(metadata)) return;
  const name = metadata['name'];
  if (isAbsent(name)) return; // generateName objects get their name from the API server
  if (typeof name !== 'string' || name.length > MAX_NAME_LENGTH || !new RegExp(NAME_PATTERN).test(name)) {
    errors.push(invalid('metadata.name', name, CEL_MESSAGES.name));
  }
}

function checkRollingUpdate(errors: FieldError[], value: unknown): void {
  const path = 'spec.rolloutStrategy.rollingUpdateConfiguration';
  const config = checkObject(errors, path, value);
  if (config === undefined) return;
  checkInteger(errors, `${path}.partition`, config['partition'], { min: MIN_PARTITION });
  const mu = checkIntOrPercent(errors, `${path}.maxUnavailable`, config['maxUnavailable'], CEL_MESSAGES.maxUnavailable);
  const ms = checkIntOrPercent(errors, `${path}.maxSurge`, config['maxSurge'], CEL_MESSAGES.maxSurge);
  // Only when both are valid (the CEL rule sees defaulted values, so absent means the default here too).
  const muValid = mu !== undefined || isAbsent(config['maxUnavailable']);
  const msValid = ms !== undefined || isAbsent(config['maxSurge']);
  if (muValid && msValid) {
    const effectiveMu = mu ?? DEFAULT_MAX_UNAVAILABLE;
    const effectiveMs = ms ?? DEFAULT_MAX_SURGE;
    if (isZeroIntOrPercent(effectiveMu) && isZeroIntOrPercent(effectiveMs)) {
      errors.push(invalid(`${path}.maxUnavailable`, effectiveMu, CEL_MESSAGES.maxUnavailableAndMaxSurgeZero));
    }
  }
}

function checkSpec(errors: FieldError[], spec: JsonObject): void {
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
    }
  }

  checkEnum(errors, 'spec.startupPolicy', spec['startupPolicy'], STARTUP_POLICIES);
  checkEnum(errors, 'spec.podTerminationPolicy', spec['podTerminationPolicy'], POD_TERMINATION_POLICIES);

  const rollout = checkObject(errors, 'spec.rolloutStrategy', spec['rolloutStrategy']);
  if (rollout !== undefined) {
    checkEnum(errors, 'spec.rolloutStrategy.type', rollout['type'], ROLLOUT_STRATEGY_TYPES);
    checkRollingUpdate(errors, rollout['rollingUpdateConfiguration']);
  }

  const network = checkObject(errors, 'spec.networkConfig', spec['networkConfig']);
  if (network !== undefined) {
    checkEnum(errors, 'spec.networkConfig.subdomainPolicy', network['subdomainPolicy'], SUBDOMAIN_POLICIES);
  }

  // Cross-field rule, on defaulted values, only when both fields are themselves valid.
  const replicasOk = replicas !== undefined || isAbsent(replicasValue);
  const sizeOk = size !== undefined || isAbsent(sizeValue);
  if (replicasOk && sizeOk) {
    const effectiveReplicas = replicas ?? DEFAULT_REPLICAS;
    if (effectiveReplicas * (size ?? DEFAULT_SIZE) > MAX_TOTAL_PODS) {
      errors.push(invalid('spec.replicas', effectiveReplicas, CEL_MESSAGES.totalPods));
    }
  }
}

/** Every error in untrusted JSON data (before or after defaulting); empty when valid. */
export function validateLeaderWorkerSet(obj: unknown): FieldError[] {
  const errors: FieldError[] = [];
  if (!isObject(obj)) {
    errors.push(invalid('<root>', jsonTypeName(obj), 'a LeaderWorkerSet must be an object'));
    return errors;
  }
  checkName(errors, obj['metadata']);
  if (isAbsent(obj['spec'])) {
    errors.push(required('spec'));
  } else {
    const spec = checkObject(errors, 'spec', obj['spec']);
    if (spec !== undefined) checkSpec(errors, spec);
  }
  return errors;
}
