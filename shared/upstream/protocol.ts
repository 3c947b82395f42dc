import { obj } from '../config/access.js';
import type { JsonObject } from '../config/proto-json.js';

export const UPSTREAM_HTTP_OPTIONS = 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions';

/** Whether a cluster asks for HTTP/2 to its hosts (the deprecated field, or an explicit http2 config). */
export function clusterSpeaksHttp2(config: JsonObject): boolean {
  const options = obj(obj(config.typed_extension_protocol_options)[UPSTREAM_HTTP_OPTIONS]);
  return config.http2_protocol_options !== undefined || obj(options.explicit_http_config).http2_protocol_options !== undefined;
}
