import { normalizePath, type PathNormalization } from '../../shared/http/path-normalization.js';
import type { RequestView } from '../../shared/matchers.js';
import type { HttpStats } from '../../shared/stats/http-stats.js';
import type { DownstreamResponse } from './downstream.js';
import type { HttpExchangeRecord } from './exchange-record.js';
import { sendLocalReply, type LocalReplyContext } from './local-reply.js';

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
