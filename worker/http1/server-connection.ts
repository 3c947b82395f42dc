import type { Socket } from 'node:net';
import { ConsumedHandle } from './consume.js';
import { HTTPParser, METHODS, type NativeParser, type ParseError } from './llhttp.js';
import { Http1Request, type RequestConnection } from './request.js';
import { Http1Response, type ResponseConnection } from './response.js';
import { resetError, timeoutError, transferCodingError, transferCodingSupported } from './common.js';
import { scaledTimeoutMs } from '../overload.js';
import type { ScaledTimer } from '../../shared/overload/config.js';

/**
 * One downstream HTTP/1.1 connection of the server (server.ts): Node's llhttp over its socket,
 * the requests it reads served one at a time in order, their responses, the timeouts it keeps
 * and what leaves the parser (an upgrade, a CONNECT, an error).
 */

export interface Http1ServerOptions {
  maxHeaderSize: number;
  /** accept_http_10: an HTTP/1.0 request is answered with an `HTTP/1.0` status line, as Envoy's codec answers it (else it gets 426, as 1.1). */
  acceptHttp10?: boolean;
  /** request_timeout (0: none): the whole request must have been read by then. */
  requestTimeoutMs: number;
  /** request_headers_timeout (0: none): the request's head must have been read by then. */
  headersTimeoutMs: number;
  /** How long an idle keep-alive connection is kept (0: until the client closes it). */
  keepAliveTimeoutMs: number;
  /** How often the two timeouts above, and idle keep-alive connections, are checked. */
  checkIntervalMs: number;
  /** The overload manager's timer that scales the keep-alive timeout (undefined: never scaled: bypass_overload_manager). */
  idleTimer?: ScaledTimer;
}

export interface Http1ServerHandlers {
  request(req: Http1Request, res: Http1Response): void;
  upgrade(req: Http1Request, socket: Socket, head: Buffer): void;
  /**
   * A request that is not HTTP/1.1 (the parser's `HPE_*` code, or UNSUPPORTED_TRANSFER_CODING for
   * a transfer coding other than a lone `chunked`), a head too large, or a timeout
   * (`ERR_HTTP_REQUEST_TIMEOUT`). Nothing more is read from the socket. After pipelined requests,
   * it comes once the responses to those before it have been written (never after one that closed).
   */
  clientError(err: NodeJS.ErrnoException, socket: Socket): void;
}
/** What a connection needs of its server (server.ts): the options, the handlers, the current keep-alive timeout, the periodic check. */
export interface ConnectionOwner {
  readonly options: Http1ServerOptions;
  readonly handlers: Http1ServerHandlers;
  readonly keepAliveTimeout: number;
  /** Whether the periodic check runs at least every `ms`. */
  checksEvery(ms: number): boolean;
}

const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;
/** node:http keeps an idle connection this much longer than it told the client, so that the client closes first. */
const KEEP_ALIVE_MARGIN_MS = 1000;
const CONTINUE_LINE = 'HTTP/1.1 100 Continue\r\n\r\n';

/** llhttp's lenient flag for the version: any `HTTP/<digit>.<digit>` is read (and served as 1.0 here, as Envoy's codec serves it). */
const LENIENT_VERSION = 0x10;

/** Where a connection is in reading its current request: waiting for a first byte, in the head, in the body, or between requests. */
type ReadState = 'waiting' | 'head' | 'body' | 'idle';

