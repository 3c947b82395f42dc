import { bufferedBytesGauges } from '../../shared/stats/buffered-bytes.js';
import { http1CodecStats, http2CodecStats } from '../../shared/stats/codec-stats.js';
import type { IncomingMessage } from 'node:http';
import { Http1Server } from '../http1/server.js';
import type { Http1Request } from '../http1/request.js';
import type { DownstreamRequest, DownstreamResponse } from './downstream.js';
import type { Http2Server, Http2Session } from 'node:http2';
import { http2Module, httpModule } from '../../shared/builtins.js';
import type { Socket } from 'node:net';
import { ResponseFlag } from '../../shared/access-log/entry.js';
import { obj } from '../../shared/config/access.js';
import { HttpStats } from '../../shared/stats/http-stats.js';
import { getLogger } from '../../shared/log/logger.js';
import { HttpExchangeRecord } from './exchange-record.js';
import { guardHttp2Session, type Http2SessionGuard } from './http2-session-guard.js';
import { DEFAULT_BUFFER_LIMIT } from '../../shared/config/buffer-limit.js';
import { ConnectionLimits } from './connection-limits.js';
import { StreamDuration } from './stream-duration.js';
import { http2Tuning } from '../../shared/config/http2-options.js';
import { activeTap } from '../../shared/extensions/filters/http/tap/tap.js';
import { isGrpcContentType } from '../../shared/http/grpc.js';
import { LocalReply, sendLocalReply, type LocalReplyContext } from './local-reply.js';
import { ConnectionManagerConfig, type ConnectionManagerContext } from './connection-manager-config.js';
import { ConnectionDrain } from './connection-drain.js';
import { runFilterChain, type FilterExchange } from './filters/run.js';
import { chooseClusterName, type RequestView, type Route } from '../../shared/http/route-table.js';
import { HttpTracing, type RequestTrace } from '../tracing/http-tracing.js';
import { TracingStats } from '../../shared/tracing/sampling.js';
import { absoluteForm } from './request-target.js';
import { dispatchRoute, type DispatchContext, type Exchange } from './route-dispatch.js';
import { refused, refusedByOverload, refuseMalformed } from './request-checks.js';
import { answeredByPathNormalization } from './request-path.js';
import { mutateRequestHeaders } from './request-headers.js';
import { upgradeTypeOf, withoutH2cOffer } from './upgrades.js';
import { streamIdleTimer } from './stream-idle.js';
import { openStreamAccount, streamAccountsKept } from './stream-accounts.js';
import { logEncodeComplete, logRequestHeaders, streamLogOn } from './stream-log.js';
import { watchHttp2Idle } from './http2-idle.js';
import type { ScaledTimer } from '../../shared/overload/config.js';
import type { UpgradeRequest } from './upgrade-router.js';
import { admitUpgrade } from './upgrade-admission.js';
import type { HttpConnectionManager as HttpConnectionManagerConfig } from '../../shared/config/envoy-types.js';
import { logGoawaySent } from '../http2-log.js';

/**
 * The HTTP connection manager (envoy.filters.network.http_connection_manager) of one listener
 * in one worker. HTTP/1.1 through ../http1's server (Node's llhttp on the socket), HTTP/2 over cleartext with prior
 * knowledge through node:http2; with `codec_type: AUTO` the first bytes of a connection decide
 * (the HTTP/2 preface starts with "PRI"). Then: header limits, request id, X-Forwarded-For,
 * the HTTP filters in order (health check, router), and Envoy's local replies.
 */

const log = getLogger('http', import.meta.url);

