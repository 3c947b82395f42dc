import { obj } from '../config/access.js';
import type { JsonObject } from '../config/proto-json.js';
import { typeNameOfUrl } from '../config/wkt.js';
import { httpFilterByTypeName } from '../extensions/registry.js';

const FILTER_CONFIG = 'envoy.config.route.v3.FilterConfig';

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
