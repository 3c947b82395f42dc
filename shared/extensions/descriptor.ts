import type { JsonObject } from '../config/proto-json.js';
import type { FilterContext, HttpFilterFactory } from '../http/filter-api.js';
import type { ConfigError } from '../config/config-error.js';
import type { Tracer, TracerServices } from '../tracing/span.js';
import type { RetryHostPredicate, RetryPriority } from '../http/retry-plugins.js';
import type { ListenerFilter } from '../network/listener-filter.js';
import type { LbPolicy } from '../upstream/lb-policy.js';
import type { OriginalIpDetection } from '../http/original-ip.js';

/**
 * What this proxy knows of one Envoy extension: its names, its configuration's type, what it does.
 * A `typed_config` of a type no descriptor names is refused, naming its type URL; /server_info
 * lists the descriptors as `node.extensions`; docs/features.md is generated from them.
 */
export interface ExtensionDescriptor {
  /** Envoy's name for it (`envoy.filters.http.cors`). */
  readonly name: string;
  /** Envoy's category (`envoy.filters.http`), as --disable-extensions names it. */
  readonly category: string;
  /** Its configuration's message (the typed_config's type URL without its prefix). */
  readonly typeName: string;
  /** What it does, in one line (docs/features.md). */
  readonly description: string;
  /** Names that older bootstraps use for the same extension (v2 era). */
  readonly deprecatedNames: readonly string[];
  /** Its per-route configuration's message (typed_per_filter_config), if it has one. */
  readonly perRouteTypeName?: string;
  /**
   * The fields this proxy implements of its messages that it implements in part: a field not
   * listed is refused, naming it (shared/config/supported.ts). A message of its listed nowhere is
   * implemented whole (shared/config/implemented-whole.ts).
   */
  readonly fields?: Readonly<Record<string, readonly string[]>>;
  /** Why a refused field is refused, or what to use instead, by `<message>.<field>`. */
  readonly refusalReasons?: Readonly<Record<string, string>>;
  /** Messages it reads from typed metadata (`typed_filter_metadata`), accepted there. */
  readonly metadataTypeNames?: readonly string[];
}

/**
 * An HTTP filter: how its configuration is checked (beyond its proto's rules, as Envoy's factory
 * checks it when it builds the filter; each error names the field), and how a worker builds it.
 */
export interface HttpFilterDescriptor extends ExtensionDescriptor {
  readonly category: 'envoy.filters.http';
  /** The filter's own configuration (at `path`, its typed_config). */
  validate?(config: JsonObject, path: string, errors: ConfigError[]): void;
  /** A route's or virtual host's configuration for it (of perRouteTypeName), at `path`. */
  validatePerRoute?(config: JsonObject, path: string, errors: ConfigError[]): void;
  /** The filter as one connection manager configures it: makes an instance per request. */
  create(name: string, config: JsonObject, ctx: FilterContext): HttpFilterFactory;
}

/**
 * The filter that ends an HTTP chain, as Envoy's terminal filters do (its router): it must be the
 * last of `http_filters`, and the connection manager runs it once the chain has let the request
 * through (worker/http/route-dispatch.ts), so that it always runs where it is configured.
 */
export interface TerminalHttpFilterDescriptor extends ExtensionDescriptor {
  readonly category: 'envoy.filters.http';
  readonly terminal: true;
  /** Its configuration (at `path`, its typed_config). */
  validate?(config: JsonObject, path: string, errors: ConfigError[]): void;
}

/** A tracer: how its configuration is checked, and how a worker makes it (one per configuration). */
export interface TracerDescriptor extends ExtensionDescriptor {
  readonly category: 'envoy.tracers';
  /** Its configuration (at `path`, its typed_config); `clusters`: the static clusters it may report to. */
  validate?(config: JsonObject, path: string, clusters: Set<string>, errors: ConfigError[]): void;
  create(config: JsonObject, services: TracerServices): Tracer;
}

/** A retry host predicate (retry_policy.retry_host_predicate): makes one request's predicate. */
export interface RetryHostPredicateDescriptor extends ExtensionDescriptor {
  readonly category: 'envoy.retry_host_predicates';
  create(config: JsonObject): () => RetryHostPredicate;
}

/** A retry priority (retry_policy.retry_priority): makes one request's priority. */
export interface RetryPriorityDescriptor extends ExtensionDescriptor {
  readonly category: 'envoy.retry_priorities';
  create(config: JsonObject): () => RetryPriority;
}

/** A listener filter: makes, for one listener, a filter per new connection (shared/network/listener-filter.ts). */
export interface ListenerFilterDescriptor extends ExtensionDescriptor {
  readonly category: 'envoy.filters.listener';
  /** Its checks beyond the proto's rules, as Envoy's factory makes them; each error names the field. */
  validate?(config: JsonObject, path: string, errors: ConfigError[]): void;
  create(config: JsonObject): () => ListenerFilter;
}

