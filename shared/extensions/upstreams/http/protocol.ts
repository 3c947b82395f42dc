import { obj } from '../../../config/access.js';
import type { JsonObject } from '../../../config/proto-json.js';
import { durationMs } from '../../../config/wkt.js';
import type { Cluster } from '../../../config/envoy-types.js';

export const UPSTREAM_HTTP_OPTIONS = 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions';

/** Whether a cluster asks for HTTP/2 to its hosts (the deprecated field, or an explicit http2 config). */
export function clusterSpeaksHttp2(config: Cluster): boolean {
  const options = obj(obj(config.typed_extension_protocol_options)[UPSTREAM_HTTP_OPTIONS]);
  return config.http2_protocol_options !== undefined || obj(options.explicit_http_config).http2_protocol_options !== undefined;
}

/**
 * The cluster's UpstreamHttpProtocolOptions (its HttpProtocolOptions', else the deprecated Cluster
 * field's): auto_sni and auto_san_validation name the server by the request's authority (or the
 * override_auto_sni_header), per connection.
 */
export function clusterServerNaming(config: Cluster): { sni: boolean; verifySan: boolean; header: string | undefined } | undefined {
  const extension = obj(config.typed_extension_protocol_options)[UPSTREAM_HTTP_OPTIONS];
  const o = obj(extension !== undefined ? obj(extension).upstream_http_protocol_options : config.upstream_http_protocol_options);
  const sni = o.auto_sni === true;
  const verifySan = o.auto_san_validation === true;
  if (!sni && !verifySan) return undefined;
  return { sni, verifySan, header: typeof o.override_auto_sni_header === 'string' && o.override_auto_sni_header ? o.override_auto_sni_header.toLowerCase() : undefined };
}

/** Whether a cluster picks HTTP/2 or HTTP/1.1 per connection by ALPN (HttpProtocolOptions.auto_config). */
export function clusterAutoHttp(config: Cluster): boolean {
  return obj(obj(config.typed_extension_protocol_options)[UPSTREAM_HTTP_OPTIONS]).auto_config !== undefined;
}

/** The cluster's Http2ProtocolOptions (the explicit config's or auto_config's, else the deprecated field's), for its HTTP/2 connections. */
export function clusterHttp2Options(config: Cluster): JsonObject | undefined {
  const extension = obj(obj(config.typed_extension_protocol_options)[UPSTREAM_HTTP_OPTIONS]);
  const options = obj(extension.explicit_http_config).http2_protocol_options ?? obj(extension.auto_config).http2_protocol_options ?? config.http2_protocol_options;
  return options === undefined ? undefined : obj(options);
}

/**
 * How long an upstream HTTP connection lives and what it carries (Envoy's HttpProtocolOptions
 * `common_http_protocol_options` for a cluster): closed after `idleMs` without a request (Envoy's
 * upstream default is one hour; 0 never), drained after `maxRequests` requests or `maxConnectionMs`
 * (0: no limit), and each request's try cut after `maxStreamMs` (0: no limit).
 */
export interface UpstreamConnectionLimits {
  idleMs: number;
  maxRequests: number;
  maxConnectionMs: number;
  maxStreamMs: number;
}

const UPSTREAM_IDLE_DEFAULT_MS = 3_600_000;

/**
 * The cluster's common HTTP protocol options: from its HttpProtocolOptions extension, or the
 * deprecated Cluster fields (`common_http_protocol_options`, `max_requests_per_connection`) that
 * older bootstraps use.
 */
export function clusterConnectionLimits(config: Cluster): UpstreamConnectionLimits {
  const extension = obj(config.typed_extension_protocol_options)[UPSTREAM_HTTP_OPTIONS];
  // As Envoy: with the extension there, the deprecated common_http_protocol_options is not read (the load warns).
  const common = obj(extension !== undefined ? obj(extension).common_http_protocol_options : config.common_http_protocol_options);
  const ms = (v: unknown, otherwise: number) => (typeof v === 'string' ? durationMs(v) : otherwise);
  const maxRequests = common.max_requests_per_connection ?? config.max_requests_per_connection;
  return {
    idleMs: ms(common.idle_timeout, UPSTREAM_IDLE_DEFAULT_MS),
    maxRequests: maxRequests === undefined ? 0 : Number(maxRequests),
    maxConnectionMs: ms(common.max_connection_duration, 0),
    maxStreamMs: ms(common.max_stream_duration, 0),
  };
}