export class ServerConnection implements RequestConnection, ResponseConnection {
  private readonly parser: NativeParser;
  /** Header fields and target pieces that came before the head was complete (more than 32 fields, or a head over several reads). */
  private fields: string[] = [];
  private url = '';
  /** The request whose body the parser is reading. */
  private incoming: Http1Request | undefined;
  /** The request being answered, and the pipelined ones waiting for it. */
  private current: { req: Http1Request; res: Http1Response } | undefined;
  private readonly waiting: { req: Http1Request; keepAlive: boolean }[] = [];
  /** What stopped the parser after a pipelined request, given to clientError once the responses before it are written. */
  private deferredError: ParseError | NodeJS.ErrnoException | undefined;
  private state: ReadState = 'waiting';
  private messageStart = performance.now();
  private pausedForQueue = false;
  private pausedForBody = false;
  /**
   * Idle after a response since `idleSince` (performance.now()): closed `idleForMs` (as
   * reduce_timeouts has it at each check) later if no request has begun by then; 0 when not idle.
   */
  private idleForMs = 0;
  private idleSince = 0;
  /** A stream's idle timeout kept by the periodic check (0: none, or the socket's timer keeps it). */
  private streamTimeoutMs = 0;
  /** When the check last saw the socket's counts move (0: from the next check); the counts it saw; whether it said 'timeout' since. */
  private activeAt = 0;
  private seenBytes = -1;
  private seenQueued = 0;
  private streamTimedOut = false;
  /** Nothing more is parsed: a parse error, a timeout, an upgrade, or the socket closed. */
  private dead = false;
  private upgraded: Http1Request | undefined;
  private sawPreface = false;
  /** The parser reads the socket's handle itself (see ./consume.ts), unless the socket's handle was consumed before. */
  private readonly consumed: ConsumedHandle | undefined;
  private readonly onData = (chunk: Buffer) => this.received(chunk);
  private readonly onEnd = () => this.ended();
  private readonly onClose = () => this.closed();
  private readonly onTimeout = () => this.timedOut();
  private readonly onDrain = () => this.current?.res.drained();
  private readonly onError = () => {};

  constructor(
    private readonly server: ConnectionOwner,
    readonly socket: Socket,
  ) {
    socket.setNoDelay(true);
    const parser = new HTTPParser();
    parser.initialize(HTTPParser.REQUEST, {}, server.options.maxHeaderSize, LENIENT_VERSION);
    parser[HTTPParser.kOnMessageBegin] = () => this.messageBegan();
    parser[HTTPParser.kOnHeaders] = (fields: string[], url: string) => this.headersArrived(fields, url);
    parser[HTTPParser.kOnHeadersComplete] = (major: number, minor: number, fields: string[] | undefined, method: number, url: string | undefined, _status: number, _message: string, upgrade: boolean, keepAlive: boolean) =>
      this.headersComplete(major, minor, fields, method, url, upgrade, keepAlive);
    parser[HTTPParser.kOnBody] = (chunk: Buffer) => this.incoming?.body(chunk);
    parser[HTTPParser.kOnMessageComplete] = () => this.messageComplete();
    this.parser = parser;
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('close', this.onClose);
    socket.on('timeout', this.onTimeout);
    socket.on('drain', this.onDrain);
    socket.on('error', this.onError);
    // The parser reads the socket's handle itself, as node:http's server does (see ./consume.ts).
    this.consumed = ConsumedHandle.attach(parser, socket, (result) => this.executed(result, undefined));
  }

  get keepAliveTimeoutMs(): number {
    return this.server.keepAliveTimeout;
  }

  /** A stream's idle timeout (0: none), counted from now: see above for which clock keeps it. */
  setStreamTimeout(ms: number): void {
    if (ms > 0 && this.server.checksEvery(ms / 4)) {
      if (this.socket.timeout) this.socket.setTimeout(0);
      this.streamTimeoutMs = ms;
      this.activeAt = 0;
      return;
    }
    this.streamTimeoutMs = 0;
    this.socket.setTimeout(ms);
  }

  idle(): boolean {
    return this.state === 'idle' && this.current === undefined;
  }

  checkTimeout(now: number, headersTimeoutMs: number, requestTimeoutMs: number): void {
    if (this.dead) return;
    if (this.streamTimeoutMs > 0) this.checkStreamIdle(now);
    if (this.dead) return;
    if (this.state === 'idle') {
      if (this.idleForMs > 0 && now >= this.idleSince + scaledTimeoutMs(this.server.options.idleTimer, this.idleForMs) + KEEP_ALIVE_MARGIN_MS && this.current === undefined) {
        this.socket.emit('timeout');
        this.socket.destroy();
      }
      return;
    }
    const elapsed = now - this.messageStart;
    const whole = requestTimeoutMs > 0 && elapsed > requestTimeoutMs;
    if (whole || (headersTimeoutMs > 0 && this.state !== 'body' && elapsed > headersTimeoutMs)) this.failed(timeoutError(!whole));
  }

