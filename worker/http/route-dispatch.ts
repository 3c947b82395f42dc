import { localOf, remoteOf } from '../../shared/network/connection-origin.js';
import { setServer, type ServerHeader } from './server-header.js';
import type { IncomingHttpHeaders } from 'node:http';
import type { DownstreamRequest, DownstreamResponse } from './downstream.js';
import type { Readable } from 'node:stream';
import { ResponseFlag, type AccessLogEntry } from '../../shared/access-log/entry.js';
import { applyHeaderMutations, type MutableHeaders } from '../../shared/header-mutation.js';
import { getLogger } from '../../shared/log/logger.js';
import type { HttpStats } from '../../shared/stats/http-stats.js';
import type { ClusterManager } from '../upstream/cluster-manager.js';
import { requestEntry, type HttpExchangeRecord } from './exchange-record.js';
import { LocalReply, sendLocalReply, type LocalReplyContext } from './local-reply.js';
import { redirectLocation, rewrittenPath } from '../../shared/http/route-rewrite.js';
import type { HashResult } from '../../shared/http/hash-policy.js';
import type { RequestView, Route } from '../../shared/http/route-table.js';
import { formatAddress } from '../../shared/address.js';
import { mirror } from './mirror.js';
import { requestHasBody } from './request-body.js';
import { forward } from './forward.js';
import type { ForwardContext } from './forward-context.js';
import type { ClientAddress } from './request-headers.js';
import { forwardUpgrade, type UpgradeRequest } from './upgrade-router.js';
import { logEncodingHeaders, logNoRoute, logRoutedCluster } from './stream-log.js';

/**
 * What a request's route says once the HTTP filters have let it through: 404 without one, a
 * direct response, a redirect, or the upstream, with the route's header mutations.
 */

const log = getLogger('http', import.meta.url);

/** One request on its way to the route's answer (see dispatchRoute()). */
export interface Exchange {
  req: DownstreamRequest;
  res: DownstreamResponse;
  rq: RequestView;
  route: Route | undefined;
  /** The cluster the route sends it to (chosen once: see chooseClusterName). */
  clusterName: string | undefined;
  record: HttpExchangeRecord | undefined;
  reply: LocalReplyContext;
  headers: IncomingHttpHeaders;
  http1: boolean;
  /** The client's address as the connection manager found it (request-headers.ts). */
  client: ClientAddress;
  /** An upgrade the connection manager allowed (WebSocket, extended CONNECT): it goes upstream as a tunnel. */
  upgrade?: UpgradeRequest;
}

/** What the connection manager gives each request's dispatch. */
export interface DispatchContext {
  stats: HttpStats;
  server: ServerHeader;
  /** The router's suppress_envoy_headers. */
  suppressEnvoyHeaders: boolean;
  clusters: ClusterManager;
  /** The listener's per_connection_buffer_limit_bytes. */
  bufferLimit: number;
  /** http_protocol_options.enable_trailers: the upstream's trailers go to HTTP/1.1 clients too. */
  http1Trailers: boolean;
  /** scheme_header_transformation.match_upstream (without scheme_to_overwrite). */
  schemeMatchesUpstream: boolean;
}

/** The route's hash_policy for this request: the client's address as the connection manager sees it, and the connection's. */
function hashOf(route: Route, req: DownstreamRequest, rq: RequestView, client: ClientAddress): HashResult | undefined {
  if (!route.hashPolicy) return undefined;
  const peer = remoteOf(req.socket);
  const local = localOf(req.socket);
  return route.hashPolicy({ rq, remoteIp: client.ip ?? peer.ip, remoteAddress: formatAddress(peer.ip, peer.port), localAddress: formatAddress(local.ip, local.port) });
}

