// Kubernetes Events on the LWS, so that `kubectl describe lws` tells the story the workflows tell.
import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { ApiException } from '@kubernetes/client-node';
import { API_GROUP_VERSION, KIND } from '../model/index.js';
import { activityExecutionKey, log } from './activity-context.js';
import type { KubeClients } from './clients.js';
import type { EventJson } from '../kube/kube-json.js';
import { apiStatusOf, isHttpConflict, isPermanentHttpError } from '../kube/api-errors.js';
import { classify } from './kube-errors.js';
import type { KubernetesEvent } from './types.js';
import { allSettledOrThrow } from '../shared/all-settled.js';
import { NAMESPACE_TERMINATING } from '../shared/failures.js';
import { withHeartbeats } from './wait-support.js';

export const REPORTING_COMPONENT = 'lws-temporal';
/** The API server refuses longer messages. */
const MAX_MESSAGE_LENGTH = 1024;

/** From the activity's identity, so that a retry re-creates the same Event (a 409, taken as done); elsewhere random. */
function eventName(lwsName: string, indexInCall: number): string {
  const key = activityExecutionKey();
  const suffix =
    key === undefined
      ? randomBytes(8).toString('hex')
      : createHash('sha1').update(`${key}#${indexInCall}`).digest('hex').slice(0, 16);
  return `${lwsName}.${suffix}`;
}

/** False when refused for good: an Event is a report, so it is logged and dropped, as Kubernetes' recorders do. */
export async function recordEvent(c: KubeClients, event: KubernetesEvent, indexInCall = 0): Promise<boolean> {
  const { namespace, name, uid } = event.lws;
  const at = new Date();
  const message =
    event.message.length > MAX_MESSAGE_LENGTH ? `${event.message.slice(0, MAX_MESSAGE_LENGTH - 3)}...` : event.message;
  const body: EventJson = {
    metadata: { name: eventName(name, indexInCall), namespace },
    involvedObject: { apiVersion: API_GROUP_VERSION, kind: KIND, name, namespace, uid },
    type: event.type,
    reason: event.reason,
    message,
    action: event.reason,
    count: 1,
    firstTimestamp: at.toISOString(),
    lastTimestamp: at.toISOString(),
    // metav1.MicroTime wants exactly six fractional digits.
    eventTime: at.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z'),
    source: { component: REPORTING_COMPONENT },
    reportingComponent: REPORTING_COMPONENT,
    reportingInstance: `${REPORTING_COMPONENT}-${hostname()}`.slice(0, 128),
  };
  try {
    await c.events.create(namespace, body);
    return true;
  } catch (err) {
    if (isHttpConflict(err)) return true; // this activity's Event already exists
    if (!isPermanentHttpError(err)) throw classify(err);
    const status = apiStatusOf(err as ApiException<unknown>);
    // A namespace being deleted refuses every Event of the teardowns it causes: expected, so not a warning.
    const expected = status.causes?.includes(NAMESPACE_TERMINATING) ?? false;
    log(expected ? 'debug' : 'warn', 'Event not recorded: the API server refused it', {
      // `namespace` is Temporal's in an activity's log.
      lws: `${namespace}/${name}`,
      reason: event.reason,
      code: status.code,
      apiMessage: status.message,
    });
    return false;
  }
}

/** Several Events in one activity, each named after its place in the call, so that a retry records none twice. */
export async function recordEvents(c: KubeClients, events: KubernetesEvent[]): Promise<boolean[]> {
  return allSettledOrThrow(events.map((event, i) => recordEvent(c, event, i)));
}

/**
 * A wait's result once the Events it was given are recorded: named after the activity, so a retry adds none. Still
 * beating: on a saturated API server an Event can take longer than the wait's heartbeat timeout. `told`: whether this
 * result is the end the Events tell of.
 */
export async function tellWhenDone<R>(
  c: KubeClients,
  waiting: Promise<R>,
  events: KubernetesEvent[] | undefined,
  told: (result: R) => boolean = () => true,
) {
  const result = await waiting;
  if (events !== undefined && events.length > 0 && told(result)) {
    await withHeartbeats('recording its Events', () => recordEvents(c, events));
  }
  return result;
}