  /** Bytes read, written or drained since the last check restart the stream's idle time; none for its whole timeout, and it times out (once, until there is activity again). */
  private checkStreamIdle(now: number): void {
    const socket = this.socket;
    const handle = (socket as unknown as { _handle: { bytesWritten: number; writeQueueSize: number } | null })._handle;
    const bytes = socket.bytesRead + (handle ? handle.bytesWritten : 0);
    const queued = handle ? handle.writeQueueSize : 0;
    if (this.activeAt === 0 || bytes !== this.seenBytes || queued !== this.seenQueued) {
      this.activeAt = now;
      this.seenBytes = bytes;
      this.seenQueued = queued;
      this.streamTimedOut = false;
      return;
    }
    if (!this.streamTimedOut && now - this.activeAt >= this.streamTimeoutMs) {
      this.streamTimedOut = true;
      this.timedOut();
    }
  }

  readMore(): void {
    this.pausedForBody = false;
    if (!this.pausedForQueue && !this.dead) this.socket.resume();
  }

  readLess(): void {
    this.pausedForBody = true;
    this.socket.pause();
  }

  private received(chunk: Buffer): void {
    if (this.dead) return;
    this.executed(this.parser.execute(chunk), chunk);
  }

  /** What one read parsed: an error, an upgrade (with the bytes after its head), a preface, or requests. */
  private executed(result: number | ParseError, chunk: Buffer | undefined): void {
    if (this.dead) return;
    if (typeof result !== 'number') {
      this.failed(result);
      return;
    }
    if (this.upgraded) this.upgrade(this.upgraded, (chunk ?? this.consumed!.currentBuffer()).subarray(result));
    else if (this.sawPreface) this.socket.destroy(); // an HTTP/2 preface on a connection served as HTTP/1.1
  }

  private messageBegan(): void {
    this.state = 'head';
    this.idleForMs = 0;
    this.messageStart = performance.now();
  }

  private headersArrived(fields: string[], url: string): void {
    for (let i = 0; i < fields.length; i++) this.fields.push(fields[i]!);
    this.url += url;
  }

  private headersComplete(major: number, minor: number, fields: string[] | undefined, method: number, url: string | undefined, upgrade: boolean, keepAlive: boolean): number {
    let raw = fields;
    if (raw === undefined || this.fields.length > 0) {
      if (raw) this.headersArrived(raw, '');
      raw = this.fields;
      this.fields = [];
    }
    if (url === undefined) {
      url = this.url;
      this.url = '';
    }
    this.state = 'body';
    const req = new Http1Request(this.socket, this);
    // As Envoy's HTTP/1 codec (checkProtocolVersion): a request line that is not HTTP/1.1 (1.0,
    // 0.9, or the 2.0 that llhttp lets through) is served as HTTP/1.0, so 426 unless accept_http_10.
    // Never HTTP/2: that comes only through the HTTP/2 codec, and code keyed on the major would read a stream that is not there.
    if (major !== 1 || minor !== 1) {
      req.httpVersionMinor = 0;
      req.httpVersion = '1.0';
      // llhttp keeps a connection of a later version open; an HTTP/1.0 one stays only with `Connection: keep-alive`.
      if (major !== 1 || minor !== 0) keepAlive = false;
    }
    req.method = METHODS[method] ?? 'GET';
    req.url = url;
    req.rawHeaders = raw;
    if (req.method === 'PRI') {
      this.sawPreface = true;
      return 1;
    }
    if (!transferCodingSupported(raw, req.method)) {
      // As Envoy's codec: 501, before anything of the request goes further; the parser stops here.
      this.failed(transferCodingError());
      return 2;
    }
    if (upgrade) {
      req.upgrade = true;
      this.upgraded = req;
      return 2; // the parser stops after the head: what follows is the upgraded protocol's
    }
    this.incoming = req;
    if (this.current) {
      this.waiting.push({ req, keepAlive });
      this.pausedForQueue = true;
      this.socket.pause();
    } else this.dispatch(req, keepAlive);
    return 0;
  }

  private messageComplete(): void {
    const req = this.incoming;
    this.state = 'idle';
    if (!req) return;
    this.incoming = undefined;
    if (this.fields.length > 0) {
      req.setTrailers(this.fields);
      this.fields = [];
    }
    req.ended();
  }

