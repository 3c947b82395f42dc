import type { IncomingHttpHeaders } from 'node:http';
import type { ForwardAction } from '../../shared/http/route-table.js';
import { unsigned } from '../../shared/decimal.js';

/**
 * The route's timeouts for one request, as Envoy's FilterUtility::finalTimeout: the route's
 * timeout and the retry policy's per-try timeout, unless the request's
 * x-envoy-upstream-rq-timeout-ms / x-envoy-upstream-rq-per-try-timeout-ms (only an internal
 * request keeps them, see internal-request.ts) say otherwise; both are consumed. A per-try
 * timeout not under the whole timeout is dropped. x-envoy-upstream-rq-timeout-alt-response makes
 * a timeout's answer 204.
 */
export interface RouteTimeouts {
  /** 0: none. */
  globalMs: number;
  perTryMs: number;
  perTryIdleMs: number;
  /** The 504 of a timeout is a 204 instead. */
  altResponse: boolean;
}

function headerNumber(headers: IncomingHttpHeaders, name: string): number | undefined {
  const v = headers[name];
  if (v === undefined) return undefined;
  delete headers[name];
  return unsigned(Array.isArray(v) ? v[0] : v);
}

export function routeTimeouts(action: ForwardAction, headers: IncomingHttpHeaders): RouteTimeouts {
  let globalMs = action.timeoutMs;
  let perTryMs = action.retry?.perTryTimeoutMs ?? 0;
  const timeoutHeader = headerNumber(headers, 'x-envoy-upstream-rq-timeout-ms');
  if (timeoutHeader !== undefined) globalMs = timeoutHeader;
  const perTryHeader = headerNumber(headers, 'x-envoy-upstream-rq-per-try-timeout-ms');
  if (perTryHeader !== undefined) perTryMs = perTryHeader;
  if (perTryMs >= globalMs && globalMs !== 0) perTryMs = 0;
  const alt = headers['x-envoy-upstream-rq-timeout-alt-response'] !== undefined;
  if (alt) delete headers['x-envoy-upstream-rq-timeout-alt-response'];
  return { globalMs, perTryMs, perTryIdleMs: action.retry?.perTryIdleTimeoutMs ?? 0, altResponse: alt };
}

/**
 * A retry's x-envoy-expected-rq-timeout-ms: the per-try timeout (else the whole), never above what
 * the whole timeout has left since `since` (the request's end, else its start; at least 1).
 */
export function expectedTimeoutMs(timeouts: RouteTimeouts, since: number): number {
  const { perTryMs, globalMs } = timeouts;
  if (globalMs === 0) return perTryMs;
  const left = Math.max(1, Math.round(globalMs - (performance.now() - since)));
  return Math.min(perTryMs || globalMs, left);
}
