import { applyTcpKeepaliveOnConnect, type TcpKeepalive } from '../../shared/upstream/tcp-keepalive.js';
import type { IncomingHttpHeaders } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { tlsModule } from '../../shared/builtins.js';
import { ConsumedHandle } from '../http1/consume.js';
import { writeLatin1 } from '../http1/direct-write.js';
import { addDeadline, removeDeadline, type DeadlineList, type Deadlined } from '../deadlines.js';
import { HTTPParser, type NativeParser, type ParseError } from '../http1/llhttp.js';
import { connectTimeoutError, CONNECT_TIMEOUT, type UpstreamHandler, type UpstreamRequest } from './upstream-handler.js';
import type { ConnectionLimit, ConnectionObserver } from './h2.js';
import type { UpstreamTls } from '../../shared/extensions/transport-sockets/tls/upstream.js';
import { closedError, headersObject, InFlight, keepAliveHintMs, protocolError, requestHead, streamRequestBody } from './http1-messages.js';
import { logConnected, logConnecting, logResponseComplete } from './pool-log.js';

/**
 * One HTTP/1.1 connection to an upstream host, carrying one request at a time (no pipelining,
 * as Envoy's HTTP/1 pool): the request's head is written with one write (with a buffered body,
 * one writev), the response is parsed by Node's llhttp, and the connection is kept for the next
 * request unless either side said `connection: close`, the cluster's limits retire it, or a
 * request left it in an unknown state (aborted, its body not sent whole).
 *
 * It replaces undici's Pool and Client, for memory and start-up rather than speed: measured on
 * the bench bootstrap, the worker's idle RSS went from 66–76 MB to 59 MB and its peak under 1,000
 * connections from 114–165 MB to 107 MB, and loading undici's client had cost ~80 ms of a
 * worker's start; CPU per request did not move beyond the machine's noise (114.5 against
 * 111.4 µs, medians of three alternating rounds), the writes' syscalls being most of it.
 */

export interface Http1ConnectionTarget {
  ip: string;
  port: number;
  /** `ip:port`, for messages. */
  address: string;
  connectTimeoutMs: number;
  tls?: UpstreamTls;
  /** idle_timeout (0: off) and max_connection_duration (0: off). */
  idleMs: number;
  maxConnectionMs: number;
  /** auto_config: ALPN offers h2 and http/1.1, and an h2 answer hands the connection to HTTP/2 (events.switchedToH2). */
  auto?: boolean;
  /** The cluster's upstream_connection_options.tcp_keepalive, set once connected. */
  keepalive?: TcpKeepalive;
  /** How its socket is made when not as any other's: a PROXY header first (proxied-socket.ts). */
  connect?: () => Socket;
}

/** What the pool hears from a connection. */
export interface Http1ConnectionEvents {
  /** It has no request now and may take the next. */
  idle(connection: Http1Connection): void;
  /** It closed (after failing to connect, or after it was open); it takes no request any more. */
  closed(connection: Http1Connection): void;
  /**
   * auto_config: its ALPN said h2. It let go of its socket, open and handshaken, for an HTTP/2
   * session (with the time its connect took) and of the request it was given, if any: neither is
   * its any more (closed() is not called).
   */
  switchedToH2?(connection: Http1Connection, socket: Socket, connectMs: number, first: { request: UpstreamRequest; handler: UpstreamHandler } | undefined): void;
}

/** Methods whose requests carry a body by definition: without one, `content-length: 0` says so (as undici and Node's client do). */
const EXPECTS_PAYLOAD = new Set(['POST', 'PUT', 'PATCH']);
/** How large a response's head may be: Envoy's HTTP/1 client allows 80 KiB (Node's own default is 16 KiB); past it, a protocol error. */
const MAX_RESPONSE_HEAD_BYTES = 80 * 1024;
/** How much sooner than a server's `Keep-Alive: timeout` hint an idle connection is closed here, so that no request races the server's close. */
const KEEP_ALIVE_HINT_MARGIN_MS = 1000;

const NO_TRAILERS: IncomingHttpHeaders = Object.freeze({}) as IncomingHttpHeaders;

