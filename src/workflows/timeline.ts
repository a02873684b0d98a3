// What happened to a group, in order, with times: what a platform engineer reads in the Web UI.
import { defineQuery, setHandler, setCurrentDetails } from '@temporalio/workflow';
import { latestOf } from '../shared/instants.js';

export type TimelineEvent =
  | 'leader terminating'
  | 'workers terminating'
  | 'leader gone'
  | 'workers gone'
  | 'old StatefulSet gone'
  | 'pod force-deleted'
  | 'waiting for old StatefulSet'
  | 'new leader'
  | 'leader ready'
  | 'leader scheduled'
  | 'workers created'
  | 'waiting for old pods'
  | 'old pods gone'
  | 'workers refused'
  | 'new group ready'
  | 'backing off'
  | 'group recreated'
  | 'restart budget spent'
  | 'group recovered'
  | 'skipped';

export interface TimelineEntry {
  event: TimelineEvent;
  /** RFC 3339 with milliseconds: when it was observed (by an activity, or workflow time). */
  at: string;
  detail?: string;
}

export const timelineQuery = defineQuery<TimelineEntry[]>('timeline');

/** Collects entries, answers the `timeline` query, and mirrors the latest step into the UI's current details. */
export class Timeline {
  readonly entries: TimelineEntry[] = [];

  /** The first line of the UI's current details. */
  constructor(public title: string) {
    setHandler(timelineQuery, () => this.entries);
  }

  /** `at` defaults to workflow time, which is deterministic (the time of the current workflow task). */
  add(event: TimelineEvent, at?: string, detail?: string): void {
    const entry = { event, at: at ?? new Date().toISOString(), ...(detail ? { detail } : {}) };
    this.entries.splice(placeInTime(this.entries, entry.at), 0, entry);
    const lines = this.entries.map((e) => `${e.at.slice(11, 23)}  ${e.event}${e.detail ? ` (${e.detail})` : ''}`);
    setCurrentDetails(`**${this.title}**\n\n${lines.join('\n')}`);
  }

  at(event: TimelineEvent): string | undefined {
    return this.entries.find((e) => e.event === event)?.at;
  }

  /** The latest of these events' times, or undefined if none happened. */
  latest(...events: TimelineEvent[]): string | undefined {
    return latestOf(events.map((e) => this.at(e)));
  }
}

/**
 * Where an entry goes so that the timeline stays in time order, whatever order concurrent waits reported in: after
 * every entry at the same instant or earlier. Instants, not strings: `...:20Z` is before `...:20.812Z`, which sorts
 * before it as text.
 */
export function placeInTime(entries: readonly TimelineEntry[], at: string): number {
  const after = entries.findIndex((e) => Date.parse(e.at) > Date.parse(at));
  return after === -1 ? entries.length : after;
}
