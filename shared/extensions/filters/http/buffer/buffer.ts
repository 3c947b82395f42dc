import type { JsonObject } from '../../../../config/proto-json.js';
import { obj } from '../../../../config/access.js';
import { stats } from '../../../../stats/process.js';
import type { Counter } from '../../../../stats/store.js';
import type { FilterDecision, FilterRequest, HttpFilter, HttpFilterFactory } from '../../../../http/filter-api.js';

/**
 * envoy.filters.http.buffer, as Envoy's: a request with a body is held until the body has
 * arrived whole, then sent upstream in one piece with its content-length (the upstream never sees
 * a slow client's body trickle in). A body over `max_request_bytes` is answered 413 `Payload Too
 * Large` (http.<prefix>.downstream_rq_too_large), without reading the rest. A route's
 * BufferPerRoute sets its own limit, or switches the filter off there.
 */

class BufferFilter implements HttpFilter {
  constructor(
    private readonly maxBytes: number,
    private readonly tooLarge: Counter,
  ) {}

  decodeHeaders(request: FilterRequest): FilterDecision | Promise<FilterDecision> {
    const perRoute = request.perRoute[0];
    if (perRoute?.disabled === true) return 'continue';
    const max = perRoute?.buffer !== undefined ? Number(obj(perRoute.buffer).max_request_bytes) : this.maxBytes;
    return request.readBody(max).then((body) => {
      if (body === 'aborted') return 'stop';
      if (body !== 'too_large') return 'continue';
      this.tooLarge.inc();
      request.flag(0, 'request_payload_too_large');
      request.reply(413, {}, 'Payload Too Large');
      return 'stop';
    });
  }
}

export function bufferFactory(name: string, config: JsonObject, statPrefix: string): HttpFilterFactory {
  const max = Number(config.max_request_bytes);
  const tooLarge = stats.counter(`http.${statPrefix}.downstream_rq_too_large`);
  return { name, create: () => new BufferFilter(max, tooLarge) };
}