export class HttpConnectionManager {
  /** What the configuration says, read once (connection-manager-config.ts). */
  private readonly c: ConnectionManagerConfig;
  private readonly dispatchContext: DispatchContext;
  private readonly sockets = new Set<Socket>();
  /** downstream_cx_rx/tx_bytes_buffered: what `sockets` hold, summed at each collection. */
  private readonly stopBufferedBytes: () => void;
  private readonly sessions = new Set<Http2Session>();
  private readonly guards = new WeakMap<Http2Session, Http2SessionGuard>();
  /** The socket being handed to HTTP/2, while its session is made. */
  private h2Socket: Socket | undefined;
  private h1: Http1Server | undefined;
  /** Made for the first HTTP/2 connection (see toHttp2()): node:http2 is loaded then, not at start. */
  private h2: Http2Server | undefined;
  private makeHttp2Server!: () => Http2Server;
  private allClosed: (() => void) | undefined;
  private readonly stats: HttpStats;
  /** common_http_protocol_options' connection and stream limits, when any is set. */
  private readonly limits: ConnectionLimits | undefined;
  /** tracing: Envoy's sampling decision and spans (see ../tracing/). */
  private readonly tracing: HttpTracing | undefined;
  /** Its part in a drain (connection-drain.ts). */
  private readonly drain: ConnectionDrain;

  constructor(
    config: HttpConnectionManagerConfig,
    private readonly ctx: ConnectionManagerContext,
  ) {
    const c = (this.c = new ConnectionManagerConfig(config, ctx));
    this.stats = new HttpStats(c.statPrefix, ctx.listenerStatPrefix);
    const p = `http.${c.statPrefix}.`;
    this.stopBufferedBytes = bufferedBytesGauges(`${p}downstream_cx_rx_bytes_buffered`, `${p}downstream_cx_tx_bytes_buffered`, this.sockets);
    this.drain = new ConnectionDrain(this.stats, c.drainTimeoutMs, () => this.h1);
    this.limits = ConnectionLimits.from(obj(config.common_http_protocol_options), this.stats, c.drainTimeoutMs, this.scaledBy('HTTP_DOWNSTREAM_CONNECTION_MAX'));
    this.dispatchContext = {
      stats: this.stats,
      server: c.server,
      suppressEnvoyHeaders: c.suppressEnvoyHeaders,
      clusters: ctx.clusters,
      bufferLimit: ctx.bufferLimit ?? DEFAULT_BUFFER_LIMIT,
      http1Trailers: c.http1Trailers,
      schemeMatchesUpstream: c.schemeMatchesUpstream,
    };
    // Envoy's connection manager has its tracing figures whether it traces or not.
    const tracingStats = new TracingStats(c.statPrefix);
    this.tracing =
      config.tracing !== undefined
        ? new HttpTracing(
            obj(config.tracing),
            ctx.bootstrapTracing,
            { clusters: ctx.clusters, node: ctx.node, localAddress: c.localAddress, statPrefix: c.statPrefix, egress: ctx.trafficDirection === 'OUTBOUND', startChildSpan: c.startChildSpan },
            ctx.clusters,
            tracingStats,
          )
        : undefined;
    this.prepare();
  }

  /**
   * Builds the HTTP/1.1 server, and the means to build the HTTP/2 one, that the listener's connections are handed to (see
   * accept()); they never listen themselves.
   */
  private prepare(): void {
    const { maxHeaderSize, idleMs, requestTimeoutMs, requestHeadersTimeoutMs: headersTimeoutMs, streamIdleMs } = this.c.timeouts;
    const handler = (req: DownstreamRequest, res: DownstreamResponse) => {
      try {
        this.handle(req, res, streamIdleMs);
      } catch (err) {
        this.handlerFailed(err as Error, res);
      }
    };

    // Envoy's request_headers_timeout defaults to none, for which the request timeout (or 60 s)
    // stands in, as it did when node:http's server read requests.
    const headersTimeout = Math.min(headersTimeoutMs || 60_000, requestTimeoutMs || Infinity);
    // Checked often enough for the configured timeouts (and the idle timeout of a connection between requests) to mean what they say.
    const checkIntervalMs = Math.max(50, Math.min(1000, Math.floor(Math.min(headersTimeout, requestTimeoutMs || Infinity, idleMs || Infinity) / 4)));
    const h1 = new Http1Server(
      { maxHeaderSize, acceptHttp10: this.c.acceptHttp10, requestTimeoutMs, headersTimeoutMs: headersTimeout, keepAliveTimeoutMs: idleMs, checkIntervalMs, idleTimer: this.scaledBy('HTTP_DOWNSTREAM_CONNECTION_IDLE') },
      {
        request: handler,
        // Upgrades and CONNECT leave the parser here; see upgradeHttp1().
        upgrade: (req, socket, head) => this.upgradeHttp1(req, socket, head, streamIdleMs),
        // Envoy counts a configured request_headers_timeout apart (downstream_rq_header_timeout); the 60 s stand-in for none is the request's.
        clientError: (err, socket) => refuseMalformed(err, socket, this.stats, headersTimeoutMs > 0 && headersTimeout === headersTimeoutMs),
      },
    );
    const tuning = this.c.http2;
    this.makeHttp2Server = () => {
      const h2 = http2Module().createServer({ maxSessionMemory: 64, settings: { maxHeaderListSize: maxHeaderSize, ...tuning.settings } }, handler as never);
      h2.on('session', (session: Http2Session) => this.http2Session(session, tuning));
      h2.on('connect', (req: DownstreamRequest, res: DownstreamResponse) => this.connectHttp2(req, res, streamIdleMs));
      return h2;
    };
    this.h1 = h1;
    this.ctx.drain.onStart((order) => {
      if (order.direction === 'all' || this.ctx.trafficDirection === 'INBOUND') {
        this.drain.started(order, idleMs);
      }
    });
  }

