import { list, obj } from '../config/access.js';
import type { JsonObject } from '../config/proto-json.js';
import { compileRuntimeFraction } from '../runtime.js';

/** RouteAction.request_mirror_policies, compiled (the workers send the copies: worker/http/mirror.ts). */

export interface MirrorPolicy {
  cluster: string | undefined;
  clusterHeader: string | undefined;
  enabled: () => boolean;
  appendSuffix: boolean;
}

export function compileMirrorPolicies(action: JsonObject): MirrorPolicy[] | undefined {
  const policies = list(action.request_mirror_policies).map((p) => ({
    cluster: typeof p.cluster === 'string' && p.cluster ? p.cluster : undefined,
    clusterHeader: typeof p.cluster_header === 'string' && p.cluster_header ? p.cluster_header.toLowerCase() : undefined,
    enabled: p.runtime_fraction !== undefined ? compileRuntimeFraction(obj(p.runtime_fraction)) : () => true,
    appendSuffix: p.disable_shadow_host_suffix_append !== true,
  }));
  return policies.length ? policies : undefined;
}

