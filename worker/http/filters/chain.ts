import { obj } from '../../../shared/config/access.js';
import type { JsonObject } from '../../../shared/config/proto-json.js';
import { isHttpFilter } from '../../../shared/extensions/descriptor.js';
import { filterExtension } from '../../../shared/config/semantic/common.js';
import type { FilterContext, HttpFilterFactory } from '../../../shared/http/filter-api.js';

/**
 * The filters of an `http_filters` list that run in the chain, each built by its descriptor
 * (shared/extensions/), in their configured order. The terminal one (the router) has no chain
 * filter: the connection manager runs it once the chain lets the request through.
 */

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
