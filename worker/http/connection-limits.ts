import type { UpgradeRequest } from './upgrade-router.js';
import { http1CodecStats, http2CodecStats } from '../../shared/stats/codec-stats.js';
import type { DownstreamRequest, DownstreamResponse } from './downstream.js';
import type { Http2Session } from 'node:http2';
import { http2Module } from '../../shared/builtins.js';
import type { Socket } from 'node:net';
import { ResponseFlag } from '../../shared/access-log/entry.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { durationMs } from '../../shared/config/wkt.js';
import type { HttpStats } from '../../shared/stats/http-stats.js';
import type { Counter } from '../../shared/stats/store.js';
import type { HttpExchangeRecord } from './exchange-record.js';
import { drainHttp2Session } from './http2-drain.js';
import { sendLocalReply, type LocalReplyContext } from './local-reply.js';
import { ScaledTimeout } from '../overload.js';
import type { ScaledTimer } from '../../shared/overload/config.js';

/**
 * The connection manager's common_http_protocol_options beyond idle_timeout and
 * max_headers_count, as Envoy applies them to clients' connections and streams:
 *
 * - `max_requests_per_connection`: the request that reaches it is the connection's last (HTTP/1:
 *   `connection: close`; HTTP/2: GOAWAY, streams in flight finish). `downstream_cx_max_requests_reached`.
 * - `max_connection_duration`: the connection drains when it is reached (HTTP/1: closed now if
 *   idle, else after the response in flight; HTTP/2: GOAWAY). `downstream_cx_max_duration_reached`.
 * - `max_stream_duration`: read here, kept per stream by stream-duration.ts (a route's replaces it).
 * - `headers_with_underscores_action`: REJECT_REQUEST answers HTTP/1 with 400 and closes, and
 *   resets an HTTP/2 stream; DROP_HEADER removes such headers. Counted in
 *   `http1.`/`http2.requests_rejected_with_underscores_in_headers` and `…dropped_headers_with_underscores`.
 */

interface ConnectionState {
  requests: number;
  active: number;
  draining: boolean;
  /** The HTTP/2 session on the connection, once it is one. */
  session: Http2Session | undefined;
  socket: Socket;
}

type Underscores = 'ALLOW' | 'REJECT_REQUEST' | 'DROP_HEADER';

export class ConnectionLimits {
  private readonly connections = new WeakMap<object, ConnectionState>();
  /** By codec: [HTTP/1, HTTP/2]. */
  private readonly rejected: [Counter, Counter] | undefined;
  private readonly dropped: [Counter, Counter] | undefined;

  private constructor(
    private readonly httpStats: HttpStats,
    private readonly maxRequests: number,
    private readonly maxConnectionMs: number,
    /** max_stream_duration (0: none): the connection manager arms it per stream (stream-duration.ts), as a route may replace it. */
    readonly maxStreamMs: number,
    private readonly underscores: Underscores,
    /** drain_timeout, for HTTP/2's two-step GOAWAY (see drainHttp2Session). */
    private readonly drainTimeoutMs: number,
    /** reduce_timeouts' timer for max_connection_duration (undefined: not scaled: bypass_overload_manager). */
    private readonly maxTimer: ScaledTimer | undefined,
  ) {
    const [h1, h2] = [http1CodecStats(), http2CodecStats()];
    if (underscores === 'REJECT_REQUEST') this.rejected = [h1.requestsRejectedWithUnderscores, h2.requestsRejectedWithUnderscores];
    if (underscores === 'DROP_HEADER') this.dropped = [h1.droppedHeadersWithUnderscores, h2.droppedHeadersWithUnderscores];
  }

  /** The limits `common` sets, or none (then the connection manager skips all of this). */
  static from(common: JsonObject, httpStats: HttpStats, drainTimeoutMs: number, maxTimer: ScaledTimer | undefined): ConnectionLimits | undefined {
    const maxRequests = typeof common.max_requests_per_connection === 'number' ? common.max_requests_per_connection : 0;
    const maxConnectionMs = typeof common.max_connection_duration === 'string' ? durationMs(common.max_connection_duration) : 0;
    const maxStreamMs = typeof common.max_stream_duration === 'string' ? durationMs(common.max_stream_duration) : 0;
    const underscores = String(common.headers_with_underscores_action ?? 'ALLOW') as Underscores;
    if (maxRequests <= 0 && maxConnectionMs <= 0 && maxStreamMs <= 0 && underscores === 'ALLOW') return undefined;
    return new ConnectionLimits(httpStats, maxRequests, maxConnectionMs, maxStreamMs, underscores, drainTimeoutMs, maxTimer);
  }

