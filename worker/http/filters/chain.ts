import { obj } from '../../../shared/config/access.js';
import { extensionByName, extensionByTypeName } from '../../../shared/config/extensions.js';
import type { JsonObject } from '../../../shared/config/proto-json.js';
import { typeNameOfUrl } from '../../../shared/config/wkt.js';
import { bufferFactory } from './buffer.js';
import { compressorFactory } from './compressor.js';
import { corsFactory } from './cors.js';
import { extAuthzFactory } from './ext-authz/filter.js';
import { csrfFactory } from './csrf.js';
import { decompressorFactory } from './decompressor.js';
import { faultFactory } from './fault.js';
import { grpcWebFactory } from './grpc-web.js';
import { headerToMetadataFactory } from './header-to-metadata.js';
import { localRateLimitFactory } from './local-ratelimit.js';
import { luaFactory } from './lua.js';
import { rateLimitFactory } from './ratelimit.js';
import { rbacFactory } from './rbac.js';
import type { FilterContext, HttpFilterFactory } from './http-filter.js';

/**
 * The filters of an `http_filters` list that run in the chain (worker/http/filters/), by their
 * extension. The router, the health-check filter and the tap filter are the connection
 * manager's own (it runs them where Envoy's run); the loader refuses every other one.
 */

const FILTER_CONFIG = 'envoy.config.route.v3.FilterConfig';

type Factory = (name: string, config: JsonObject, ctx: FilterContext) => HttpFilterFactory;

const FACTORIES: Record<string, Factory> = {
  'envoy.filters.http.cors': (name, _config, ctx) => corsFactory(name, ctx.statPrefix),
  'envoy.filters.http.csrf': (name, config, ctx) => csrfFactory(name, config, ctx.statPrefix),
  'envoy.filters.http.fault': (name, config, ctx) => faultFactory(name, config, ctx.statPrefix),
  'envoy.filters.http.rbac': (name, config, ctx) => rbacFactory(name, config, ctx.statPrefix),
  'envoy.filters.http.compressor': (name, config, ctx) => compressorFactory(name, config, ctx.statPrefix),
  'envoy.filters.http.buffer': (name, config, ctx) => bufferFactory(name, config, ctx.statPrefix),
  'envoy.filters.http.decompressor': (name, config, ctx) => decompressorFactory(name, config, ctx.statPrefix),
  'envoy.filters.http.local_ratelimit': (name, config, ctx) => localRateLimitFactory(name, config, ctx.localCluster),
  'envoy.filters.http.ext_authz': (name, config, ctx) => extAuthzFactory(name, config, ctx),
  'envoy.filters.http.header_to_metadata': (name, config) => headerToMetadataFactory(name, config),
  'envoy.filters.http.lua': (name, config, ctx) => luaFactory(name, config, ctx),
  'envoy.filters.http.ratelimit': (name, config, ctx) => rateLimitFactory(name, config, ctx),
  'envoy.filters.http.grpc_web': (name) => grpcWebFactory(name),
};

export function httpFilterFactories(filters: JsonObject[], ctx: FilterContext): HttpFilterFactory[] {
  const out: HttpFilterFactory[] = [];
  for (const f of filters) {
    const typed = obj(f.typed_config)['@type'];
    const ext = typeof typed === 'string' ? extensionByTypeName(typeNameOfUrl(typed)) : extensionByName(String(f.name ?? ''));
    const factory = ext && FACTORIES[ext.name];
    if (factory) out.push(factory(String(f.name ?? ext.name), obj(f.typed_config), ctx));
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