export class Http1Connection implements Deadlined {
  readonly socket: Socket;
  private readonly parser: NativeParser;
  private current: InFlight | undefined;
  /** Requests given to this connection (max_requests_per_connection, upstream_rq_per_cx). */
  requests = 0;
  connected = false;
  /** It takes no further request: it closes once the current one is done (or now, when idle). */
  retiring = false;
  private closed = false;
  private remoteEnded = false;
  private readonly started = performance.now();
  private openedAt = 0;
  /** Idle between requests: its idle timeout (see ../deadlines.ts: a list's links, not a timer of its own). */
  deadlineAt = 0;
  deadlineList: DeadlineList | undefined = undefined;
  deadlinePrev: Deadlined | undefined = undefined;
  deadlineNext: Deadlined | undefined = undefined;
  private expiryTimer: NodeJS.Timeout | undefined;
  /** The server's Keep-Alive timeout hint, less the margin. */
  private hintMs: number | undefined;
  /** Header fields that came before the headers-complete callback (more than 32), or a response's trailers. */
  private fields: string[] = [];
  /** The last piece of body this read parsed, not yet passed on (see body()). */
  private held: Buffer | undefined;
  private connectError: Error | undefined;
  /** The request given to the connection while it connects. */
  private first: InFlight | undefined;
  private readonly consumed: ConsumedHandle | undefined;

  constructor(
    private readonly target: Http1ConnectionTarget,
    private readonly observer: ConnectionObserver,
    private readonly events: Http1ConnectionEvents,
  ) {
    const tls = target.tls;
    // auto_config: what it speaks is known once ALPN has said (opened()).
    observer.connectionStarted?.(target.auto ? undefined : 'http1');
    this.socket = target.connect ? target.connect() : tls ? tls.guard(tlsModule().connect({ host: target.ip, port: target.port, ...tls.connectOptions() })) : netConnect({ host: target.ip, port: target.port });
    this.socket.setNoDelay(true);
    logConnecting(this.socket, target.address);
    const keepalive = target.keepalive;
    if (keepalive) applyTcpKeepaliveOnConnect(this.socket, keepalive);
    const parser = new HTTPParser();
    parser.initialize(HTTPParser.RESPONSE, {}, MAX_RESPONSE_HEAD_BYTES, 0);
    parser[HTTPParser.kOnHeaders] = (fields: string[]) => this.fieldsArrived(fields);
    parser[HTTPParser.kOnHeadersComplete] = (_major: number, _minor: number, fields: string[] | undefined, _method: number, _url: string, status: number, message: string, _upgrade: boolean, keepAlive: boolean) =>
      this.headersComplete(fields, status, message, keepAlive);
    parser[HTTPParser.kOnBody] = (chunk: Buffer) => this.body(chunk);
    parser[HTTPParser.kOnMessageComplete] = () => this.messageComplete();
    this.parser = parser;
    const connectTimer = target.connectTimeoutMs > 0 ? setTimeout(() => this.socket.destroy(connectTimeoutError(target.address)), target.connectTimeoutMs) : undefined;
    this.socket.once(tls ? 'secureConnect' : 'connect', () => {
      clearTimeout(connectTimer);
      this.opened();
    });
    this.socket.on('data', this.onData);
    // Plaintext: the parser reads the socket's handle itself (see ../http1/consume.ts).
    if (!tls) this.consumed = ConsumedHandle.attach(parser, this.socket, (result) => this.parsed(result));
    this.socket.once('end', this.onEnd);
    this.socket.on('error', this.onError);
    this.onClose = () => {
      clearTimeout(connectTimer);
      this.lost();
    };
    this.socket.once('close', this.onClose);
  }

  private readonly onData = (chunk: Buffer) => this.received(chunk);
  private readonly onEnd = () => this.ended();
  private readonly onError = (err: Error) => (this.connectError ??= err);
  private readonly onClose: () => void;

  /** auto_config, ALPN h2: the socket goes to an HTTP/2 session, with the request given to this connection (see Http1ConnectionEvents.switchedToH2). */
  private handOver(): void {
    this.closed = true;
    const socket = this.socket;
    socket.off('data', this.onData);
    socket.off('end', this.onEnd);
    socket.off('error', this.onError);
    socket.off('close', this.onClose);
    const first = this.first;
    this.first = undefined;
    setImmediate(() => this.parser.close());
    this.events.switchedToH2?.(this, socket, performance.now() - this.started, first && !first.done ? { request: first.request, handler: first.handler } : undefined);
  }

  /** Sends a request now (the connection is idle and open) or once it connects (its first). */
  send(request: UpstreamRequest, handler: UpstreamHandler, last: boolean): void {
    this.requests++;
    const rq = new InFlight(this, request, handler, last);
    if (last) this.retiring = true;
    removeDeadline(this);
    if (!this.connected) {
      this.first = rq;
      return;
    }
    this.start(rq);
  }

  /** Retires the connection (max_connection_duration, the host left): now if idle, else after its response. */
  retire(limit?: ConnectionLimit): void {
    if (this.closed) return;
    if (limit) this.observer.limitReached?.(limit);
    this.retiring = true;
    if (!this.current && !this.first) this.socket.destroy();
  }

