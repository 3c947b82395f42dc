import type { AnyUse } from './proto-json.js';

/**
 * The extensions this proxy implements, by Envoy's names, categories and v3 config types.
 * A `typed_config` of any other type is a validation error naming its type URL, so that a
 * bootstrap never loads with a filter that would silently do nothing.
 */
export interface Extension {
  name: string;
  category: string;
  typeName: string;
  /** What it does, in one line (docs/features.md). */
  description: string;
  /** Names that older bootstraps use for the same extension (v2 era). */
  deprecatedNames: string[];
  /** Its per-route configuration type (typed_per_filter_config), if it has one. */
  perRouteTypeName?: string;
}

export const EXTENSIONS: readonly Extension[] = [
  {
    name: 'envoy.filters.network.http_connection_manager',
    category: 'envoy.filters.network',
    typeName: 'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
    description: 'HTTP/1.1 and HTTP/2 connections: routes, HTTP filters, the router',
    deprecatedNames: ['envoy.http_connection_manager'],
  },
  {
    name: 'envoy.filters.network.tcp_proxy',
    category: 'envoy.filters.network',
    typeName: 'envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy',
    description: 'TCP proxying to a cluster (weighted clusters, idle timeout, access logs)',
    deprecatedNames: ['envoy.tcp_proxy'],
  },
  {
    name: 'envoy.filters.http.router',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.router.v3.Router',
    description: 'forwards requests to the route\'s cluster: retries, timeouts, shadowing',
    deprecatedNames: ['envoy.router'],
  },
  {
    // Upstream protocol options (typed_extension_protocol_options): explicit HTTP/1.1 or HTTP/2.
    name: 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
    category: 'envoy.upstream_options',
    typeName: 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
    description: 'a cluster\'s upstream protocol (HTTP/1.1 or HTTP/2) and its options',
    deprecatedNames: [],
  },
  {
    name: 'envoy.filters.http.health_check',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.health_check.v3.HealthCheck',
    description: 'answers or passes health checks; fails them while the proxy drains',
    deprecatedNames: ['envoy.health_check'],
  },
  {
    // Cross-origin requests: preflights answered, allowed origins' responses decorated (worker/http/filters/cors.ts).
    name: 'envoy.filters.http.cors',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.cors.v3.Cors',
    description: 'cross-origin requests: preflights answered, allowed origins\' responses decorated',
    deprecatedNames: ['envoy.cors'],
    perRouteTypeName: 'envoy.extensions.filters.http.cors.v3.CorsPolicy',
  },
  {
    // State-changing requests must come from their own origin (worker/http/filters/csrf.ts); per route too.
    name: 'envoy.filters.http.csrf',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.csrf.v3.CsrfPolicy',
    description: 'refuses state-changing requests from another origin',
    deprecatedNames: ['envoy.csrf'],
  },
  {
    // Delays and aborts injected (worker/http/filters/fault.ts); per route too.
    name: 'envoy.filters.http.fault',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.fault.v3.HTTPFault',
    description: 'injects delays and aborts, by share of requests, header or runtime',
    deprecatedNames: ['envoy.fault'],
  },
  {
    // Role-based access control by policies of permissions and principals (worker/http/filters/rbac.ts).
    name: 'envoy.filters.http.rbac',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.rbac.v3.RBAC',
    description: 'allows or denies requests by policies of permissions and principals',
    deprecatedNames: [],
    perRouteTypeName: 'envoy.extensions.filters.http.rbac.v3.RBACPerRoute',
  },
  {
    // Responses compressed for clients that accept it (worker/http/filters/compressor.ts), with one of the libraries below.
    name: 'envoy.filters.http.compressor',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.compressor.v3.Compressor',
    description: 'compresses responses (gzip, brotli) the client accepts',
    deprecatedNames: [],
    perRouteTypeName: 'envoy.extensions.filters.http.compressor.v3.CompressorPerRoute',
  },
  {
    // Requests held until their body has arrived whole (worker/http/filters/buffer.ts); per route too.
    name: 'envoy.filters.http.buffer',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.buffer.v3.Buffer',
    description: 'reads the whole request body before it goes on (413 past the limit)',
    deprecatedNames: ['envoy.buffer'],
    perRouteTypeName: 'envoy.extensions.filters.http.buffer.v3.BufferPerRoute',
  },
  {
    // Requests checked with an authorization service, HTTP or gRPC (worker/http/filters/ext-authz/); per route too.
    name: 'envoy.filters.http.ext_authz',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.ext_authz.v3.ExtAuthz',
    description: 'asks an external gRPC or HTTP service whether a request may go on',
    deprecatedNames: ['envoy.ext_authz'],
    perRouteTypeName: 'envoy.extensions.filters.http.ext_authz.v3.ExtAuthzPerRoute',
  },
  {
    // gRPC-Web clients to gRPC services: requests, responses and trailers translated (worker/http/filters/grpc-web.ts).
    name: 'envoy.filters.http.grpc_web',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.grpc_web.v3.GrpcWeb',
    description: 'translates gRPC-Web requests and responses to and from gRPC',
    deprecatedNames: ['envoy.grpc_web'],
  },
  {
    // Headers and cookies written as dynamic metadata (worker/http/filters/header-to-metadata.ts); per route too.
    name: 'envoy.filters.http.header_to_metadata',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.header_to_metadata.v3.Config',
    description: 'copies request or response headers (or cookies) into dynamic metadata',
    deprecatedNames: [],
    perRouteTypeName: 'envoy.extensions.filters.http.header_to_metadata.v3.Config',
  },
  {
    // Lua scripts with Envoy's stream handle API, on wasmoon (worker/http/filters/lua.ts); per route too.
    name: 'envoy.filters.http.lua',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.lua.v3.Lua',
    description: 'runs Lua scripts on requests and responses (Envoy\'s stream handle API)',
    deprecatedNames: ['envoy.lua'],
    perRouteTypeName: 'envoy.extensions.filters.http.lua.v3.LuaPerRoute',
  },
  {
    // Requests limited by a rate-limit service (RateLimitService/ShouldRateLimit) (worker/http/filters/ratelimit.ts); per route too.
    name: 'envoy.filters.http.ratelimit',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.ratelimit.v3.RateLimit',
    description: 'asks a rate-limit service (Envoy\'s RateLimitService API) about each request',
    deprecatedNames: ['envoy.rate_limit'],
    perRouteTypeName: 'envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute',
  },
  {
    // Token buckets the whole tree shares (worker/http/filters/local-ratelimit.ts); per route too.
    name: 'envoy.filters.http.local_ratelimit',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit',
    description: 'token buckets shared by every worker, per descriptor or per connection',
    deprecatedNames: [],
    perRouteTypeName: 'envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit',
  },
  {
    // Request and response bodies decompressed on their way through (worker/http/filters/decompressor.ts).
    name: 'envoy.filters.http.decompressor',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.decompressor.v3.Decompressor',
    description: 'decompresses request and response bodies (gzip, brotli)',
    deprecatedNames: [],
  },
  {
    name: 'envoy.compression.gzip.decompressor',
    category: 'envoy.compression.decompressor',
    typeName: 'envoy.extensions.compression.gzip.decompressor.v3.Gzip',
    description: 'gzip for the decompressor filter (Node\'s zlib)',
    deprecatedNames: [],
  },
  {
    name: 'envoy.compression.brotli.decompressor',
    category: 'envoy.compression.decompressor',
    typeName: 'envoy.extensions.compression.brotli.decompressor.v3.Brotli',
    description: 'brotli for the decompressor filter (Node\'s zlib)',
    deprecatedNames: [],
  },
  {
    name: 'envoy.compression.gzip.compressor',
    category: 'envoy.compression.compressor',
    typeName: 'envoy.extensions.compression.gzip.compressor.v3.Gzip',
    description: 'gzip for the compressor filter (Node\'s zlib)',
    deprecatedNames: [],
  },
  {
    name: 'envoy.compression.brotli.compressor',
    category: 'envoy.compression.compressor',
    typeName: 'envoy.extensions.compression.brotli.compressor.v3.Brotli',
    description: 'brotli for the compressor filter (Node\'s zlib)',
    deprecatedNames: [],
  },
  {
    // Taps requests for POST /tap (admin_config only).
    name: 'envoy.filters.http.tap',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.tap.v3.Tap',
    description: 'copies matching exchanges to the admin\'s /tap streams',
    deprecatedNames: [],
  },
  {
    name: 'envoy.access_loggers.file',
    category: 'envoy.access_loggers',
    typeName: 'envoy.extensions.access_loggers.file.v3.FileAccessLog',
    description: 'access logs to a file, in Envoy\'s text or JSON formats',
    deprecatedNames: ['envoy.file_access_log'],
  },
  {
    name: 'envoy.access_loggers.stdout',
    category: 'envoy.access_loggers',
    typeName: 'envoy.extensions.access_loggers.stream.v3.StdoutAccessLog',
    description: 'access logs to standard output',
    deprecatedNames: [],
  },
  {
    name: 'envoy.access_loggers.stderr',
    category: 'envoy.access_loggers',
    typeName: 'envoy.extensions.access_loggers.stream.v3.StderrAccessLog',
    description: 'access logs to standard error',
    deprecatedNames: [],
  },
  {
    // TLS on a listener's filter chain (see worker/tls/).
    name: 'envoy.transport_sockets.tls',
    category: 'envoy.transport_sockets.downstream',
    typeName: 'envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
    description: 'TLS on listeners: certificates by SNI, client certificates',
    deprecatedNames: ['tls'],
  },
  {
    // TLS to a cluster's hosts.
    name: 'envoy.transport_sockets.tls',
    category: 'envoy.transport_sockets.upstream',
    typeName: 'envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
    description: 'TLS to upstream hosts: SNI, CA and SAN verification, client certificates',
    deprecatedNames: ['tls'],
  },
  {
    name: 'envoy.transport_sockets.raw_buffer',
    category: 'envoy.transport_sockets.downstream',
    typeName: 'envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer',
    description: 'plaintext (the default transport socket)',
    deprecatedNames: ['raw_buffer'],
  },
  {
    // Spans to a Zipkin collector, B3 propagation (see worker/tracing/).
    name: 'envoy.tracers.zipkin',
    category: 'envoy.tracers',
    typeName: 'envoy.config.trace.v3.ZipkinConfig',
    description: 'Zipkin tracing (B3 headers), spans reported over HTTP',
    deprecatedNames: ['envoy.zipkin'],
  },
  {
    // Spans exported as OTLP, W3C trace context (see worker/tracing/).
    name: 'envoy.tracers.opentelemetry',
    category: 'envoy.tracers',
    typeName: 'envoy.config.trace.v3.OpenTelemetryConfig',
    description: 'OpenTelemetry tracing (W3C trace context), spans over OTLP gRPC or HTTP',
    deprecatedNames: [],
  },
  {
    name: 'envoy.tracers.opentelemetry.resource_detectors.environment',
    category: 'envoy.tracers.opentelemetry.resource_detectors',
    typeName: 'envoy.extensions.tracers.opentelemetry.resource_detectors.v3.EnvironmentResourceDetectorConfig',
    description: 'OpenTelemetry resource attributes from OTEL_RESOURCE_ATTRIBUTES',
    deprecatedNames: [],
  },
  {
    name: 'envoy.tracers.opentelemetry.resource_detectors.static_config',
    category: 'envoy.tracers.opentelemetry.resource_detectors',
    typeName: 'envoy.extensions.tracers.opentelemetry.resource_detectors.v3.StaticConfigResourceDetectorConfig',
    description: 'OpenTelemetry resource attributes from the configuration',
    deprecatedNames: [],
  },
  {
    // A UDP listener's datagrams proxied to a cluster, in sessions (see worker/udp/).
    name: 'envoy.filters.udp_listener.udp_proxy',
    category: 'envoy.filters.udp_listener',
    typeName: 'envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig',
    description: 'UDP proxying to a cluster, session by session',
    deprecatedNames: ['envoy.filters.udp.udp_proxy'],
  },
  {
    // The UDP proxy's route (its matcher's action).
    name: 'envoy.extensions.filters.udp.udp_proxy.v3.Route',
    category: 'envoy.matching.action',
    typeName: 'envoy.extensions.filters.udp.udp_proxy.v3.Route',
    description: 'the UDP proxy\'s matcher action: the cluster of a session',
    deprecatedNames: [],
  },
  {
    // A retry avoids the hosts its request already tried (worker/http/retry-state.ts).
    name: 'envoy.retry_host_predicates.previous_hosts',
    category: 'envoy.retry_host_predicates',
    typeName: 'envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate',
    description: 'a retry avoids the hosts tried before',
    deprecatedNames: [],
  },
  {
    // A retry avoids canary hosts (endpoint metadata envoy.lb canary: true).
    name: 'envoy.retry_host_predicates.omit_canary_hosts',
    category: 'envoy.retry_host_predicates',
    typeName: 'envoy.extensions.retry.host.omit_canary_hosts.v3.OmitCanaryHostsPredicate',
    description: 'a retry avoids canary hosts',
    deprecatedNames: [],
  },
  {
    // A retry goes to a priority its request has not tried yet, while one is left.
    name: 'envoy.retry_priorities.previous_priorities',
    category: 'envoy.retry_priorities',
    typeName: 'envoy.extensions.retry.priority.previous_priorities.v3.PreviousPrioritiesConfig',
    description: 'a retry moves to the priorities not tried yet',
    deprecatedNames: [],
  },
  {
    // Reads the TLS ClientHello (SNI, ALPN) for filter-chain matching; always on where a chain needs it.
    name: 'envoy.filters.listener.tls_inspector',
    category: 'envoy.filters.listener',
    typeName: 'envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector',
    description: 'reads the TLS ClientHello (SNI, ALPN) to choose a filter chain',
    deprecatedNames: ['envoy.listener.tls_inspector'],
  },
  {
    // Statistics pushed over UDP at each flush, in statsd's line format (see admin/statsd-sinks.ts).
    name: 'envoy.stat_sinks.statsd',
    category: 'envoy.stats_sinks',
    typeName: 'envoy.config.metrics.v3.StatsdSink',
    description: 'statistics to a statsd server over UDP',
    deprecatedNames: ['envoy.statsd'],
  },
  {
    // The same with DogStatsD's tags.
    name: 'envoy.stat_sinks.dog_statsd',
    category: 'envoy.stats_sinks',
    typeName: 'envoy.config.metrics.v3.DogStatsdSink',
    description: 'statistics to DogStatsD, with tags',
    deprecatedNames: ['envoy.dog_statsd'],
  },
  {
    // Serves /dashboard_event_stream (Envoy's /hystrix_event_stream).
    name: 'envoy.stat_sinks.hystrix',
    category: 'envoy.stats_sinks',
    typeName: 'envoy.config.metrics.v3.HystrixSink',
    description: 'the Hystrix dashboard\'s event stream (/dashboard_event_stream)',
    deprecatedNames: [],
  },
];

