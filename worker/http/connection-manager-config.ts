import { pathNormalizationOf, type PathNormalization } from '../../shared/http/path-normalization.js';
import { serverHeaderOf, type ServerHeader } from './server-header.js';
import { AccessLogs } from '../../shared/access-log/loggers.js';
import { list, obj } from '../../shared/config/access.js';
import { DEFAULT_BUFFER_LIMIT } from '../../shared/config/buffer-limit.js';
import { http2Tuning } from '../../shared/config/http2-options.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import type { HttpConnectionManager } from '../../shared/config/envoy-types.js';
import type { TrafficDirection } from '../../shared/config/resources.js';
import { filterExtension } from '../../shared/config/semantic/common.js';
import { durationMs } from '../../shared/config/wkt.js';
import type { FilterContext, HttpFilterFactory } from '../../shared/http/filter-api.js';
import type { DrainManager } from '../drain.js';
import type { ClusterManager } from '../upstream/cluster-manager.js';
import { filterClusters } from '../upstream/filter-clusters.js';
import { httpFilterFactories } from './filters/chain.js';
import { LocalReplyConfig } from './local-reply.js';
import type { RequestChecks } from './request-checks.js';
import { requestHeaderSettings, serverLocalAddress, type RequestHeaderSettings } from './request-headers.js';
import { RouteTable } from '../../shared/http/route-table.js';
import type { RouteTables } from './route-tables.js';
import { UpgradePolicy } from './upgrades.js';
import { tapConfigId } from '../../shared/extensions/filters/http/tap/tap.js';

/**
 * A connection manager's configuration, read once when its listener is built (Envoy's
 * HttpConnectionManagerConfig): what every connection and request of it then uses as it is.
 */

export interface ConnectionManagerContext {
  clusters: ClusterManager;
  /** Route configurations from RDS, for a connection manager with `rds`. */
  routeTables: RouteTables;
  drain: DrainManager;
  trafficDirection: TrafficDirection;
  healthCheckFailing: () => boolean;
  localAddressIpVersion: 'v4' | 'v6';
  /** The local node (node.id, node.cluster, after --service-node/--service-cluster), for add_user_agent. */
  node: { id: string; cluster: string };
  /** The listener's per_connection_buffer_limit_bytes (Envoy's 1 MiB when not set). */
  bufferLimit?: number;
  /** The bootstrap's tracing.http: the tracer of a connection manager whose tracing names none. */
  bootstrapTracing?: JsonObject;
  /** The listener's stat prefix (`listener.<address>.`), for Envoy's per-listener figures of a connection manager. */
  listenerStatPrefix?: string;
  /** The listener's bypass_overload_manager: no overload action touches its requests or timers (Envoy gives it the null overload manager). */
  bypassOverload?: boolean;
}

/** The connection manager's timeouts, in milliseconds (0: none). */
export interface StreamTimeouts {
  maxHeaderSize: number;
  /** common_http_protocol_options.idle_timeout: a connection without a request (1 h by default). */
  idleMs: number;
  requestTimeoutMs: number;
  requestHeadersTimeoutMs: number;
  /** stream_idle_timeout (5 min by default). */
  streamIdleMs: number;
}

export class ConnectionManagerConfig {
  readonly statPrefix: string;
  readonly routes: RouteTable;
  /** With `rds`: the route configuration to look up per request (ctx.routeTables). */
  readonly rdsName: string | undefined;
  /** server_name and server_header_transformation. */
  readonly server: ServerHeader;
  /** The router's suppress_envoy_headers: no x-envoy-* headers of the router's own (see router.ts, forward-context.ts). */
  readonly suppressEnvoyHeaders: boolean;
  /** normalize_path, merge_slashes, path_with_escaped_slashes_action, and whether a fragment is refused. */
  readonly pathNormalization: PathNormalization;
  readonly codec: string;
  readonly localAddress: string;
  /** What mutateRequestHeaders does to each request (request-headers.ts), and the checks it meets first (request-checks.ts). */
  readonly headerSettings: RequestHeaderSettings;
  readonly checks: RequestChecks;
  /** drain_timeout: the grace between an HTTP/2 shutdown notice and the final GOAWAY. */
  readonly drainTimeoutMs: number;
  /** http_protocol_options: HTTP/1.0 is served (Envoy refuses it, 426, by default), with this Host when it has none. */
  readonly acceptHttp10: boolean;
  readonly defaultHostHttp10: string | undefined;
  readonly http1Trailers: boolean;
  /** scheme_header_transformation.scheme_to_overwrite: every request's :scheme. */
  readonly schemeOverwrite: string | undefined;
  readonly schemeMatchesUpstream: boolean;
  readonly accessLogs: AccessLogs | undefined;
  /** local_reply_config: how the proxy's own replies are rewritten. */
  readonly localReplies: LocalReplyConfig | undefined;
  readonly timeouts: StreamTimeouts;
  readonly http2: ReturnType<typeof http2Tuning>;
  /** `http_filters` is empty: no request is ever answered (see HttpConnectionManager.handle()). */
  readonly noFilters: boolean;
  /**
   * The tap filter's admin config_id, when the chain has one: while a session of it is on, each
   * exchange is recorded from its start, so that the filter has its bodies
   * (shared/extensions/filters/http/tap/).
   */
  readonly tapConfigId: string | undefined;
  /** The router's start_child_span. */
  readonly startChildSpan: boolean;
  /** The HTTP filters this proxy runs between the first entry of http_filters and the router (shared/extensions/). */
  readonly filters: HttpFilterFactory[];
  /** upgrade_configs: which upgrades (WebSocket, …) are allowed, with which filters. */
  readonly upgrades: UpgradePolicy;

