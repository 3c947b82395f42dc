import type { HttpConnectionManager } from '../../shared/config/envoy-types.js';
import { normalizePath, type EscapedSlashesAction, type PathNormalization } from '../../shared/http/path-normalization.js';
import type { RequestView } from '../../shared/matchers.js';
import type { HttpStats } from '../../shared/stats/http-stats.js';
import type { DownstreamResponse } from './downstream.js';
import type { HttpExchangeRecord } from './exchange-record.js';
import { sendLocalReply, type LocalReplyContext } from './local-reply.js';
import { featureEnabled, runtimeFeature, runtimeInteger } from '../../shared/runtime.js';

const BY_RUNTIME: Record<number, EscapedSlashesAction> = { 2: 'REJECT_REQUEST', 3: 'UNESCAPE_AND_REDIRECT', 4: 'UNESCAPE_AND_FORWARD' };

/**
 * A connection manager's path normalization, decided once when its configuration is built, as
 * Envoy's HttpConnectionManagerConfig does: normalize_path unset is the runtime percentage
 * `http_connection_manager.normalize_path` (0); path_with_escaped_slashes_action
 * IMPLEMENTATION_SPECIFIC_DEFAULT is the runtime integer
 * `http_connection_manager.path_with_escaped_slashes_action` (2 reject, 3 redirect, 4 forward,
 * else keep), all of it sampled by `http_connection_manager.path_with_escaped_slashes_action_enabled`
 * (100 %); a fragment is a 400 unless `envoy.reloadable_features.http_reject_path_with_fragment` is false.
 */
export function pathNormalizationOf(config: HttpConnectionManager): PathNormalization {
  const normalize = config.normalize_path === undefined ? featureEnabled('http_connection_manager.normalize_path', 0) : config.normalize_path === true;
  let escapedSlashes: EscapedSlashesAction = 'KEEP_UNCHANGED';
  if (featureEnabled('http_connection_manager.path_with_escaped_slashes_action_enabled', 100)) {
    const configured = config.path_with_escaped_slashes_action ?? 'IMPLEMENTATION_SPECIFIC_DEFAULT';
    escapedSlashes = configured === 'IMPLEMENTATION_SPECIFIC_DEFAULT' ? (BY_RUNTIME[runtimeInteger('http_connection_manager.path_with_escaped_slashes_action', 0)] ?? 'KEEP_UNCHANGED') : configured;
  }
  return { normalize, mergeSlashes: config.merge_slashes === true, escapedSlashes, rejectFragment: runtimeFeature('envoy.reloadable_features.http_reject_path_with_fragment', true) };
}

/** Nothing to do but look for a fragment (the common configuration). */
export function onlyFragments(n: PathNormalization): boolean {
  return !n.normalize && !n.mergeSlashes && n.escapedSlashes === 'KEEP_UNCHANGED';
}

/**
 * The request's path normalized before routing and every filter (`rq.path` becomes the normalized
 * one: the route, the filters, the access log and the upstream see it), or the request answered as
 * Envoy's decodeHeaders answers: a refusal, or a redirect to a gRPC client, is a 400 (the HTTP/1
 * connection closes after it) counted in downstream_rq_failed_path_normalization; a redirect a 307
 * to the normalized path, counted in downstream_rq_redirected_with_normalized_path. True when answered.
 */
export function answeredByPathNormalization(rq: RequestView, n: PathNormalization, res: DownstreamResponse, http1: boolean, stats: HttpStats, record: HttpExchangeRecord | undefined, reply: LocalReplyContext): boolean {
  if (onlyFragments(n) && rq.path.indexOf('#') < 0) return false;
  const normalized = normalizePath(rq.path, n);
  if (normalized.action === 'continue') {
    rq.path = normalized.path;
    return false;
  }
  if (record) record.responseCodeDetails = 'path_normalization_failed';
  if (normalized.action === 'redirect' && !reply.grpc) {
    stats.rqRedirectedWithNormalizedPath.inc();
    sendLocalReply(res, 307, '', { ...reply, extraHeaders: { ...reply.extraHeaders, location: normalized.path } });
    return true;
  }
  stats.rqFailedPathNormalization.inc();
  if (http1) res.shouldKeepAlive = false;
  sendLocalReply(res, 400, '', reply);
  return true;
}