  /** A connection the connection manager accepted. */
  connectionOpened(socket: Socket): void {
    const state: ConnectionState = { requests: 0, active: 0, draining: false, session: undefined, socket };
    this.connections.set(socket, state);
    if (this.maxConnectionMs <= 0) return;
    // reduce_timeouts' HTTP_DOWNSTREAM_CONNECTION_MAX shortens it while the worker is overloaded.
    const timer = new ScaledTimeout(this.maxTimer, this.maxConnectionMs, () => this.drain(state));
    socket.once('close', () => timer.stop());
  }

  /** The connection turned out to be HTTP/2: its streams find it by their session. */
  http2Session(socket: Socket, session: Http2Session): void {
    const state = this.connections.get(socket);
    if (!state) return;
    state.session = session;
    this.connections.set(session, state);
  }

  private drain(state: ConnectionState): void {
    if (state.draining) return;
    state.draining = true;
    this.httpStats.cxMaxDurationReached.inc();
    if (state.session) {
      drainHttp2Session(state.session, this.drainTimeoutMs);
    } else if (state.active === 0) state.socket.end();
    else {
      // Envoy's HTTP/1 soft drain: the connection closes once the requests it carries are answered.
      const softDrain = this.httpStats.cxHttp1SoftDrain;
      softDrain.inc();
      state.socket.once('close', () => softDrain.dec());
    }
  }

  /** A request arrived: 'stop' once it has been answered (or reset) here. */
  request(req: DownstreamRequest, res: DownstreamResponse, reply: LocalReplyContext, record: HttpExchangeRecord | undefined, upgrade?: UpgradeRequest): 'continue' | 'stop' {
    const http2 = req.httpVersionMajor === 2;
    if (this.underscores !== 'ALLOW' && this.underscoreHeaders(req, res, reply, record, http2) === 'stop') return 'stop';
    const session = http2 ? (req as unknown as { stream: { session: Http2Session } }).stream.session : undefined;
    const state = this.connections.get(session ?? req.socket);
    if (state) {
      state.requests++;
      state.active++;
      res.once('close', () => {
        state.active--;
        if (state.draining && !state.session && state.active === 0) state.socket.end();
      });
      if (this.maxRequests > 0 && state.requests === this.maxRequests) {
        this.httpStats.cxMaxRequestsReached.inc();
        state.draining = true;
        if (session) drainHttp2Session(session, this.drainTimeoutMs);
      }
      if (state.draining && !session) res.shouldKeepAlive = false;
    }
    return 'continue';
  }

  private underscoreHeaders(req: DownstreamRequest, res: DownstreamResponse, reply: LocalReplyContext, record: HttpExchangeRecord | undefined, http2: boolean): 'continue' | 'stop' {
    const headers = req.headers;
    for (const name in headers) {
      if (name.charCodeAt(0) === 58 /* ':' */ || !name.includes('_')) continue;
      if (this.underscores === 'DROP_HEADER') {
        delete headers[name];
        this.dropped![http2 ? 1 : 0].inc();
        continue;
      }
      this.rejected![http2 ? 1 : 0].inc();
      if (record) {
        record.responseFlags |= ResponseFlag.downstreamProtocolError;
        record.responseCodeDetails = http2 ? 'http2.unexpected_underscore' : 'http1.unexpected_underscore';
      }
      if (http2) {
        (req as unknown as { stream: { close(code: number): void } }).stream.close(http2Module().constants.NGHTTP2_PROTOCOL_ERROR);
      } else {
        this.httpStats.cxProtocolError.inc();
        res.shouldKeepAlive = false;
        sendLocalReply(res, 400, 'Bad Request', reply);
      }
      return 'stop';
    }
    return 'continue';
  }
}