/** What a network filter's or UDP proxy's configuration may name: the clusters there are. */
export interface ConfigReferences {
  /** The static clusters (a bootstrap's), or every cluster known when the resource arrives. */
  readonly clusters: ReadonlySet<string>;
  /**
   * The resource came from a discovery service: a cluster it names may not be there yet (Envoy
   * serves such a listener and closes its connections until the cluster comes).
   */
  readonly dynamic: boolean;
}

/**
 * A network filter. Every one this proxy has ends its filter chain, as Envoy's terminal filters do
 * (the connection manager, the TCP proxy); the worker runs it on each connection its chain takes
 * (worker/listeners.ts).
 */
export interface NetworkFilterDescriptor extends ExtensionDescriptor {
  readonly category: 'envoy.filters.network';
  readonly terminal: true;
  /** Its configuration (at `path`, its typed_config). */
  validate?(config: JsonObject, path: string, refs: ConfigReferences, errors: ConfigError[]): void;
}

/** A UDP listener filter: the UDP proxy. */
export interface UdpListenerFilterDescriptor extends ExtensionDescriptor {
  readonly category: 'envoy.filters.udp_listener';
  validate(config: JsonObject, path: string, refs: ConfigReferences, errors: ConfigError[]): void;
}

/**
 * A transport socket: what a listener's filter chain (downstream) or a cluster's connections
 * (upstream) speak over TCP. `tls`: its configuration is a TLS context, loaded with its
 * certificates by the supervisor (shared/extensions/transport-sockets/tls/).
 */
export interface TransportSocketDescriptor extends ExtensionDescriptor {
  readonly category: 'envoy.transport_sockets.downstream' | 'envoy.transport_sockets.upstream';
  readonly tls: boolean;
}

/**
 * A load-balancing policy (a cluster's load_balancing_policy.policies[].typed_extension_config):
 * the host choice it configures, in the terms the workers' balancers take.
 */
export interface LoadBalancingPolicyDescriptor extends ExtensionDescriptor {
  readonly category: 'envoy.load_balancing_policies';
  /** Its configuration (at `path`, its typed_config), beyond its proto's rules. */
  validate?(config: JsonObject, path: string, errors: ConfigError[]): void;
  policy(config: JsonObject): LbPolicy;
}

/**
 * An original IP detection extension (HttpConnectionManager.original_ip_detection_extensions):
 * how the connection manager finds the client's address when it does not take the peer's.
 */
export interface OriginalIpDetectionDescriptor extends ExtensionDescriptor {
  readonly category: 'envoy.http.original_ip_detection';
  /** Its configuration (at `path`, its typed_config), beyond its proto's rules. */
  validate?(config: JsonObject, path: string, errors: ConfigError[]): void;
  create(config: JsonObject): OriginalIpDetection;
}

/** An access logger: where an `access_log` entry's lines go. */
export interface AccessLoggerDescriptor extends ExtensionDescriptor {
  readonly category: 'envoy.access_loggers';
  /** A file (its path), or standard output or error (path ''). */
  destination(config: JsonObject): { path: string; stdFd: 1 | 2 };
}

export function isHttpFilter(d: ExtensionDescriptor): d is HttpFilterDescriptor {
  return d.category === 'envoy.filters.http' && 'create' in d;
}

export function isTerminalHttpFilter(d: ExtensionDescriptor): d is TerminalHttpFilterDescriptor {
  return d.category === 'envoy.filters.http' && 'terminal' in d && d.terminal === true;
}

export function isTracer(d: ExtensionDescriptor): d is TracerDescriptor {
  return d.category === 'envoy.tracers' && 'create' in d;
}

export function isListenerFilter(d: ExtensionDescriptor): d is ListenerFilterDescriptor {
  return d.category === 'envoy.filters.listener' && 'create' in d;
}

export function isNetworkFilter(d: ExtensionDescriptor): d is NetworkFilterDescriptor {
  return d.category === 'envoy.filters.network' && 'terminal' in d;
}

export function isUdpListenerFilter(d: ExtensionDescriptor): d is UdpListenerFilterDescriptor {
  return d.category === 'envoy.filters.udp_listener' && 'validate' in d;
}

export function isTransportSocket(d: ExtensionDescriptor): d is TransportSocketDescriptor {
  return (d.category === 'envoy.transport_sockets.downstream' || d.category === 'envoy.transport_sockets.upstream') && 'tls' in d;
}

export function isAccessLogger(d: ExtensionDescriptor): d is AccessLoggerDescriptor {
  return d.category === 'envoy.access_loggers' && 'destination' in d;
}
