import { list, obj } from './access.js';
import type { JsonObject } from './proto-json.js';

/**
 * A cluster as the tree serves it: its configuration (envoy.config.cluster.v3.Cluster, canonical
 * JSON, validated once by the loader) and where it came from. The supervisor's cluster manager
 * holds these; every child gets the same objects in its context, whatever their source.
 */
export interface ClusterResource {
  name: string;
  config: JsonObject;
  /** False for a bootstrap cluster; true for one from the cluster discovery service. */
  addedViaApi: boolean;
  /** The discovery response's version_info it arrived with (a bootstrap cluster has none). */
  versionInfo?: string;
  /** ms since the epoch. */
  lastUpdatedMs: number;
  /** Its circuit-breaker counts' place in the tree's region (shared/upstream/breaker-counts.ts). */
  breakerSlot: number;
}

/** The bootstrap's clusters. */
export function bootstrapClusterConfigs(bootstrap: JsonObject): JsonObject[] {
  return list(obj(bootstrap.static_resources).clusters);
}
