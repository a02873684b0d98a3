// The headless Services' network settings that the spec controls.
import type { DefaultedLeaderWorkerSetSpec, LeaderWorkerSetSpec } from './types.js';

/**
 * spec.publishNotReadyAddresses of the LWS's headless Services. Unset means true: upstream has published not-ready
 * pods since its PR #105 (members find each other while they start), and KEP-820's "default false" would change the
 * DNS of every running LWS.
 */
export function publishNotReadyAddresses(
  spec: Pick<LeaderWorkerSetSpec, 'networkConfig'> | Pick<DefaultedLeaderWorkerSetSpec, 'networkConfig'>,
): boolean {
  return spec.networkConfig?.publishNotReadyAddresses ?? true;
}
