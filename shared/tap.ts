import { list, obj } from './config/access.js';
import type { JsonObject } from './config/proto-json.js';
import { compileHeaderMatcher, type RequestView } from './matchers.js';

/**
 * A /tap session as it travels to the workers: the admin's TapRequest, validated, with the
 * session's id. Compiled in each worker to a predicate over a finished exchange.
 */
export interface TapSession {
  id: number;
  configId: string;
  /** envoy.config.tap.v3.TapConfig */
  config: JsonObject;
}

/** Envoy's default for max_buffered_rx_bytes and max_buffered_tx_bytes. */
const DEFAULT_MAX_BUFFERED_BYTES = 1024;

export interface CompiledTap {
  session: TapSession;
  maxRequestBytes: number;
  maxResponseBytes: number;
  /** JSON_BODY_AS_STRING: bodies as strings rather than base64 bytes. */
  bodyAsString: boolean;
  /** Does an exchange match? The request as received, the response's headers (`:status` included). */
  matches(request: RequestView, response: RequestView): boolean;
}

type Predicate = (request: RequestView, response: RequestView) => boolean;

function compilePredicate(p: JsonObject): Predicate {
  if (p.any_match === true) return () => true;
  if (p.or_match) {
    const rules = list(obj(p.or_match).rules).map(compilePredicate);
    return (rq, rs) => rules.some((r) => r(rq, rs));
  }
  if (p.and_match) {
    const rules = list(obj(p.and_match).rules).map(compilePredicate);
    return (rq, rs) => rules.every((r) => r(rq, rs));
  }
  if (p.not_match) {
    const inner = compilePredicate(obj(p.not_match));
    return (rq, rs) => !inner(rq, rs);
  }
  if (p.http_request_headers_match) {
    const matchers = list(obj(p.http_request_headers_match).headers).map(compileHeaderMatcher);
    return (rq) => matchers.every((m) => m(rq));
  }
  if (p.http_response_headers_match) {
    const matchers = list(obj(p.http_response_headers_match).headers).map(compileHeaderMatcher);
    return (_rq, rs) => matchers.every((m) => m(rs));
  }
  // The schema allowlist admits no other rule.
  throw new Error(`tap match rule ${Object.keys(p).join(', ')} is not supported`);
}

export function compileTap(session: TapSession): CompiledTap {
  const config = session.config;
  const output = obj(config.output_config);
  const sink = list(output.sinks)[0] ?? {};
  const predicate = compilePredicate(obj(config.match ?? config.match_config));
  return {
    session,
    maxRequestBytes: Number(output.max_buffered_rx_bytes ?? DEFAULT_MAX_BUFFERED_BYTES),
    maxResponseBytes: Number(output.max_buffered_tx_bytes ?? DEFAULT_MAX_BUFFERED_BYTES),
    bodyAsString: sink.format === 'JSON_BODY_AS_STRING',
    matches: predicate,
  };
}
