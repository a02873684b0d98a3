// The API clients every activity shares, made once per worker from one KubeConfig.
import * as k8s from '@kubernetes/client-node';
import { podsJson, statefulSetsJson, type JsonResource } from './kube-json.js';

export interface KubeClients {
  kc: k8s.KubeConfig;
  /** Events and Services: a few calls per group, through the typed client. */
  core: k8s.CoreV1Api;
  /** LeaderWorkerSets. */
  custom: k8s.CustomObjectsApi;
  /** The hot paths, as plain JSON (kube-json.ts). */
  pods: JsonResource<k8s.V1Pod>;
  statefulSets: JsonResource<k8s.V1StatefulSet>;
}

export function makeClients(kc: k8s.KubeConfig): KubeClients {
  return {
    kc,
    core: kc.makeApiClient(k8s.CoreV1Api),
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
    pods: podsJson(kc),
    statefulSets: statefulSetsJson(kc),
  };
}

/** Request options that send a body as a JSON merge patch (client-node 1.x otherwise picks JSON Patch). */
export const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
