// Search attributes that let the Temporal Web UI filter lifecycle runs by cluster, LWS, group, policy and lifecycle,
// e.g. `LwsCluster = "prod-1" AND LwsName = "demo" AND TerminationPolicy = "Parallel"`. The dev server registers them at start; for a
// production server see docs/install.md ("Search attributes").
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const LwsCluster = defineSearchAttributeKey('LwsCluster', SearchAttributeType.KEYWORD);
export const LwsNamespace = defineSearchAttributeKey('LwsNamespace', SearchAttributeType.KEYWORD);
export const LwsName = defineSearchAttributeKey('LwsName', SearchAttributeType.KEYWORD);
export const GroupIndex = defineSearchAttributeKey('GroupIndex', SearchAttributeType.INT);
export const TerminationPolicy = defineSearchAttributeKey('TerminationPolicy', SearchAttributeType.KEYWORD);
export const Lifecycle = defineSearchAttributeKey('Lifecycle', SearchAttributeType.KEYWORD);

export const allSearchAttributes = [LwsCluster, LwsNamespace, LwsName, GroupIndex, TerminationPolicy, Lifecycle];
