// What each trial of a fault campaign does: a lifecycle, a policy, a fault and when it strikes. Every combination of
// lifecycle, policy and fault comes once per round of 32 trials, in a seeded order; the instants are random, half of
// them in the first 300 ms after the lifecycle begins (the first workflow task of a teardown).
import type { PodTerminationPolicy } from '../model/index.js';
import { SeededRandom } from './random.js';

export const CHAOS_LIFECYCLES = ['rebuild', 'scale-down', 'rolling-update', 'lws-deletion'] as const;
export type ChaosLifecycle = (typeof CHAOS_LIFECYCLES)[number];
/** What is killed (kill -9) and started again: the worker, the trigger, both, or the Temporal server. */
export const FAULT_KINDS = ['worker', 'trigger', 'both', 'temporal'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
const POLICIES: PodTerminationPolicy[] = ['Sequential', 'Parallel'];

export interface TrialPlan {
  index: number;
  lifecycle: ChaosLifecycle;
  policy: PodTerminationPolicy;
  fault: FaultKind;
  /** After the lifecycle's first API call. */
  faultDelayMs: number;
  /** Between the kill and the start of the replacement process. */
  restartDelayMs: number;
  /** The group a rebuild breaks. */
  groupIndex: number;
}

export interface PlanOptions {
  seed: number;
  trials: number;
  replicas: number;
  graceSeconds: number;
  /** Fault kinds to draw from (all by default). */
  faults?: readonly FaultKind[];
}

export function planTrials(opts: PlanOptions): TrialPlan[] {
  const random = new SeededRandom(opts.seed);
  const faults = opts.faults ?? FAULT_KINDS;
  const combos = CHAOS_LIFECYCLES.flatMap((lifecycle) =>
    POLICIES.flatMap((policy) => faults.map((fault) => ({ lifecycle, policy, fault }))),
  );
  const plans: TrialPlan[] = [];
  let round: typeof combos = [];
  for (let index = 0; index < opts.trials; index++) {
    if (round.length === 0) round = random.shuffle(combos);
    const combo = round.shift()!;
    const early = random.next() < 0.5;
    plans.push({
      index,
      ...combo,
      faultDelayMs: early ? random.int(0, 300) : random.int(300, opts.graceSeconds * 1000),
      restartDelayMs: random.int(100, 1500),
      groupIndex: random.int(0, opts.replicas - 1),
    });
  }
  return plans;
}
