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

/** The last refused update of a named resource (Envoy's UpdateFailureState, for /config_dump). */
export interface UpdateFailure {
  name: string;
  /** ms since the epoch. */
  lastUpdateAttemptMs: number;
  details: string;
  versionInfo: string;
}

/** The bootstrap's clusters. */
export function bootstrapClusterConfigs(bootstrap: JsonObject): JsonObject[] {
  return list(obj(bootstrap.static_resources).clusters);
}

/** A route configuration from the route discovery service, as every worker routes by it. */
export interface RouteResource {
  name: string;
  /** envoy.config.route.v3.RouteConfiguration, canonical JSON. */
  config: JsonObject;
  versionInfo: string;
  /** ms since the epoch. */
  lastUpdatedMs: number;
}

/** Each HTTP connection manager of the bootstrap's listeners that takes its routes by RDS: its stat prefix, route name and source. */
export function rdsUsers(bootstrap: JsonObject): { statPrefix: string; name: string; source: JsonObject }[] {
  const out: { statPrefix: string; name: string; source: JsonObject }[] = [];
  for (const l of list(obj(bootstrap.static_resources).listeners)) {
    for (const chain of [...list(l.filter_chains), ...(l.default_filter_chain ? [obj(l.default_filter_chain)] : [])]) {
      for (const f of list(chain.filters)) {
        const rds = obj(obj(f.typed_config).rds);
        if (typeof rds.route_config_name === 'string') out.push({ statPrefix: String(obj(f.typed_config).stat_prefix), name: rds.route_config_name, source: obj(rds.config_source) });
      }
    }
  }
  return out;
}
