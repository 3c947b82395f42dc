import { cryptoModule } from '../builtins.js';
import type { TlsContext } from '../extensions/transport-sockets/tls/context.js';
import { list, obj } from './access.js';
import type { JsonObject } from './proto-json.js';
import type { Cluster, Listener, RouteConfiguration } from './envoy-types.js';

/**
 * A cluster as the tree serves it: its configuration (envoy.config.cluster.v3.Cluster, canonical
 * JSON, validated once by the loader) and where it came from. The supervisor's cluster manager
 * holds these; every child gets the same objects in its context, whatever their source.
 */
export interface ClusterResource {
  name: string;
  config: Cluster;
  /** False for a bootstrap cluster; true for one from the cluster discovery service. */
  addedViaApi: boolean;
  /** The discovery response's version_info it arrived with (a bootstrap cluster has none). */
  versionInfo?: string;
  /** ms since the epoch. */
  lastUpdatedMs: number;
  /** Its circuit-breaker counts' place in the tree's region (shared/upstream/breaker-counts.ts). */
  breakerSlot: number;
  /** A CDS cluster's TLS context (UpstreamTlsContext), read by the supervisor; a bootstrap cluster's is in the context's `tls`. */
  tls?: TlsContext;
  /** A CDS cluster's transport_socket_matches entries' contexts, in order (undefined: plaintext); a bootstrap cluster's are in the context's `tls` by clusterMatchKey. */
  matchTls?: (TlsContext | undefined)[];
}

/** The last refused update of a named resource (Envoy's UpdateFailureState, for /config_dump). */
export interface UpdateFailure {
  name: string;
  /** ms since the epoch. */
  lastUpdateAttemptMs: number;
  details: string;
  versionInfo: string;
}

/**
 * The names of the bootstrap's listeners, in order: its own, or (as Envoy's listener manager
 * does for a listener without one) a random UUID. Minted once, by the load, so that the TLS
 * contexts, the listener manager, the workers and the admin all find a listener by the same name.
 */
export function staticListenerNames(bootstrap: JsonObject): string[] {
  return list(obj(bootstrap.static_resources).listeners).map((l) => (typeof l.name === 'string' && l.name !== '' ? l.name : cryptoModule().randomUUID()));
}

/** The bootstrap's clusters. */
export function bootstrapClusterConfigs(bootstrap: JsonObject): JsonObject[] {
  return list(obj(bootstrap.static_resources).clusters);
}

/** A route configuration from the route discovery service, as every worker routes by it. */
export interface RouteResource {
  name: string;
  /** Canonical JSON. */
  config: RouteConfiguration;
  versionInfo: string;
  /** ms since the epoch. */
  lastUpdatedMs: number;
  /** The token-bucket slots of its local rate limits (shared/ratelimit/bucket-slots.ts). */
  bucketSlots: number[];
}

export type TrafficDirection = 'UNSPECIFIED' | 'INBOUND' | 'OUTBOUND';

/**
 * A listener as the tree serves it: its configuration (envoy.config.listener.v3.Listener,
 * canonical JSON), where it came from, and the listening socket it accepts on. The supervisor's
 * listener manager holds these; workers serve them and the admin shows them, whatever their
 * source (the bootstrap, or the listener discovery service).
 */
export interface ListenerResource {
  name: string;
  config: Listener;
  /** False for a bootstrap listener; true for one from the listener discovery service. */
  addedViaApi: boolean;
  /** The discovery response's version_info it arrived with (a bootstrap listener has none). */
  versionInfo?: string;
  /** ms since the epoch. */
  lastUpdatedMs: number;
  /** The listening socket it accepts on, by id in the supervisor's socket table (a modified listener on the same address keeps it). */
  socketId: number;
  /** `127.0.0.1:10000`, `[::1]:10000` or a pipe path, with the real port. */
  address: string;
  /** additional_addresses (bootstrap listeners): their sockets, and their addresses as `address` is written. */
  additional?: { socketIds: number[]; addresses: string[] };
  trafficDirection: TrafficDirection;
  /** The TLS contexts of its filter chains, by chain (`0`, `1`, …, `default`), read by the supervisor. */
  tls: Record<string, TlsContext>;
  /** Stopped by /drain_listeners: not served any more (a replacement worker leaves it alone). */
  stopped: boolean;
  /** The token-bucket slots of each filter chain's local rate limits, by chain key (shared/ratelimit/bucket-slots.ts). */
  bucketSlots: Record<string, number[]>;
  /** Where its open connections are counted for the whole tree (shared/upstream/breaker-counts.ts, listenerRegionSlot). */
  connectionSlot: number;
}

/** A listener's filter chains with their keys (`0`, `1`, …, and `default` for the default chain). */
export function filterChainsOf(listener: Listener): [key: string, chain: JsonObject][] {
  const chains: [string, JsonObject][] = list(listener.filter_chains).map((c, i) => [String(i), c]);
  if (listener.default_filter_chain) chains.push(['default', obj(listener.default_filter_chain)]);
  return chains;
}

/** Each HTTP connection manager of the bootstrap's listeners that takes its routes by RDS: its stat prefix, route name and source. */
export function rdsUsers(bootstrap: JsonObject): { statPrefix: string; name: string; source: JsonObject }[] {
  return rdsUsersOf(list(obj(bootstrap.static_resources).listeners));
}

/** Each HTTP connection manager of these listeners that takes its routes by RDS. */
export function rdsUsersOf(listeners: readonly Listener[]): { statPrefix: string; name: string; source: JsonObject }[] {
  const out: { statPrefix: string; name: string; source: JsonObject }[] = [];
  for (const l of listeners) {
    for (const chain of [...list(l.filter_chains), ...(l.default_filter_chain ? [obj(l.default_filter_chain)] : [])]) {
      for (const f of list(chain.filters)) {
        const rds = obj(obj(f.typed_config).rds);
        if (typeof rds.route_config_name === 'string') out.push({ statPrefix: String(obj(f.typed_config).stat_prefix), name: rds.route_config_name, source: obj(rds.config_source) });
      }
    }
  }
  return out;
}

/** Every listening socket a listener accepts on: its address's, then its additional_addresses'. */
export function socketIdsOf(resource: Pick<ListenerResource, 'socketId' | 'additional'>): number[] {
  return resource.additional ? [resource.socketId, ...resource.additional.socketIds] : [resource.socketId];
}