const byTypeName = new Map(EXTENSIONS.flatMap((e) => [[e.typeName, e] as const, ...(e.perRouteTypeName ? [[e.perRouteTypeName, e] as const] : [])]));
/** typed_per_filter_config's wrapper (`disabled`, `is_optional`, and the filter's own `config`). */
const FILTER_CONFIG = 'envoy.config.route.v3.FilterConfig';
const byName = new Map(EXTENSIONS.flatMap((e) => [e.name, ...e.deprecatedNames].map((n) => [n, e] as const)));

export function extensionByName(name: string): Extension | undefined {
  return byName.get(name);
}

export function extensionByTypeName(typeName: string): Extension | undefined {
  return byTypeName.get(typeName);
}

/** `--disable-extensions` entries are `<category>/<name>`; Envoy only warns about bad ones. */
export function parseDisabledExtensions(list: string[], warn: (msg: string) => void): Set<Extension> {
  const disabled = new Set<Extension>();
  for (const entry of list) {
    const slash = entry.lastIndexOf('/');
    if (slash <= 0 || slash === entry.length - 1) {
      warn(`failed to disable invalid extension name '${entry}'`);
      continue;
    }
    const category = entry.slice(0, slash);
    const ext = byName.get(entry.slice(slash + 1));
    if (!ext || ext.category !== category) {
      warn(`failed to disable unknown extension '${entry}'`);
      continue;
    }
    disabled.add(ext);
  }
  return disabled;
}