  private opened(): void {
    this.connected = true;
    this.openedAt = performance.now();
    const tls = this.target.tls;
    tls?.outcome(null, this.socket as TLSSocket);
    if (this.target.auto) {
      if ((this.socket as TLSSocket).alpnProtocol === 'h2' && this.events.switchedToH2) return this.handOver();
      this.observer.negotiated?.('http1');
    }
    this.observer.connectionOpened({ connectMs: this.openedAt - this.started, protocol: 'http1', socket: this.socket });
    logConnected(this.socket, this.first !== undefined);
    if (this.target.maxConnectionMs > 0) this.expiryTimer = setTimeout(() => this.retire('max_connection_duration'), this.target.maxConnectionMs).unref();
    const first = this.first;
    this.first = undefined;
    if (first) this.start(first);
    else this.becameIdle();
  }

  private start(rq: InFlight): void {
    rq.handler.onRequestStart?.(rq);
    if (rq.done) {
      // Aborted before a byte was written: the connection is as clean as before.
      if (!this.closed) this.becameIdle();
      return;
    }
    this.current = rq;
    const { method, path, headers, body } = rq.request;
    const socket = this.socket;
    const built = requestHead(method, path, headers, body);
    if ('invalid' in built) {
      // Nothing was written: the connection stays as it was; the request fails as a reset (Envoy's 503).
      this.current = undefined;
      rq.done = true;
      rq.handler.onResponseError?.(rq, closedError(`request not sent: ${built.invalid}`));
      if (!this.closed) this.becameIdle();
      return;
    }
    let head = built.head;
    const length = built.length;
    if (rq.last) head += 'connection: close\r\n';
    if (body === null) {
      if (length === undefined && EXPECTS_PAYLOAD.has(method)) head += 'content-length: 0\r\n';
      else if (length !== undefined) head += `content-length: ${length}\r\n`;
      writeLatin1(socket, head + '\r\n');
      rq.sent = true;
      return;
    }
    if (Buffer.isBuffer(body)) {
      head += `content-length: ${body.length}\r\n\r\n`;
      socket.cork();
      socket.write(head, 'latin1');
      if (body.length > 0) socket.write(body);
      socket.uncork();
      rq.sent = true;
      return;
    }
    head += length !== undefined ? `content-length: ${length}\r\n\r\n` : 'transfer-encoding: chunked\r\n\r\n';
    socket.write(head, 'latin1');
    streamRequestBody(socket, rq, body, length === undefined ? undefined : Number(length), (err) => this.abort(rq, err));
  }

  private received(chunk: Buffer): void {
    this.parsed(this.parser.execute(chunk));
  }

  private parsed(result: number | ParseError): void {
    // What this read parsed of a body that goes on is passed on now (see body()).
    this.passHeld();
    if (typeof result !== 'number') this.parseFailed(result);
  }

  /** The upstream's FIN: a response read until close ends here; any other one was cut short. */
  private ended(): void {
    this.remoteEnded = true;
    // A response cut short fails as a reset when the socket closes (see lost()), not as a protocol error.
    if (this.current) this.parser.finish();
    this.retiring = true;
    this.socket.destroy();
  }

  private parseFailed(err: ParseError): void {
    const rq = this.current;
    const error = protocolError(err, rq ? 'upstream response is not valid HTTP/1.1' : 'upstream sent bytes with no request outstanding');
    this.socket.destroy();
    if (rq) this.fail(rq, error);
  }

  private fieldsArrived(fields: string[]): void {
    for (let i = 0; i < fields.length; i++) this.fields.push(fields[i]!);
  }

  private headersComplete(fields: string[] | undefined, status: number, message: string, keepAlive: boolean): number {
    const rq = this.current;
    let flat = fields;
    if (flat === undefined || this.fields.length > 0) {
      if (flat) this.fieldsArrived(flat);
      flat = this.fields;
      this.fields = [];
    }
    if (!rq || rq.done) {
      if (!rq) this.parseFailed(Object.assign(new Error('a response to no request'), { code: 'HPE_UNEXPECTED_RESPONSE' }));
      return 1;
    }
    if (status < 200) {
      if (status === 101) {
        this.socket.destroy();
        this.fail(rq, protocolError(Object.assign(new Error('101 Switching Protocols to a request that asked for no upgrade'), { code: 'HPE_UNEXPECTED_UPGRADE' }), 'upstream response is not valid HTTP/1.1'));
        return 1;
      }
      // 100 Continue, 102, 103 Early Hints: not forwarded (Envoy's default), the final response follows.
      rq.informational = true;
      return 1;
    }
    if (!keepAlive) this.retiring = true;
    const headers = headersObject(flat);
    const hint = headers['keep-alive'];
    if (typeof hint === 'string') {
      const ms = keepAliveHintMs(hint);
      if (ms !== undefined) {
        this.hintMs = ms - KEEP_ALIVE_HINT_MARGIN_MS;
        if (this.hintMs <= 0) this.retiring = true;
      }
    }
    rq.handler.onResponseStart?.(rq, status, headers, message);
    // A response to HEAD has no body whatever its content-length says.
    return rq.request.method === 'HEAD' ? 1 : 0;
  }

