// Kubernetes Events on the LWS, so that `kubectl describe lws` tells the story the workflows tell.
import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { V1MicroTime, type CoreV1Event } from '@kubernetes/client-node';
import { API_GROUP_VERSION, KIND } from '../model/index.js';
import { activityExecutionKey } from './activity-context.js';
import type { KubeClients } from './clients.js';
import { classify, isConflict } from './kube-errors.js';
import type { KubernetesEvent } from './types.js';

export const REPORTING_COMPONENT = 'lws-temporal';
/** The API server refuses longer messages. */
const MAX_MESSAGE_LENGTH = 1024;

/**
 * `<lws>.<16 hex>`. Inside an activity the suffix comes from the activity's identity, so a retry of the same
 * activity re-creates the same Event (a 409, taken as done) instead of a duplicate; elsewhere it is random.
 */
function eventName(lwsName: string): string {
  const key = activityExecutionKey();
  const suffix =
    key === undefined ? randomBytes(8).toString('hex') : createHash('sha1').update(key).digest('hex').slice(0, 16);
  return `${lwsName}.${suffix}`;
}

export async function recordEvent(c: KubeClients, event: KubernetesEvent): Promise<void> {
  const { namespace, name, uid } = event.lws;
  const at = new Date();
  const message =
    event.message.length > MAX_MESSAGE_LENGTH ? `${event.message.slice(0, MAX_MESSAGE_LENGTH - 3)}...` : event.message;
  const body: CoreV1Event = {
    metadata: { name: eventName(name), namespace },
    involvedObject: { apiVersion: API_GROUP_VERSION, kind: KIND, name, namespace, uid },
    type: event.type,
    reason: event.reason,
    message,
    action: event.reason,
    count: 1,
    firstTimestamp: at,
    lastTimestamp: at,
    // A plain Date would be sent with three fractional digits, which metav1.MicroTime refuses; this sends six.
    eventTime: new V1MicroTime(at.getTime()),
    source: { component: REPORTING_COMPONENT },
    reportingComponent: REPORTING_COMPONENT,
    reportingInstance: `${REPORTING_COMPONENT}-${hostname()}`.slice(0, 128),
  };
  try {
    await c.core.createNamespacedEvent({ namespace, body });
  } catch (err) {
    if (!isConflict(err)) throw classify(err); // 409: this activity's event already exists
  }
}