/** The route's answer: no route (404), a direct response, a redirect, or the upstream (with the body if a filter read it whole). */
export function dispatchRoute(x: Exchange, body: Buffer | Readable | undefined, ctx: DispatchContext): void {
  const { req, res, rq, route, clusterName, record, reply, headers, http1 } = x;
  const stats = ctx.stats;
  if (!route) {
    logNoRoute(req, rq.path);
    stats.noRoute.inc();
    if (record) {
      record.responseFlags |= ResponseFlag.noRouteFound;
      record.responseCodeDetails = 'route_not_found';
    }
    sendLocalReply(res, LocalReply.noRoute.status, LocalReply.noRoute.body, reply);
    return;
  }
  const action = route.action;
  // The route's header mutations (route, virtual host, configuration): the request's now, the response's when it comes.
  const mutations = route.headers;
  const entry = mutations ? (record ?? (mutations.readsEntry ? requestEntry(req, rq, x.client) : undefined)) : undefined;
  if (mutations?.request.length) applyHeaderMutations(headers as MutableHeaders, mutations.request, entry);
  const responseHeaders = mutations?.response.length ? { levels: mutations.response, entry: entry! } : undefined;
  const mutatedResponse = (status: number, base: MutableHeaders): MutableHeaders => {
    if (responseHeaders) applyHeaderMutations(base, responseHeaders.levels, Object.create(responseHeaders.entry, { responseCode: { value: status } }) as AccessLogEntry);
    return base;
  };
  switch (action.kind) {
    case 'direct_response':
      stats.rqDirectResponse.inc();
      if (record) record.responseCodeDetails = 'direct_response';
      sendLocalReply(res, action.status, action.body ?? '', responseHeaders ? { ...reply, extraHeaders: mutatedResponse(action.status, {}) } : reply);
      return;
    case 'redirect': {
      stats.rqRedirect.inc();
      if (record) record.responseCodeDetails = 'direct_response';
      const redirectHeaders = mutatedResponse(action.status, { location: redirectLocation(action, rq, route.prefix), 'content-length': 0 });
      reply.encode?.(action.status, redirectHeaders);
      setServer(redirectHeaders, ctx.server);
      logEncodingHeaders(req, action.status, redirectHeaders, true);
      res.writeHead(action.status, redirectHeaders as Record<string, string | string[] | number>);
      res.end();
      return;
    }
    case 'route': {
      logRoutedCluster(req, clusterName, rq.path, ctx.clusters);
      let path = rq.path;
      const rewritten = rewrittenPath(route, action, path);
      if (rewritten !== undefined) {
        // As Envoy's finalizePathHeader: a rewritten path goes with the one the client sent, unless suppress_envoy_headers.
        if (!ctx.suppressEnvoyHeaders) (headers as MutableHeaders)['x-envoy-original-path'] = path;
        path = rewritten;
        if (record) record.rewrittenPath = path;
      }
      const hashed = hashOf(route, req, rq, x.client);
      const authority = action.hostRewriteLiteral ?? rq.authority;
      // One shape for every request, every field present: optimised code that reads it then meets
      // one map, whose identity outlives an idle spell (see shared/idle-housekeeping.ts).
      const forwardContext: ForwardContext = {
        hash: hashed?.hash,
        setCookies: hashed?.setCookies.length ? hashed.setCookies : undefined,
        stats,
        clusters: ctx.clusters,
        server: ctx.server,
        suppressEnvoyHeaders: ctx.suppressEnvoyHeaders,
        bufferLimit: ctx.bufferLimit,
        reply,
        responseHeaders,
        encode: reply.encode,
        encodeTrailers: reply.encodeTrailers,
        http1Trailers: ctx.http1Trailers,
        schemeMatchesUpstream: ctx.schemeMatchesUpstream,
        headers,
        path,
        // A filter may have changed it (a Lua script's :authority).
        authority,
        record,
        clusterName,
        body: undefined,
      };
      if (x.upgrade) {
        // An upgraded stream is not mirrored: its bytes after the handshake are one conversation.
        forwardUpgrade(req, res, action, forwardContext, x.upgrade);
        return;
      }
      if (action.terminateConnect?.allowPost && rq.method === 'POST') {
        // connect_config.allow_post: the POST's body goes to the cluster as TCP, and what comes back is its response's body.
        forwardUpgrade(req, res, action, forwardContext, { type: 'POST', downstream: { kind: 'body' } });
        return;
      }
      // Mirrors get their copy now; a body then streams upstream through a tee that keeps one for them.
      const mirroredBody = action.mirrors
        ? mirror(action.mirrors, ctx.clusters, { method: rq.method, path, headers, authority, timeoutMs: action.timeoutMs }, body ?? (requestHasBody(req) ? req : undefined), clusterName ?? route.name ?? '')
        : undefined;
      forwardContext.body = mirroredBody ?? body;
      const go = () =>
        forward(req, res, action, forwardContext).catch((err: Error) => {
          log.error(`forwarding ${rq.method} ${rq.path} failed: ${err.stack ?? err.message}`);
          sendLocalReply(res, 500, '', reply);
        });
      // An HTTP/2 stream goes upstream once nghttp2 has read the rest of what arrived with it:
      // a stream reset in the same read (rapid reset) then costs no upstream request at all.
      if (http1) go();
      else
        setImmediate(() => {
          if (!req.aborted && !res.destroyed) void go();
        });
    }
  }
}
