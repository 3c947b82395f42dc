import { obj } from '../config/access.js';
import type { JsonObject } from '../config/proto-json.js';

export const UPSTREAM_HTTP_OPTIONS = 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions';

/** Whether a cluster asks for HTTP/2 to its hosts (the deprecated field, or an explicit http2 config). */
export function clusterSpeaksHttp2(config: JsonObject): boolean {
  const options = obj(obj(config.typed_extension_protocol_options)[UPSTREAM_HTTP_OPTIONS]);
  return config.http2_protocol_options !== undefined || obj(options.explicit_http_config).http2_protocol_options !== undefined;
}

/** The cluster's Http2ProtocolOptions (the explicit config's, else the deprecated field's), when it speaks HTTP/2. */
export function clusterHttp2Options(config: JsonObject): JsonObject | undefined {
  const explicit = obj(obj(obj(config.typed_extension_protocol_options)[UPSTREAM_HTTP_OPTIONS]).explicit_http_config).http2_protocol_options;
  const options = explicit ?? config.http2_protocol_options;
  return options === undefined ? undefined : obj(options);
}