/** Every `typed_config` (any `Any`) must name an implemented, enabled extension. */
export function checkAnyUses(anys: AnyUse[], disabled: Set<Extension>, errors: string[]): void {
  for (const any of anys) {
    if (any.typeName === FILTER_CONFIG) continue; // its `config` is an Any of its own, checked as one
    const ext = byTypeName.get(any.typeName);
    if (!ext) {
      const why = any.known ? 'is not implemented by this proxy' : 'is not a type this proxy knows';
      errors.push(`${any.path}: type URL '${any.typeUrl}' ${why} (implemented: ${[...new Set(EXTENSIONS.map((e) => e.name))].join(', ')})`);
    } else if (disabled.has(ext)) {
      errors.push(`${any.path}: extension '${ext.category}/${ext.name}' is disabled by --disable-extensions`);
    }
  }
}

/** The extensions as /server_info lists them in `node.extensions`. */
export function extensionsForNode(disabled: ReadonlySet<string> = new Set()): { name: string; category: string; type_urls: string[]; disabled: boolean }[] {
  return EXTENSIONS.map((e) => ({ name: e.name, category: e.category, type_urls: [e.typeName, ...(e.perRouteTypeName ? [e.perRouteTypeName] : [])], disabled: disabled.has(`${e.category}/${e.name}`) }));
}