  /** The overload manager's timer `type`, unless the listener bypasses the overload manager (then its timers are never scaled). */
  private scaledBy(type: ScaledTimer): ScaledTimer | undefined {
    return this.ctx.bypassOverload ? undefined : type;
  }

  /** An HTTP/2 connection's session, as the HTTP/2 server makes it: its figures, limits and guard. */
  private http2Session(session: Http2Session, tuning: ReturnType<typeof http2Tuning>): void {
    this.sessions.add(session);
    session.once('close', () => this.sessions.delete(session));
    this.guards.set(session, guardHttp2Session(session, this.h2Socket!, this.stats, tuning, this.limits));
    watchHttp2Idle(session, this.c.timeouts.idleMs, this.c.drainTimeoutMs, this.stats, this.scaledBy('HTTP_DOWNSTREAM_CONNECTION_IDLE'));
  }

  /**
   * A connection the listener chose this filter chain for: plaintext, or TLS already
   * handshaken (`alpn` is what ALPN settled on, if anything). ALPN decides the codec; without
   * it, `codec_type` does, and AUTO reads the first bytes (the HTTP/2 preface starts with "PRI").
   */
  accept(socket: Socket, alpn?: string | false | null): void {
    this.sockets.add(socket);
    this.limits?.connectionOpened(socket);
    this.stats.connection(socket);
    socket.once('close', () => {
      this.sockets.delete(socket);
      if (this.sockets.size === 0) this.allClosed?.();
    });
    if (alpn === 'h2') this.toHttp2(socket);
    else if (alpn === 'http/1.1' || this.c.codec === 'HTTP1') this.toHttp1(socket);
    else this.sniff(socket, this.c.codec === 'HTTP2');
  }

