import { obj } from '../../../shared/config/access.js';
import { extensionByName, extensionByTypeName } from '../../../shared/config/extensions.js';
import type { JsonObject } from '../../../shared/config/proto-json.js';
import { typeNameOfUrl } from '../../../shared/config/wkt.js';
import { bufferFactory } from './buffer.js';
import { compressorFactory } from './compressor.js';
import { corsFactory } from './cors.js';
import { csrfFactory } from './csrf.js';
import { faultFactory } from './fault.js';
import { localRateLimitFactory } from './local-ratelimit.js';
import { rbacFactory } from './rbac.js';
import type { HttpFilterFactory } from './http-filter.js';

/**
 * The filters of an `http_filters` list that run in the chain (worker/http/filters/), by their
 * extension. The router, the health-check filter and the tap filter are the connection
 * manager's own (it runs them where Envoy's run); the loader refuses every other one.
 */

const FILTER_CONFIG = 'envoy.config.route.v3.FilterConfig';

/** `localCluster`: this proxy's service cluster (the bootstrap node's, or --service-cluster). */
export function httpFilterFactories(filters: JsonObject[], statPrefix: string, localCluster: string): HttpFilterFactory[] {
  const out: HttpFilterFactory[] = [];
  for (const f of filters) {
    const typed = obj(f.typed_config)['@type'];
    const ext = typeof typed === 'string' ? extensionByTypeName(typeNameOfUrl(typed)) : extensionByName(String(f.name ?? ''));
    const name = String(f.name ?? ext?.name ?? '');
    if (ext?.name === 'envoy.filters.http.cors') out.push(corsFactory(name, statPrefix));
    else if (ext?.name === 'envoy.filters.http.csrf') out.push(csrfFactory(name, obj(f.typed_config), statPrefix));
    else if (ext?.name === 'envoy.filters.http.fault') out.push(faultFactory(name, obj(f.typed_config), statPrefix));
    else if (ext?.name === 'envoy.filters.http.rbac') out.push(rbacFactory(name, obj(f.typed_config), statPrefix));
    else if (ext?.name === 'envoy.filters.http.compressor') out.push(compressorFactory(name, obj(f.typed_config), statPrefix));
    else if (ext?.name === 'envoy.filters.http.buffer') out.push(bufferFactory(name, obj(f.typed_config), statPrefix));
    else if (ext?.name === 'envoy.filters.http.local_ratelimit') out.push(localRateLimitFactory(name, obj(f.typed_config), localCluster));
  }
  return out;
}

/**
 * A filter's typed_per_filter_config entries (most specific first), each unwrapped from Envoy's
 * FilterConfig; 'disabled' when the most specific one says `disabled: true`.
 */
export function perFilterConfigs(entries: JsonObject[] | undefined): JsonObject[] | 'disabled' {
  if (!entries?.length) return [];
  const out: JsonObject[] = [];
  for (const [i, any] of entries.entries()) {
    if (typeNameOfUrl(String(any['@type'] ?? '')) !== FILTER_CONFIG) {
      out.push(any);
      continue;
    }
    if (i === 0 && any.disabled === true) return 'disabled';
    if (any.config !== undefined) out.push(obj(any.config));
  }
  return out;
}
