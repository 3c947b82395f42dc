import { connect, constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { UpstreamTls } from '../../shared/tls/upstream.js';

/**
 * HTTP/2 to an upstream host over cleartext (prior knowledge), for clusters that ask for it
 * (`http2_protocol_options`, or an explicit http2 config in typed_extension_protocol_options).
 * undici 7 negotiates HTTP/2 only through TLS ALPN, so these go through node:http2: one session
 * per host per worker, multiplexing every request, re-made when it closes or fails.
 *
 * A request is driven through the same handler callbacks as undici's dispatch API, so the
 * router does not care which protocol carries it.
 */

export interface H2Target {
  authority: string;
  connectTimeoutMs: number;
  /** The cluster's TLS (ALPN h2); cleartext with prior knowledge without it. */
  tls?: UpstreamTls;
}

/**
 * A stream on a session that never connected fails with ERR_HTTP2_STREAM_CANCEL; what the
 * router needs is the session's own failure (ECONNREFUSED, a connect timeout), as undici reports it.
 */
function connectError(err: Error, sessionError: Error | undefined): Error {
  const code = (sessionError as NodeJS.ErrnoException | undefined)?.code ?? 'ECONNREFUSED';
  return Object.assign(new Error(sessionError?.message ?? err.message), { code: code === 'UND_ERR_CONNECT_TIMEOUT' ? code : 'ECONNREFUSED' });
}

/** Told of each session's life, for the connection figures. */
export interface ConnectionObserver {
  /** A connection is being attempted (it counts against max_connections from here; optional). */
  connectionStarted?(): void;
  connectionOpened(): void;
  connectionClosed(): void;
  connectionFailed(): void;
}

export class H2Connection {
  private session: ClientHttp2Session | undefined;
  private connected = false;
  private sessionError: Error | undefined;

  constructor(
    private readonly target: H2Target,
    private readonly observer: ConnectionObserver,
  ) {}

  private current(): ClientHttp2Session {
    if (this.session && !this.session.closed && !this.session.destroyed) return this.session;
    this.connected = false;
    this.sessionError = undefined;
    const tls = this.target.tls;
    const session = tls ? connect(`https://${this.target.authority}`, tls.options) : connect(`http://${this.target.authority}`);
    this.observer.connectionStarted?.();
    const timer = setTimeout(() => {
      if (!this.connected) session.destroy(Object.assign(new Error('connect timeout'), { code: 'UND_ERR_CONNECT_TIMEOUT' }));
    }, this.target.connectTimeoutMs);
    let opened = false;
    session.once('connect', () => {
      tls?.outcome(null);
      this.connected = true;
      opened = true;
      this.observer.connectionOpened();
      clearTimeout(timer);
    });
    session.on('error', (err) => {
      if (!opened) tls?.outcome(err);
      this.sessionError = err; // reported through each stream
    });
    session.once('close', () => {
      clearTimeout(timer);
      if (opened) this.observer.connectionClosed();
      else this.observer.connectionFailed();
      if (this.session === session) this.session = undefined;
    });
    this.session = session;
    return session;
  }

  /** Sends one request; `handler` gets the response as undici's dispatch handler would. */
  request(method: string, path: string, headers: string[], body: Buffer | Readable | null, handler: Dispatcher.DispatchHandler): void {
    const session = this.current();
    const wasConnected = this.connected;
    const out: OutgoingHttpHeaders = { ':method': method, ':path': path, ':scheme': 'http' };
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
        stream.close(constants.NGHTTP2_CANCEL);
        handler.onResponseError?.(controller as unknown as Dispatcher.DispatchController, reason);
      },
      pause() {
        controller.paused = true;
        stream.pause();
      },
      resume() {
        controller.paused = false;
        stream.resume();
      },
    };
    const ctl = controller as unknown as Dispatcher.DispatchController;
    stream = session.request(out, { endStream: body === null });
    handler.onRequestStart?.(ctl, {});
    stream.on('response', (h: IncomingHttpHeaders, flags: number) => {
      // A response that is headers only (gRPC's trailers-only answer): the router answers it the same way.
      controller.headersOnly = (flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0;
      const { ':status': status, ...rest } = h;
      handler.onResponseStart?.(ctl, Number(status), rest as never);
    });
    stream.on('data', (chunk: Buffer) => handler.onResponseData?.(ctl, chunk));
    // A gRPC response's status comes in its trailers: they reach the handler with the end.
    let trailers: IncomingHttpHeaders = {};
    stream.once('trailers', (t: IncomingHttpHeaders) => (trailers = t));
    stream.on('end', () => {
      if (finished) return;
      finished = true;
      handler.onResponseEnd?.(ctl, trailers as never);
    });
    stream.on('error', (err: Error) => {
      if (finished) return;
      finished = true;
      handler.onResponseError?.(ctl, wasConnected || this.connected ? err : connectError(err, this.sessionError));
    });
    stream.on('close', () => {
      if (finished) return;
      finished = true;
      const err = Object.assign(new Error(`upstream reset the stream (code ${stream.rstCode})`), { code: 'UND_ERR_SOCKET' });
      handler.onResponseError?.(ctl, this.connected ? err : connectError(err, this.sessionError));
    });
    if (Buffer.isBuffer(body)) stream.end(body);
    else if (body) body.pipe(stream);
  }

  close(): void {
    this.session?.close();
  }
}
