// A teardown's steps, recorded twice: on its timeline (the `timeline` query and the Web UI's current details) and as
// Events on the LWS (`kubectl describe lws`).
import { EVENT_REASONS, type Lifecycle, type ObjectKey, type PodTerminationPolicy } from '../model/index.js';
import type { KubernetesEvent } from '../activities/types.js';
import { kube } from './activities.js';
import { Timeline, type TimelineEntry, type TimelineEvent } from './timeline.js';

export type TeardownStep = Extract<
  TimelineEvent,
  | 'leader terminating'
  | 'workers terminating'
  | 'leader gone'
  | 'workers gone'
  | 'old StatefulSet gone'
  | 'pod force-deleted'
  | 'new leader'
  | 'new group ready'
>;

const REASONS: Record<TeardownStep, string> = {
  'leader terminating': EVENT_REASONS.groupLeaderTerminating,
  'workers terminating': EVENT_REASONS.groupWorkersTerminating,
  'leader gone': EVENT_REASONS.groupLeaderGone,
  'workers gone': EVENT_REASONS.groupWorkersGone,
  'old StatefulSet gone': EVENT_REASONS.groupOldStatefulSetGone,
  'pod force-deleted': EVENT_REASONS.podForceDeleted,
  'new leader': EVENT_REASONS.groupNewLeader,
  'new group ready': EVENT_REASONS.groupNewGroupReady,
};

/** Steps a user should look at: a force delete may hide a node that still runs the pod (model/dead-node.ts). */
const WARNINGS: ReadonlySet<TeardownStep> = new Set<TeardownStep>(['pod force-deleted']);

export interface Step {
  step: TeardownStep;
  at?: string;
  detail?: string;
}

export class TeardownTimeline {
  private readonly timeline: Timeline;
  private judgement?: { lifecycle: Lifecycle; policy: PodTerminationPolicy; lwsUid?: string };

  constructor(
    private readonly ref: ObjectKey,
    private readonly groupIndex: number,
    lifecycle: Lifecycle,
  ) {
    this.timeline = new Timeline(this.title(lifecycle));
  }

  get entries(): TimelineEntry[] {
    return this.timeline.entries;
  }

  at(step: TeardownStep): string | undefined {
    return this.timeline.at(step);
  }

  /** The latest of these steps' times, or undefined if none happened. */
  latest(...steps: TeardownStep[]): string | undefined {
    return this.timeline.latest(...steps);
  }

  /** Once judged: what the title and the Events say; no LWS uid, no Events (it is gone, or not the group's). */
  setJudgement(judgement: { lifecycle: Lifecycle; policy: PodTerminationPolicy; lwsUid?: string }): void {
    this.judgement = judgement;
    this.timeline.title = this.title(judgement.lifecycle);
  }

  /** Steps that happened together: on the timeline, and as Events on the LWS in one call. */
  async record(...steps: Step[]): Promise<void> {
    this.add(...steps);
    if (!this.judgement?.lwsUid || steps.length === 0) return;
    const events = steps.map((s) => this.eventOf(s));
    if (events.length === 1) await kube.recordEvent(events[0]!);
    else await kube.recordEvents(events);
  }

  /** The Events of the steps a wait's end makes, for the wait to record as it ends; none when the LWS gets none. */
  eventsForWait(...steps: Step[]): { tell?: KubernetesEvent[] } {
    return this.judgement?.lwsUid && steps.length > 0 ? { tell: steps.map((s) => this.eventOf(s)) } : {};
  }

  /** On the timeline only: steps whose Events the wait that saw them recorded (eventsForWait). */
  add(...steps: Step[]): void {
    for (const { step, at, detail } of steps) this.timeline.add(step, at, detail);
  }

  /** What did not happen, and why: on the timeline only, nothing to report on the LWS. */
  skipped(detail: string): void {
    this.timeline.add('skipped', undefined, detail);
  }

  private eventOf({ step, detail }: Step): KubernetesEvent {
    const { lifecycle, policy, lwsUid } = this.judgement!;
    return {
      lws: { ...this.ref, uid: lwsUid ?? '' },
      type: WARNINGS.has(step) ? 'Warning' : 'Normal',
      reason: REASONS[step],
      message: `group ${this.groupIndex} (${lifecycle}, ${policy}): ${step}${detail ? `: ${detail}` : ''}`,
    };
  }

  private title(lifecycle: Lifecycle): string {
    return `${lifecycle} of group ${this.groupIndex} of ${this.ref.namespace}/${this.ref.name}`;
  }
}
