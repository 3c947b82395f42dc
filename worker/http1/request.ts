import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';

/** Hears a request's body: each piece the parser gives, and its end. */
export interface RequestObserver {
  received(chunk: Buffer): void;
  receivedAll(): void;
}

/**
 * A request read by ./server.ts: what the connection manager, its filters and the router read of
 * node:http's IncomingMessage, with the same meaning (headers folded as node:http folds them,
 * `complete`, `aborted` and the 'aborted' event, the body as a Readable that applies
 * back-pressure to the socket), without node:http's server around it.
 */

/**
 * node:http's own folding of repeated header fields (set-cookie as a list, cookie joined with `; `,
 * a repeated Host dropped, …), kept so that every reader sees what it saw before. Taken from the
 * module that defines IncomingMessage, which Node's parser (./llhttp.ts) loads anyway, rather than
 * from node:http, whose client and server a worker does not use.
 */
const { IncomingMessage: NodeIncomingMessage } = createRequire(import.meta.url)('_http_incoming') as { IncomingMessage: typeof IncomingMessage };
const addHeaderLine = (NodeIncomingMessage.prototype as unknown as { _addHeaderLine(field: string, value: string, dest: object): void })._addHeaderLine;
const FOLDING = { joinDuplicateHeaders: false };

/** What a request needs of its connection. */
export interface RequestConnection {
  /** The body's reader wants more: read the socket again (unless pipelined requests wait). */
  readMore(): void;
  /** The body's reader has too much: stop reading the socket. */
  readLess(): void;
  /** The socket's idle timeout (0: none), from now. */
  setStreamTimeout(ms: number): void;
}

export class Http1Request extends Readable {
  httpVersionMajor = 1;
  httpVersionMinor = 1;
  httpVersion = '1.1';
  method = 'GET';
  url = '/';
  rawHeaders: string[] = [];
  rawTrailers: string[] = [];
  trailers: IncomingHttpHeaders = {};
  /** The whole request, body included, has been read. */
  complete = false;
  /** The client went away before the request was read whole (node:http's meaning). */
  aborted = false;
  upgrade = false;
  /** The response has finished while the body was still coming: the rest is read and dropped. */
  dumped = false;
  private folded: IncomingHttpHeaders | undefined;
  /** Read whole before anything read it (a GET, typically): its end is pushed when something first reads. */
  private endPending = false;

  constructor(
    readonly socket: Socket,
    private readonly connection: RequestConnection,
  ) {
    super({ highWaterMark: socket.readableHighWaterMark });
  }

  /** The header fields by lower-case name, folded once when first read. */
  get headers(): IncomingHttpHeaders {
    if (this.folded === undefined) {
      const dest: IncomingHttpHeaders = {};
      const raw = this.rawHeaders;
      for (let i = 0; i < raw.length; i += 2) addHeaderLine.call(FOLDING, raw[i]!, raw[i + 1]!, dest);
      this.folded = dest;
    }
    return this.folded;
  }

  set headers(value: IncomingHttpHeaders) {
    this.folded = value;
  }

  /** Fold the trailers that ended a chunked body. */
  setTrailers(raw: string[]): void {
    this.rawTrailers = raw;
    const dest: IncomingHttpHeaders = {};
    for (let i = 0; i < raw.length; i += 2) addHeaderLine.call(FOLDING, raw[i]!, raw[i + 1]!, dest);
    this.trailers = dest;
  }

  /**
   * The parser read the request to its end. A body nobody has started reading, with nothing
   * buffered, ends when something first reads it: pushing the end now would cost every bodiless
   * request a tick of stream machinery that nothing waits for.
   */
  ended(): void {
    this.complete = true;
    this.observer?.receivedAll();
    if (this.readableFlowing === null && !this.readableDidRead && this.readableLength === 0) this.endPending = true;
    else this.push(null);
  }

  /** A piece of the body from the parser; false when the reader has enough for now. */
  body(chunk: Buffer): void {
    if (this.dumped) return;
    this.observer?.received(chunk);
    if (!this.push(chunk)) this.connection.readLess();
  }

  setTimeout(ms: number, callback?: () => void): this {
    if (callback) this.on('timeout', callback);
    this.connection.setStreamTimeout(ms);
    return this;
  }

  /**
   * What the connection calls when this request's stream has been idle `ms` (0: no timeout), while it
   * is read or answered: the connection manager's per-request handler, kept in a field rather
   * than as 'timeout' listeners on the request and its response (two listeners and their
   * bookkeeping for every request, measured at ~1% of CPU per request).
   */
  streamIdleHandler: (() => void) | undefined = undefined;

  /** Told of the body as it is read, and of its end (the access log's record of the exchange). */
  observer: RequestObserver | undefined = undefined;

  setStreamIdleTimeout(ms: number, callback: () => void): void {
    this.streamIdleHandler = callback;
    this.connection.setStreamTimeout(ms);
  }

  override _read(): void {
    if (this.endPending) {
      this.endPending = false;
      this.push(null);
      return;
    }
    this.connection.readMore();
  }

  /**
   * As node:http's request: destroyed before it was read whole (the client left, or the proxy
   * gave up on it), it is aborted, says so, and takes its connection down with it.
   */
  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.readableEnded || !this.complete) {
      this.aborted = true;
      this.emit('aborted');
    }
    if (this.aborted && !this.socket.destroyed) this.socket.destroy(err ?? undefined);
    // An error nobody listens for then is not thrown (node:http's rule, checked a tick later as node:http checks it).
    process.nextTick(() => callback(err && this.listenerCount('error') > 0 ? err : null));
  }
}
