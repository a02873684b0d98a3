// What each trial of a fault campaign does: a lifecycle, a policy, a fault and when it strikes. Every combination of
// lifecycle, policy and fault comes once per round of 32 trials, in a seeded order, and any 8 trials in a row from the
// start cover every fault and lifecycle; the instants are random, half of them in the first 300 ms after the
// lifecycle begins (the first workflow task of a teardown).
import type { PodTerminationPolicy } from '../../src/model/index.js';
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
  const faults = random.shuffle(opts.faults ?? FAULT_KINDS);
  const lifecycles = random.shuffle(CHAOS_LIFECYCLES);
  // Trial i of a round: fault i mod F, policy by blocks of F, lifecycle shifted every two blocks. Every combination
  // comes once per round, and each block of 2F trials (8 by default) has every fault and lifecycle under both policies.
  const roundLength = faults.length * POLICIES.length * lifecycles.length;
  const order: number[] = [];
  const plans: TrialPlan[] = [];
  for (let index = 0; index < opts.trials; index++) {
    if (order.length === 0) {
      for (let block = 0; block < roundLength; block += 2 * faults.length) {
        order.push(...random.shuffle([...Array(2 * faults.length).keys()].map((k) => block + k)));
      }
    }
    const i = order.shift()!;
    const f = i % faults.length;
    const b = Math.floor(i / faults.length);
    const early = random.next() < 0.5;
    plans.push({
      index,
      lifecycle: lifecycles[(f + Math.floor(b / 2)) % lifecycles.length]!,
      policy: POLICIES[b % 2]!,
      fault: faults[f]!,
      faultDelayMs: early ? random.int(0, 300) : random.int(300, opts.graceSeconds * 1000),
      restartDelayMs: random.int(100, 1500),
      groupIndex: random.int(0, opts.replicas - 1),
    });
  }
  return plans;
}