  /**
   * A piece of the body is held until the parser says what follows it: more body (it is passed on
   * then), the response's end (the two go together, see onResponseLastData), or the end of this
   * read (parsed(): passed on). So the last piece of a response that one read brought whole goes
   * to the client with its end, in one write.
   */
  private body(chunk: Buffer): void {
    const rq = this.current;
    if (!rq || rq.done || rq.informational) return;
    this.passHeld();
    this.held = chunk;
  }

  /** The body piece held back, to the current request's handler. */
  private passHeld(): void {
    const chunk = this.held;
    if (chunk === undefined) return;
    this.held = undefined;
    const rq = this.current;
    if (rq && !rq.done) rq.handler.onResponseData?.(rq, chunk);
  }

  private messageComplete(): void {
    const rq = this.current;
    if (!rq) return;
    if (rq.informational) {
      rq.informational = false;
      return;
    }
    const trailers = this.fields.length > 0 ? headersObject(this.fields) : NO_TRAILERS;
    this.fields = [];
    const last = this.held;
    this.held = undefined;
    this.current = undefined;
    if (rq.done) return;
    rq.done = true;
    if (!rq.sent) {
      // Answered before its body was sent whole (a 413, say): what remains of it is not sent, and
      // the connection is closed, since the server may yet read it as the next request.
      rq.stopBody?.();
      this.retiring = true;
    }
    const handler = rq.handler;
    logResponseComplete(this.socket);
    if (last === undefined) handler.onResponseEnd?.(rq, trailers);
    else if (handler.onResponseLastData) handler.onResponseLastData(rq, last, trailers);
    else {
      handler.onResponseData?.(rq, last);
      handler.onResponseEnd?.(rq, trailers);
    }
    if (this.retiring || this.remoteEnded) this.socket.destroy();
    else if (!this.closed) this.becameIdle();
  }

  /** Idle for its whole idle timeout: closed. */
  deadlineReached(): void {
    this.observer.limitReached?.('idle_timeout');
    this.retiring = true;
    this.socket.destroy();
  }

  private becameIdle(): void {
    if (this.retiring) {
      // Its last request (max_requests_per_connection) never went out; it takes no other.
      this.socket.destroy();
      return;
    }
    if (this.socket.isPaused()) this.socket.resume();
    const idleMs = this.hintMs !== undefined && (this.target.idleMs === 0 || this.hintMs < this.target.idleMs) ? this.hintMs : this.target.idleMs;
    if (idleMs > 0) addDeadline(this, performance.now(), idleMs);
    this.events.idle(this);
  }

  /** The caller ends the request: the connection is closed unless nothing of the request was written. */
  abort(rq: InFlight, reason: Error): void {
    if (rq.done) return;
    rq.done = true;
    rq.stopBody?.();
    if (this.first === rq) this.first = undefined;
    if (this.current === rq) {
      this.current = undefined;
      this.held = undefined;
      this.retiring = true;
      this.socket.destroy();
    }
    rq.handler.onResponseError?.(rq, reason);
  }

  private fail(rq: InFlight, err: Error): void {
    if (this.current === rq) {
      this.current = undefined;
      this.held = undefined;
    }
    if (rq.done) return;
    rq.done = true;
    rq.stopBody?.();
    rq.handler.onResponseError?.(rq, err);
  }

  private lost(): void {
    if (this.closed) return;
    this.closed = true;
    this.retiring = true;
    removeDeadline(this);
    clearTimeout(this.expiryTimer);
    const socket = this.socket;
    if (!this.connected) {
      // connectFailure: whatever ended it (a refusal, a TLS handshake, a reset), it never connected.
      const err = Object.assign((this.connectError ?? closedError(`connection to ${this.target.address} closed before it was established`)) as NodeJS.ErrnoException, { connectFailure: true });
      this.target.tls?.outcome(err);
      this.observer.connectionFailed(err.code === CONNECT_TIMEOUT);
      const first = this.first;
      this.first = undefined;
      if (first) this.fail(first, err);
    } else {
      this.observer.connectionClosed({ lengthMs: performance.now() - this.openedAt, rxBytes: socket.bytesRead, txBytes: socket.bytesWritten, remote: this.remoteEnded, socket, requests: this.requests });
      const rq = this.current;
      if (rq) this.fail(rq, closedError(this.remoteEnded ? 'upstream closed the connection before the response ended' : `upstream connection failed: ${this.connectError?.message ?? 'closed'}`));
    }
    // Freed once no callback of this turn can reach it.
    this.consumed?.detach();
    setImmediate(() => this.parser.close());
    this.events.closed(this);
  }
}