  /**
   * Waits for the connection's first bytes, then hands it to HTTP/2 (the preface starts with
   * "PRI", or `codec_type: HTTP2`) or HTTP/1.1. A plaintext socket accepted paused must be read
   * once before an HTTP/2 session can take its handle: handed over unread, it was never served
   * and its close never noticed.
   */
  private sniff(socket: Socket, http2Only: boolean): void {
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      socket.unshift(chunk);
      if (http2Only || chunk.subarray(0, 3).toString('latin1') === 'PRI') {
        // The HTTP/2 session takes the buffered preface and then reads the socket's handle itself.
        this.toHttp2(socket);
      } else this.toHttp1(socket);
    });
    socket.on('error', () => socket.destroy());
    socket.resume();
  }

  /** Hands a new connection to the HTTP/1.1 server, which reads it from now. */
  private toHttp1(socket: Socket): void {
    http1CodecStats();
    socket.on('timeout', () => this.stats.socketTimedOut(socket));
    this.stats.cxHttp1Total.inc();
    this.stats.cxHttp1Active.inc();
    socket.once('close', () => this.stats.cxHttp1Active.dec());
    this.h1!.connection(socket);
    socket.resume();
  }

  /** Hands a connection to the HTTP/2 server, whose 'session' handler (run at once) guards it. */
  private toHttp2(socket: Socket): void {
    this.h2 ??= this.makeHttp2Server();
    this.h2Socket = socket;
    this.h2.emit('connection', socket);
    this.h2Socket = undefined;
  }

  /**
   * An HTTP/1.1 request Node's parser let go of its connection for: an Upgrade (WebSocket …) or
   * a CONNECT. Its answer is written on the connection itself, which closes after any answer that
   * is not a tunnel. An h2c offer is not an upgrade here (Envoy drops the offer): the request goes
   * back to the parser as if it had come without it.
   */
  private upgradeHttp1(req: Http1Request, socket: Socket, head: Buffer, streamIdleMs: number): void {
    socket.pause(); // nothing reads it until the tunnel is joined
    const type = req.method === 'CONNECT' ? 'CONNECT' : upgradeTypeOf(req.headers);
    if (type === undefined) {
      socket.unshift(head);
      socket.unshift(withoutH2cOffer(req.method ?? 'GET', req.url ?? '/', req.rawHeaders));
      this.h1!.connection(socket);
      socket.resume();
      return;
    }
    socket.on('error', () => socket.destroy());
    // node:http's response, written on the socket itself (it reads the request's method, version and headers).
    const res = new (httpModule().ServerResponse)(req as unknown as IncomingMessage);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    res.once('finish', () => socket.end());
    this.handle(req, res, streamIdleMs, { type, downstream: { kind: 'h1', socket, head } });
  }

  /** An HTTP/2 CONNECT: extended (RFC 8441, `:protocol` names the upgrade, as Envoy's codec reads it), or plain. */
  private connectHttp2(req: DownstreamRequest, res: DownstreamResponse, streamIdleMs: number): void {
    const stream = (res as unknown as { stream: import('node:http2').ServerHttp2Stream }).stream;
    const protocol = req.headers[':protocol'];
    if (typeof protocol === 'string') {
      req.headers[':method'] = 'GET';
      req.headers.upgrade = protocol;
      req.headers.connection = 'upgrade';
    }
    this.handle(req, res, streamIdleMs, { type: typeof protocol === 'string' ? protocol : 'CONNECT', downstream: { kind: 'h2', stream } });
  }

  private handle(req: DownstreamRequest, res: DownstreamResponse, streamIdleMs: number, upgrade?: UpgradeRequest): void {
    const stats = this.stats;
    const started = performance.now();
    const headers = req.headers;
    const http1 = req.httpVersionMajor === 1;
    const http10 = http1 && req.httpVersionMinor === 0;
    const c = this.c;
    if (http10 && headers.host === undefined && c.defaultHostHttp10 !== undefined) headers.host = c.defaultHostHttp10;
    if (c.schemeOverwrite !== undefined) headers[':scheme'] = c.schemeOverwrite;
    // A CONNECT (not an extended one) names its target as the authority and has no path; an HTTP/1.1 one in the request line.
    const connect = upgrade?.type === 'CONNECT';
    let authority = connect && http1 ? (req.url ?? '') : String(headers[':authority'] ?? headers.host ?? '');
    let path = connect ? '' : (req.url ?? '/');
    if (connect && http1) headers.host = authority;
    // RFC 9112 §3.2.2: an absolute-form target's authority is the request's, whatever Host says.
    const absolute = http1 && !connect && path.charCodeAt(0) !== 47 /* '/' */ ? absoluteForm(path) : undefined;
    if (absolute) {
      authority = absolute.authority;
      path = absolute.path;
      headers.host = authority;
    }
    const rq: RequestView = { method: (headers[':method'] as string | undefined) ?? req.method ?? 'GET', path, authority, headers };
    const logs = c.accessLogs;
    const tap = activeTap(c.tapConfigId);
    const localReplies = c.localReplies;
    // The exchange is recorded when something reads it: an access log, a tap, local_reply_config's filters.
    const tracing = this.tracing;
    // Also while the request's story is logged at debug: its local replies' details are the record's.
    const record = logs || tap || localReplies || tracing || streamLogOn() ? new HttpExchangeRecord(req, res, rq, started) : undefined;
    /** The request's spans, once it is routed (with `tracing`). */
    let trace: RequestTrace | undefined;
    let route: Route | undefined;
    if (tap) record!.captureBodies(tap.maxRequestBytes, tap.maxResponseBytes);
    const grpc = isGrpcContentType(headers['content-type']);
    const reply: LocalReplyContext = localReplies ? { server: c.server, grpc, rewrite: (status, body) => localReplies.rewrite(record!, status, body), record } : { server: c.server, grpc, record };
    logRequestHeaders(req);
    stats.rqTotal.inc();
    stats.rqActive.inc();
    (req.httpVersionMajor === 2 ? stats.rqHttp2Total : stats.rqHttp1Total).inc();
    const connectionRequests = stats.request(req.socket, headers['user-agent']);
    let resetBeforeResponse = false;
    const session = http1 ? undefined : (req as unknown as { stream?: { session?: Http2Session } }).stream?.session;
    const guard = session === undefined ? undefined : this.guards.get(session);
    if (guard) req.once('aborted', () => (resetBeforeResponse = !res.headersSent));
    if (streamAccountsKept()) openStreamAccount(req, res, stats, record);
    // on, not once: a response closes once, and once's wrapper and its removal cost every request.
    res.on('close', () => {
      stats.rqActive.dec();
      if (connectionRequests) connectionRequests.active--;
      if (res.writableFinished && !req.complete) stats.rqResponseBeforeRqComplete.inc();
      if (res.writableFinished) logEncodeComplete(req);
      guard?.streamClosed(resetBeforeResponse, performance.now() - started);
      // A tunnel's stream completes when it closes, with the status that opened it (101, or 200 to an HTTP/2 client).
      const tunnel = upgrade?.tunnel !== undefined;
      if (tunnel) stats.completed(http1 ? 101 : 200, started);
      else if (res.writableFinished && !req.aborted) stats.completed(res.statusCode, started);
      if (record) {
        if (!tunnel && (!res.writableFinished || req.aborted) && record.responseFlags === 0) record.responseFlags |= ResponseFlag.downstreamConnectionTermination;
        record.finish(res, logs);
        trace?.finish(record, route?.metadata, record.responseCode);
      }
    });
    if (this.ctx.drain.drainClose(this.ctx.trafficDirection)) this.drain.closeAfterResponse(req, res);
    if (refused(req, res, { http1, http10, connect, path }, c.checks, stats, record, reply)) return;
    if (!this.ctx.bypassOverload && refusedByOverload(res, http1, session, stats, record, reply)) return;
    if (!connect && answeredByPathNormalization(rq, c.pathNormalization, res, http1, stats, record, reply)) return;
    if (this.limits?.request(req, res, reply, record, upgrade) === 'stop') return;
    const streamMs = this.limits?.maxStreamMs ?? 0;
    let duration: StreamDuration | undefined;
    if (streamMs > 0) (duration = new StreamDuration(res, started, stats, { reply, record, upgrade })).limit(streamMs);
    // Envoy answers `100 Continue` itself (Node's server has by now) and does not pass the
    // expectation on: the upstream gets the body straight away (proxy_100_continue is refused).
    if (headers.expect !== undefined && headers.expect.toLowerCase() === '100-continue') delete headers.expect;
    // The stream's idle timer, which any read or write restarts: the HTTP/1.1 connection's (it calls
    // the handler itself), or Node's HTTP/2 stream timeout, which tells the request while it is
    // being read, then the response. Either answers 408 (or, mid-response, resets the stream).
    let idle = false;
    const streamIdle = () => {
      if (upgrade?.tunnel) {
        upgrade.tunnel.cut(ResponseFlag.streamIdleTimeout, 'stream_idle_timeout');
        return;
      }
      if (idle || res.writableEnded) return;
      idle = true;
      stats.rqIdleTimeout.inc();
      if (record) {
        record.responseFlags |= ResponseFlag.streamIdleTimeout;
        record.responseCodeDetails = 'stream_idle_timeout';
      }
      sendLocalReply(res, LocalReply.streamIdleTimeout.status, LocalReply.streamIdleTimeout.body, reply);
    };
    const idleFor = streamIdleTimer(req, res, upgrade, streamIdle, this.scaledBy('HTTP_DOWNSTREAM_STREAM_IDLE'));
    if (streamIdleMs > 0) idleFor(streamIdleMs);

    const client = mutateRequestHeaders(req, headers, c.headerSettings);
    if ('rejectStatus' in client) {
      // An original IP detection extension found no address and refuses the request (Envoy's reject_with_status).
      stats.rqRejectedViaIpDetection.inc();
      if (record) record.responseCodeDetails = 'rejecting_because_detection_failed';
      sendLocalReply(res, client.rejectStatus, '', reply);
      return;
    }
    record?.setClient(client);

    // No HTTP filter, not even the router (Envoy accepts that): nothing answers; the stream idle
    // timeout (408) or the client ends the request, as with Envoy.
    if (c.noFilters) return;

    const table = c.rdsName === undefined ? c.routes : this.ctx.routeTables.get(c.rdsName);
    route = table?.route(rq);
    // As Envoy's router (setIdleTimeout): the route's idle_timeout replaces stream_idle_timeout from here on.
    if (route?.action.kind === 'route' && route.action.idleTimeoutMs !== undefined) idleFor(route.action.idleTimeoutMs);
    // And its max_stream_duration replaces the connection manager's (a gRPC request's grpc-timeout may set it).
    const policy = route?.action.kind === 'route' ? route.action.streamDuration : undefined;
    if (policy) (duration ??= new StreamDuration(res, started, stats, { reply, record, upgrade })).routed(policy, headers, grpc, streamMs);
    if (record) {
      record.routeName = route?.name;
      if (tracing) trace = tracing.begin(req, res, headers, authority, route?.tracing);
    }
    // An upgrade, as Envoy's filter manager admits it (a refused one is answered 403).
    const filters = upgrade ? admitUpgrade(upgrade, route, c.upgrades, c.filters, { stats, res, record, reply, drain: this.drain }) : c.filters;
    if (filters === null) return;
    const clusterName = route?.action.kind === 'route' ? chooseClusterName(route.action, rq) : undefined;
    const exchange: Exchange = { req, res, rq, route, clusterName, record, reply, headers, http1, client, ...(upgrade ? { upgrade } : {}) };
    // The HTTP filters between the first and the router see the request now, and every response later.
    const fx: FilterExchange | undefined = filters.length ? { req, res, rq, route, clusterName, reply, record, client, ...(trace ? { healthCheck: trace.notSampled } : {}) } : undefined;
    const filtered = fx ? runFilterChain(filters, fx) : 'continue';
    // The upstream gets the request's trace context (from the router's child span, with start_child_span).
    if (trace && route?.action.kind === 'route') trace.upstream(clusterName);
    if (filtered === 'continue') dispatchRoute(exchange, fx?.body ?? fx?.bodyStream, this.dispatchContext);
    else if (filtered !== 'stop') {
      // A filter holds the request (a delay, a body to read): it goes on when the filter says, if its client is still there.
      void filtered.then((decision) => {
        if (decision === 'continue' && !req.aborted && !res.destroyed && !res.headersSent) dispatchRoute(exchange, fx?.body ?? fx?.bodyStream, this.dispatchContext);
      });
    }
  }

  /**
   * A defect of ours met while a request was being handled: the worker would exit with it and take
   * every other stream down, so the request is answered 500 (or reset, if its response began), the
   * connection closes, and the error is logged with its stack for a report.
   */
  private handlerFailed(err: Error, res: DownstreamResponse): void {
    log.error(`request handling failed: ${err.stack ?? err.message}`);
    res.shouldKeepAlive = false;
    if (res.headersSent || res.writableEnded) res.destroy();
    else sendLocalReply(res, 500, '', { server: this.c.server, grpc: false });
  }

  /**
   * Closes idle HTTP/1 keep-alive connections, sends GOAWAY on HTTP/2 sessions, and resolves
   * when the last connection has closed (busy ones finish their requests first). The listener
   * has stopped accepting.
   */
  close(): Promise<void> {
    this.stopBufferedBytes();
    this.drain.close();
    this.h1?.closeIdleConnections();
    for (const session of this.sessions) {
      session.close(); // a GOAWAY
      http2CodecStats().goawaySent.inc();
      logGoawaySent(session);
    }
    if (this.sockets.size === 0) return Promise.resolve();
    return new Promise((resolve) => (this.allClosed = resolve));
  }
}