  private dispatch(req: Http1Request, keepAlive: boolean): void {
    const res = new Http1Response(req, this.socket, this, keepAlive);
    if (req.httpVersionMinor === 0 && this.server.options.acceptHttp10) res.http10 = true;
    this.current = { req, res };
    if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1) {
      const headers = req.headers;
      if (headers.host === undefined) {
        // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400 (node:http's requireHostHeader).
        res.writeHead(400, ['Connection', 'close']);
        res.end();
        return;
      }
      const expect = headers.expect;
      if (expect !== undefined) {
        if (!CONTINUE.test(expect)) {
          res.writeHead(417);
          res.end();
          return;
        }
        this.socket.write(CONTINUE_LINE, 'latin1');
      }
    }
    this.server.handlers.request(req, res);
  }

  /** The current response has been written whole: the next request is served, or the connection closes or waits. */
  finished(res: Http1Response): void {
    const current = this.current;
    if (!current || current.res !== res) return;
    this.current = undefined;
    const req = current.req;
    if (!req.complete && !req.readableDidRead) {
      // Answered before its body was read, and nobody reads it: the rest is read and dropped.
      req.dumped = true;
      this.readMore();
    }
    if (res.last) {
      this.socket.destroySoon();
      return;
    }
    const next = this.waiting.shift();
    if (next) {
      if (this.waiting.length === 0) this.unpauseQueue();
      this.dispatch(next.req, next.keepAlive);
      return;
    }
    const error = this.deferredError;
    if (error) {
      this.deferredError = undefined;
      this.server.handlers.clientError(error as NodeJS.ErrnoException, this.socket);
      return;
    }
    this.unpauseQueue();
    // A stream's idle timeout on the socket's timer ends with its stream: idle, the connection is the keep-alive check's.
    if (this.socket.timeout) this.socket.setTimeout(0);
    const keepAliveMs = this.server.keepAliveTimeout;
    if (keepAliveMs > 0) {
      this.idleSince = performance.now();
      this.idleForMs = keepAliveMs;
    }
  }

  private unpauseQueue(): void {
    if (!this.pausedForQueue) return;
    this.pausedForQueue = false;
    if (!this.pausedForBody && !this.dead) this.socket.resume();
  }

  /** An Upgrade or CONNECT: the socket leaves this parser, with what followed the head. */
  private upgrade(req: Http1Request, head: Buffer): void {
    this.detach();
    this.consumed?.detach();
    this.parser.finish();
    this.server.handlers.upgrade(req, this.socket, head);
  }

  private detach(): void {
    this.dead = true;
    const socket = this.socket;
    socket.off('data', this.onData);
    socket.off('end', this.onEnd);
    socket.off('timeout', this.onTimeout);
    socket.off('drain', this.onDrain);
    socket.off('error', this.onError);
  }

  /** Not HTTP/1.1, or too slow: nothing more is read; the connection manager answers (400, 408, 431) and closes. */
  private failed(err: ParseError | NodeJS.ErrnoException): void {
    if (this.dead) return;
    this.dead = true;
    this.socket.off('data', this.onData);
    const current = this.current;
    if (current !== undefined && this.incoming !== current.req) {
      // A pipelined request broke while an earlier one is answered: as Envoy's codec, which reads
      // the next request only once the one before it is done, the earlier responses go first.
      // A broken request that was queued is dropped; the error takes its place.
      const broken = this.waiting.findIndex((w) => w.req === this.incoming);
      if (broken >= 0) this.waiting.splice(broken, 1);
      this.incoming = undefined;
      this.deferredError = err;
      return;
    }
    this.server.handlers.clientError(err as NodeJS.ErrnoException, this.socket);
  }

  private ended(): void {
    if (this.dead) return;
    const result = this.parser.finish();
    if (result !== undefined && typeof result !== 'number') this.failed(result);
  }

  private timedOut(): void {
    const req = this.current?.req ?? this.incoming;
    // Between requests: the keep-alive check's 'timeout' (it closes the connection itself), or a stream's idle time kept by that check.
    if (req === undefined) return;
    const handler = req.streamIdleHandler;
    handler?.();
    const reqListened = !req.complete && req.emit('timeout', this.socket);
    const resListened = this.current !== undefined && this.current.res.emit('timeout', this.socket);
    if (handler === undefined && !reqListened && !resListened) this.socket.destroy();
  }

  private closed(): void {
    this.dead = true;
    this.socket.off('close', this.onClose);
    // The client left: requests not answered are aborted, then the response under way is over.
    const current = this.current;
    this.current = undefined;
    if (current) current.req.destroy(resetError());
    for (const { req } of this.waiting.splice(0)) req.destroy(resetError());
    if (this.incoming && this.incoming !== current?.req) this.incoming.destroy(resetError());
    current?.res.close();
    this.consumed?.detach();
    setImmediate(() => this.parser.close());
  }
}