  constructor(
    readonly config: HttpConnectionManager,
    ctx: ConnectionManagerContext,
  ) {
    this.statPrefix = String(config.stat_prefix);
    this.routes = new RouteTable(obj(config.route_config));
    const rds = obj(config.rds).route_config_name;
    this.rdsName = typeof rds === 'string' ? rds : undefined;
    this.server = serverHeaderOf(config);
    this.pathNormalization = pathNormalizationOf(config);
    this.codec = String(config.codec_type ?? 'AUTO');
    this.localAddress = serverLocalAddress(ctx.localAddressIpVersion);
    this.headerSettings = requestHeaderSettings(config, this.localAddress, ctx.node);
    this.drainTimeoutMs = typeof config.drain_timeout === 'string' ? durationMs(config.drain_timeout) : 5000;
    const common = obj(config.common_http_protocol_options);
    const h1 = obj(config.http_protocol_options);
    this.acceptHttp10 = h1.accept_http_10 === true;
    this.checks = { maxHeadersCount: Number(common.max_headers_count ?? 100), acceptHttp10: this.acceptHttp10 };
    this.defaultHostHttp10 = typeof h1.default_host_for_http_10 === 'string' && h1.default_host_for_http_10 ? h1.default_host_for_http_10 : undefined;
    this.http1Trailers = h1.enable_trailers === true;
    const scheme = obj(config.scheme_header_transformation);
    this.schemeOverwrite = typeof scheme.scheme_to_overwrite === 'string' && scheme.scheme_to_overwrite ? scheme.scheme_to_overwrite : undefined;
    this.schemeMatchesUpstream = scheme.match_upstream === true && this.schemeOverwrite === undefined;
    this.accessLogs = AccessLogs.from(config.access_log);
    this.localReplies = config.local_reply_config !== undefined ? new LocalReplyConfig(obj(config.local_reply_config)) : undefined;
    this.timeouts = {
      maxHeaderSize: Number(config.max_request_headers_kb ?? 60) * 1024,
      idleMs: typeof common.idle_timeout === 'string' ? durationMs(common.idle_timeout) : 3_600_000,
      requestTimeoutMs: typeof config.request_timeout === 'string' ? durationMs(config.request_timeout) : 0,
      requestHeadersTimeoutMs: typeof config.request_headers_timeout === 'string' ? durationMs(config.request_headers_timeout) : 0,
      streamIdleMs: typeof config.stream_idle_timeout === 'string' ? durationMs(config.stream_idle_timeout) : 300_000,
    };
    this.http2 = http2Tuning(config.http2_protocol_options);

    // What the connection manager needs of the tap filter and the router, found in one pass; the chain's filters are built by their descriptors.
    const httpFilters = list(config.http_filters);
    this.noFilters = httpFilters.length === 0;
    let tap: JsonObject | undefined;
    let router: JsonObject | undefined;
    for (const f of httpFilters) {
      const name = filterExtension(f)?.name;
      if (name === 'envoy.filters.http.tap') tap ??= f;
      else if (name === 'envoy.filters.http.router') router ??= f;
    }
    this.tapConfigId = tap ? tapConfigId(obj(tap.typed_config)) : undefined;
    this.startChildSpan = obj(router?.typed_config).start_child_span === true;
    this.suppressEnvoyHeaders = obj(router?.typed_config).suppress_envoy_headers === true;
    const filterContext: FilterContext = {
      statPrefix: this.statPrefix,
      localCluster: ctx.node.cluster,
      clusters: filterClusters(ctx.clusters),
      healthCheckFailing: ctx.healthCheckFailing,
      bufferLimit: ctx.bufferLimit ?? DEFAULT_BUFFER_LIMIT,
    };
    this.filters = httpFilterFactories(httpFilters, filterContext);
    this.upgrades = new UpgradePolicy(config.upgrade_configs, (filters) => httpFilterFactories(filters, filterContext));
  }
}
