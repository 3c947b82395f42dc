import { obj } from '../../../shared/config/access.js';
import type { JsonObject } from '../../../shared/config/proto-json.js';
import { typeNameOfUrl } from '../../../shared/config/wkt.js';
import { isHttpFilter } from '../../../shared/extensions/descriptor.js';
import { filterExtension } from '../../../shared/config/semantic/common.js';
import { httpFilterByTypeName } from '../../../shared/extensions/registry.js';
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
    if (!ext || !isHttpFilter(ext)) continue;
    const factory = ext.create(String(f.name ?? ext.name), obj(f.typed_config), ctx);
    out.push(f.disabled === true ? { name: factory.name, create: () => factory.create(), disabledByDefault: true } : factory);
  }
  return out;
}

/**
 * A filter's typed_per_filter_config entries for a route (most specific first: route, then
 * virtual host), each unwrapped from Envoy's FilterConfig, or 'disabled' when the filter does not
 * run there. As Envoy's filterDisabled: the most specific entry decides (`disabled: true` turns it
 * off; any other entry, even a FilterConfig with an empty `config`, turns a filter that is
 * disabled by default on); without one, HttpFilter.disabled does. An entry that only enables or
 * disables hides no configuration of a less specific one.
 */
export function perFilterConfigs(entries: JsonObject[] | undefined, disabledByDefault = false): JsonObject[] | 'disabled' {
  if (!entries?.length) return disabledByDefault ? 'disabled' : [];
  const out: JsonObject[] = [];
  for (const [i, any] of entries.entries()) {
    if (typeNameOfUrl(String(any['@type'] ?? '')) !== FILTER_CONFIG) {
      out.push(any);
      continue;
    }
    if (any.disabled === true) {
      if (i === 0) return 'disabled';
      continue;
    }
    const config = obj(any.config);
    // An is_optional FilterConfig may name a type this proxy does not know: it enables the filter, unconfigured.
    if (typeof config['@type'] === 'string' && config['@type'] && (any.is_optional !== true || httpFilterByTypeName(typeNameOfUrl(config['@type'])))) out.push(config);
  }
  return out;
}
