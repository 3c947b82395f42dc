import { obj } from '../../../shared/config/access.js';
import type { JsonObject } from '../../../shared/config/proto-json.js';
import { typeNameOfUrl } from '../../../shared/config/wkt.js';
import { isHttpFilter } from '../../../shared/extensions/descriptor.js';
import { filterExtension } from '../../../shared/config/semantic/common.js';
import type { FilterContext, HttpFilterFactory } from '../../../shared/http/filter-api.js';

/**
 * The filters of an `http_filters` list that run in the chain, each built by its descriptor
 * (shared/extensions/), in their configured order. The terminal one (the router) has no chain
 * filter: the connection manager runs it once the chain lets the request through.
 */

const FILTER_CONFIG = 'envoy.config.route.v3.FilterConfig';

export function httpFilterFactories(filters: JsonObject[], ctx: FilterContext): HttpFilterFactory[] {
  const out: HttpFilterFactory[] = [];
  for (const f of filters) {
    const ext = filterExtension(f);
    if (ext && isHttpFilter(ext)) out.push(ext.create(String(f.name ?? ext.name), obj(f.typed_config), ctx));
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
