import { applyTcpKeepalive, type TcpKeepalive } from '../../shared/upstream/tcp-keepalive.js';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { followHttp2Stream, type Http2CodecStats } from '../../shared/stats/codec-stats.js';
import type { ClientHttp2Session, ClientHttp2Stream, IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http2';
import { http2Module, tlsModule } from '../../shared/builtins.js';
import type { Readable } from 'node:stream';
import { CONNECT_TIMEOUT, connectTimeoutError, type UpstreamController, type UpstreamHandler } from './upstream-handler.js';
import type { Http2Tuning } from '../../shared/config/http2-options.js';
import type { UpstreamTls } from '../../shared/extensions/transport-sockets/tls/upstream.js';
import type { UpstreamConnectionLimits } from '../../shared/extensions/upstreams/http/protocol.js';
import { destroyOutsideCallbacks } from '../http2-deferred-destroy.js';
import { logConnectionWindow, logGoawaySent, logHttp2Stream } from '../http2-log.js';

/**
 * HTTP/2 to an upstream host over cleartext (prior knowledge), for clusters that ask for it
 * (`http2_protocol_options`, or an explicit http2 config in typed_extension_protocol_options).
 * They go through node:http2: sessions per host per worker (see H2Connection), re-made when
 * they close or fail.
 *
 * A request is driven through the same handler callbacks as an HTTP/1.1 connection's
 * (upstream-handler.ts), so the router does not care which protocol carries it.
 */

export interface H2Target {
  authority: string;
  connectTimeoutMs: number;
  /** The cluster's TLS (ALPN h2); cleartext with prior knowledge without it. */
  tls?: UpstreamTls;
  /** How its sessions' sockets are made when not as any other's (a PROXY header first, see proxied-socket.ts). */
  connect?: () => Socket;
  /** The cluster's http2_protocol_options (SETTINGS, connection window, keepalive, streams per connection). */
  tuning?: Http2Tuning;
  /** A keepalive PING went unanswered (cluster.<name>.http2.keepalive_timeout). */
  onKeepaliveTimeout?: () => void;
  /** The cluster's HTTP/2 codec figures (cluster.<name>.http2.*). */
  codec?: Http2CodecStats;
  /** The cluster's common_http_protocol_options: idle timeout, streams and lifetime per connection. */
  limits?: UpstreamConnectionLimits;
  /** The cluster's upstream_connection_options.tcp_keepalive, set once connected. */
  keepalive?: TcpKeepalive;
}

/**
 * A stream on a session that never connected fails with ERR_HTTP2_STREAM_CANCEL; what the
 * router needs is the session's own failure (ECONNREFUSED, a connect timeout), as an HTTP/1.1 connection reports it.
 */
function connectError(err: Error, sessionError: Error | undefined): Error {
  const failure = sessionError as (NodeJS.ErrnoException & { library?: string; reason?: string }) | undefined;
  // A TLS handshake's error keeps what OpenSSL said (see shared/upstream/transport-failure.ts).
  const tls = failure?.library !== undefined ? { library: failure.library, reason: failure.reason } : {};
  return Object.assign(new Error(failure?.message ?? err.message), { code: failure?.code ?? 'ECONNREFUSED', connectFailure: true, ...tls });
}

/** An upstream connection established: how long it took, and what it speaks. */
export interface ConnectionOpened {
  connectMs: number;
  protocol?: 'http1' | 'http2';
  /** The connection's socket, for the bytes it holds (upstream_cx_rx/tx_bytes_buffered). */
  socket?: { readonly readableLength: number; readonly writableLength: number };
}

/** An upstream connection closed: how long it lived, and the bytes it carried. */
export interface ConnectionClosed {
  lengthMs: number;
  rxBytes: number;
  txBytes: number;
  /** The upstream ended it (its FIN, or for HTTP/2 its GOAWAY), not this side. */
  remote: boolean;
  socket?: ConnectionOpened['socket'];
  /** The requests (streams) it carried, when known. */
  requests?: number;
}

/** Why this side retired a connection, from the cluster's common_http_protocol_options. */
export type ConnectionLimit = 'idle_timeout' | 'max_connection_duration' | 'max_requests';

/** Told of each connection's life, for the connection figures. */
export interface ConnectionObserver {
  /** A connection is being attempted: it counts in upstream_cx_total and against max_connections from here. */
  connectionStarted?(protocol?: 'http1' | 'http2'): void;
  connectionOpened(info?: ConnectionOpened): void;
  connectionClosed(info?: ConnectionClosed): void;
  /** It never connected; `timedOut` when connect_timeout passed. */
  connectionFailed(timedOut?: boolean): void;
  /** A connection reached one of the cluster's limits and is being closed (it finishes what it carries). */
  limitReached?(limit: ConnectionLimit): void;
  /** A connection made (and counted) elsewhere is taken over: an HTTP/1.1 pool's whose ALPN said h2 (auto_config). */
  connectionAdopted?(): void;
  /** auto_config: what a connection counted without a protocol turned out to speak. */
  negotiated?(protocol: 'http1' | 'http2'): void;
}

/** One session to the host, with the streams it carries now. */
interface Session {
  session: ClientHttp2Session;
  connected: boolean;
  error: Error | undefined;
  active: number;
  /** Streams it has carried, and the idle timer while it carries none. */
  streams: number;
  idle: NodeJS.Timeout | undefined;
  /** It reached a limit of the cluster's: no new stream goes on it, and it closes once its streams are done. */
  draining: boolean;
}

/**
 * The HTTP/2 connections to one host: one session multiplexing every request, or, with
 * `max_concurrent_streams`, as many as it takes to keep each under that many streams (as Envoy's
 * pool opens another connection when one is full).
 */
export class H2Connection {
  private readonly sessions: Session[] = [];

  constructor(
    private readonly target: H2Target,
    private readonly observer: ConnectionObserver,
  ) {}

  /** A session with room for one more stream, made if none has. */
  private pick(): Session {
    const limit = this.target.tuning?.settings.maxConcurrentStreams;
    for (const s of this.sessions) if (!s.draining && !s.session.closed && !s.session.destroyed && (limit === undefined || s.active < limit)) return s;
    return this.open();
  }

  /**
   * A TLS connection already made, whose ALPN said h2 (auto_config: an HTTP/1.1 pool made it, see
   * http1-pool.ts): a session over it, counted from here as the pool counted it until now.
   */
  adopt(socket: Socket, connectMs: number): void {
    this.open(socket, connectMs);
  }

  /** A TLS connection for a session (ALPN h2), resuming a session its context kept. */
  private tlsConnection(tls: UpstreamTls): Socket {
    const url = new URL(`https://${this.target.authority}`);
    return tls.guard(tlsModule().connect({ host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(url.port), ...tls.connectOptions(), ALPNProtocols: ['h2'] }));
  }

  private open(adopted?: Socket, adoptedConnectMs = 0): Session {
    const tls = this.target.tls;
    const tuning = this.target.tuning;
    const options = tuning ? { settings: tuning.settings } : {};
    const { connect } = http2Module();
    const made = adopted ?? this.target.connect?.() ?? (tls ? this.tlsConnection(tls) : undefined);
    const session = made
      ? connect(`${tls ? 'https' : 'http'}://${this.target.authority}`, { ...options, createConnection: () => made })
      : connect(`http://${this.target.authority}`, options);
    const entry: Session = { session, connected: false, error: undefined, active: 0, streams: 0, idle: undefined, draining: false };
    this.sessions.push(entry);
    if (adopted) this.observer.connectionAdopted?.();
    else this.observer.connectionStarted?.();
    const started = performance.now() - adoptedConnectMs;
    let openedAt = 0;
    const timer = setTimeout(() => {
      if (!entry.connected) session.destroy(connectTimeoutError(this.target.authority));
    }, this.target.connectTimeoutMs);
    let stopKeepalive: (() => void) | undefined;
    let expiry: NodeJS.Timeout | undefined;
    // The connection's own socket: `session.socket` is a stand-in that throws once a closing session lets the socket go.
    let socket: Socket | undefined;
    destroyOutsideCallbacks(session, () => socket);
    session.once('connect', (_session: ClientHttp2Session, connected: Socket) => {
      socket = connected;
      // An adopted connection's handshake was counted, and its options set, when it was made.
      if (!adopted) tls?.outcome(null, socket as TLSSocket);
      if (!adopted && this.target.keepalive) applyTcpKeepalive(socket, this.target.keepalive);
      entry.connected = true;
      openedAt = performance.now();
      this.observer.connectionOpened({ connectMs: openedAt - started, protocol: 'http2', socket });
      clearTimeout(timer);
      if (tuning?.connectionWindow !== undefined) {
        session.setLocalWindowSize(tuning.connectionWindow);
        logConnectionWindow(session, tuning.connectionWindow);
      }
      if (tuning?.keepalive) stopKeepalive = this.keepAlive(session, tuning.keepalive);
      const maxMs = this.target.limits?.maxConnectionMs ?? 0;
      if (maxMs > 0) expiry = setTimeout(() => this.retire(entry, 'max_connection_duration'), maxMs).unref();
      if (entry.active === 0) this.idleFrom(entry);
    });
    session.on('error', (err) => {
      if (!entry.connected) tls?.outcome(err);
      entry.error = err; // reported through each stream
    });
    let remote = false;
    session.once('goaway', () => (remote = true));
    session.once('connect', () => socket?.once('end', () => (remote = true)));
    session.once('close', () => {
      clearTimeout(timer);
      clearTimeout(expiry);
      clearTimeout(entry.idle);
      stopKeepalive?.();
      if (entry.connected) this.observer.connectionClosed({ lengthMs: performance.now() - openedAt, rxBytes: socket?.bytesRead ?? 0, txBytes: socket?.bytesWritten ?? 0, remote, socket, requests: entry.streams });
      else this.observer.connectionFailed((entry.error as NodeJS.ErrnoException | undefined)?.code === CONNECT_TIMEOUT);
      const i = this.sessions.indexOf(entry);
      if (i >= 0) this.sessions.splice(i, 1);
    });
    return entry;
  }

  /**
   * A session that reached a limit of the cluster's: no new stream goes on it (pick() passes it
   * by), and it closes with a GOAWAY once the streams it carries are done. (Closing it at once
   * could lose a stream just requested: node:http2 destroys a closing session that has no open
   * stream yet.)
   */
  private retire(entry: Session, limit: ConnectionLimit): void {
    if (entry.draining || entry.session.closed || entry.session.destroyed) return;
    entry.draining = true;
    this.observer.limitReached?.(limit);
    if (entry.active === 0) this.goAway(entry);
  }

  /** Closes `entry` with a GOAWAY: the streams it carries finish, no new one starts on it. */
  private goAway(entry: Session): void {
    if (entry.session.closed || entry.session.destroyed) return;
    entry.session.close();
    this.target.codec?.goawaySent.inc();
    logGoawaySent(entry.session);
  }

  /** A session with no stream: idle_timeout retires it unless a stream comes first. */
  private idleFrom(entry: Session): void {
    const idleMs = this.target.limits?.idleMs ?? 0;
    if (idleMs <= 0 || entry.session.closed || entry.session.destroyed) return;
    clearTimeout(entry.idle);
    entry.idle = setTimeout(() => {
      if (entry.active === 0) this.retire(entry, 'idle_timeout');
    }, idleMs).unref();
  }

  /** A stream on `entry`: its idle timer stops, its count goes up (max_requests_per_connection retires it at the limit), and the idle timer starts again when its last stream closes. */
  private streamStarted(entry: Session, stream: ClientHttp2Stream): void {
    entry.active++;
    entry.streams++;
    clearTimeout(entry.idle);
    entry.idle = undefined;
    stream.once('close', () => {
      if (--entry.active > 0) return;
      if (entry.draining) this.goAway(entry);
      else if (entry.connected) this.idleFrom(entry);
    });
    const max = this.target.limits?.maxRequests ?? 0;
    if (max > 0 && entry.streams >= max) this.retire(entry, 'max_requests');
  }

  /** connection_keepalive: a PING every interval (± jitter); unanswered within the timeout, the connection goes. Returns the stop. */
  private keepAlive(session: ClientHttp2Session, k: NonNullable<Http2Tuning['keepalive']>): () => void {
    let timer: NodeJS.Timeout | undefined;
    let deadline: NodeJS.Timeout | undefined;
    const next = () => {
      timer = setTimeout(ping, k.intervalMs * (1 + (Math.random() * 2 - 1) * k.jitter));
      timer.unref();
    };
    const ping = () => {
      if (session.closed || session.destroyed) return;
      deadline = setTimeout(() => {
        this.target.onKeepaliveTimeout?.();
        session.destroy();
      }, k.timeoutMs);
      deadline.unref();
      let sent = false;
      try {
        sent = session.ping((err) => {
          clearTimeout(deadline);
          if (!err) next();
        });
      } catch {
        // closed meanwhile
      }
      if (!sent) {
        clearTimeout(deadline);
        next();
      }
    };
    next();
    return () => {
      clearTimeout(timer);
      clearTimeout(deadline);
    };
  }

  /** Sends one request; `handler` gets the response as upstream-handler.ts says. */
  request(method: string, scheme: string, path: string, headers: string[], body: Buffer | Readable | null, handler: UpstreamHandler): void {
    const entry = this.pick();
    const session = entry.session;
    const wasConnected = entry.connected;
    const out: OutgoingHttpHeaders = { ':method': method, ':path': path, ':scheme': scheme };
    for (let i = 0; i < headers.length; i += 2) {
      const k = headers[i]!;
      const v = headers[i + 1]!;
      if (k === 'host') out[':authority'] = v;
      else {
        const prev = out[k];
        out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [String(prev), v];
      }
    }
    let stream: ClientHttp2Stream;
    let finished = false;
    const controller = {
      aborted: false,
      paused: false,
      headersOnly: false,
      reason: null as Error | null,
      abort(reason: Error) {
        if (finished) return;
        controller.aborted = true;
        controller.reason = reason;
        finished = true;
        resetHere?.();
        stream.close(http2Module().constants.NGHTTP2_CANCEL);
        handler.onResponseError?.(controller, reason);
      },
      pause() {
        controller.paused = true;
        stream.pause();
      },
      resume() {
        controller.paused = false;
        stream.resume();
      },
      bufferedBytes: () => stream.writableLength,
    };
    const ctl: UpstreamController = controller;
    stream = session.request(out, { endStream: body === null });
    const resetHere = this.target.codec ? followHttp2Stream(this.target.codec, stream, 'here') : undefined;
    logHttp2Stream(stream, 'here');
    this.streamStarted(entry, stream);
    handler.onRequestStart?.(ctl);
    let responded = false;
    stream.on('response', (h: IncomingHttpHeaders, flags: number) => {
      responded = true;
      // A response that is headers only (gRPC's trailers-only answer): the router answers it the same way.
      controller.headersOnly = (flags & http2Module().constants.NGHTTP2_FLAG_END_STREAM) !== 0;
      const { ':status': status, ...rest } = h;
      handler.onResponseStart?.(ctl, Number(status), rest);
    });
    stream.on('data', (chunk: Buffer) => handler.onResponseData?.(ctl, chunk));
    // A gRPC response's status comes in its trailers: they reach the handler with the end.
    let trailers: IncomingHttpHeaders = {};
    stream.once('trailers', (t: IncomingHttpHeaders) => (trailers = t));
    stream.on('end', () => {
      // node:http2 ends the stream's reading on an RST_STREAM with NO_ERROR too: without a response, that is a reset ('close' says so).
      if (finished || !responded) return;
      finished = true;
      handler.onResponseEnd?.(ctl, trailers);
    });
    // streamOnly: the stream was reset and its connection carries on (no connection was destroyed with it).
    // refused: the upstream refused the stream (RST_STREAM or a GOAWAY before it, REFUSED_STREAM): it never processed it.
    stream.on('error', (err: Error) => {
      if (finished) return;
      finished = true;
      const refused = stream.rstCode === http2Module().constants.NGHTTP2_REFUSED_STREAM;
      handler.onResponseError?.(ctl, wasConnected || entry.connected ? Object.assign(err, { streamOnly: entry.connected && !session.destroyed, refused }) : connectError(err, entry.error));
    });
    stream.on('close', () => {
      if (finished) return;
      finished = true;
      const streamOnly = entry.connected && !session.destroyed;
      // noError: the upstream reset it with NO_ERROR (upstream_rq_rx_reset_no_error rather than _rx_reset).
      const { NGHTTP2_NO_ERROR, NGHTTP2_REFUSED_STREAM } = http2Module().constants;
      const err = Object.assign(new Error(`upstream reset the stream (code ${stream.rstCode})`), { code: 'ECONNRESET', streamOnly, noError: streamOnly && stream.rstCode === NGHTTP2_NO_ERROR, refused: stream.rstCode === NGHTTP2_REFUSED_STREAM });
      handler.onResponseError?.(ctl, entry.connected ? err : connectError(err, entry.error));
    });
    if (Buffer.isBuffer(body)) stream.end(body);
    else if (body) body.pipe(stream);
  }

  /**
   * A stream for a tunnel (an extended CONNECT carrying an upgrade, a CONNECT): its own headers,
   * its bytes both ways. `failure()` explains a stream that failed: the session's connect
   * failure when it never connected (code ECONNREFUSED or CONNECT_TIMEOUT), else a reset.
   */
  tunnel(headers: OutgoingHttpHeaders): { stream: ClientHttp2Stream; failure: (err?: Error) => Error & { code?: string } } {
    const entry = this.pick();
    const wasConnected = entry.connected;
    const stream = entry.session.request(headers, { endStream: false });
    if (this.target.codec) followHttp2Stream(this.target.codec, stream, 'here');
    logHttp2Stream(stream, 'here');
    this.streamStarted(entry, stream);
    const failure = (err?: Error) => {
      const reset = err ?? Object.assign(new Error(`upstream reset the stream (code ${stream.rstCode})`), { code: 'ECONNRESET' });
      return wasConnected || entry.connected ? reset : connectError(reset, entry.error);
    };
    return { stream, failure };
  }

  close(): void {
    for (const s of this.sessions) this.goAway(s);
  }
}
