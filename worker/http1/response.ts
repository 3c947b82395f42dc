import { EventEmitter } from 'node:events';
import type { OutgoingHttpHeader, OutgoingHttpHeaders } from 'node:http';
import { REASON_PHRASES } from '../../shared/http-status.js';
import type { Socket } from 'node:net';
import { INVALID_VALUE } from './llhttp.js';
import { checkName, checkValue, httpError, trailerFields, utcDate } from './common.js';
import type { Http1Request } from './request.js';
import { writeBuffer } from './direct-write.js';

/** Hears what a response is given: its headers, the pieces of its body, and its last call. */
export interface ResponseObserver {
  /** writeHead's headers, as given (an object, or a flat [name, value, …] list). */
  headersGiven(headers: unknown): void;
  /** What write() was given. */
  sending(chunk: unknown): void;
  /** What end() was given (a chunk, or nothing). */
  ending(chunk: unknown): void;
}

/**
 * A response written by ./server.ts: the part of node:http's ServerResponse that the connection
 * manager, its filters and the router use, with the same framing rules (Content-Length from a
 * body given to end(), chunked otherwise, nothing after a HEAD, 204 or 304, `Connection` and
 * `Keep-Alive` as node:http wrote them, Date), but written with as few syscalls as it can: what is
 * written in one turn of the event loop (a proxied head, its body and its end, typically) goes
 * out in a single write of a single buffer.
 */

const CONNECTION_CLOSE = /(?:^|\W)close(?:$|\W)/i;
const CHUNKED = /(?:^|\W)chunked(?:$|\W)/i;
/** Below this, a turn's pieces are copied into one buffer and written once; above it, each is written as it is (one writev). */
const COALESCE_BYTES = 64 * 1024;

type Callback = (err?: Error | null) => void;

/** What a response needs of its connection. */
export interface ResponseConnection {
  /** The response has been written whole (its 'finish'): the connection reads the next request or closes. */
  finished(res: Http1Response): void;
  /** node:http's server.keepAliveTimeout, for the Keep-Alive header (0: none). */
  readonly keepAliveTimeoutMs: number;
}

export class Http1Response extends EventEmitter {
  statusCode = 200;
  statusMessage: string | undefined = undefined;
  /** Told what the response is given (the access log's record of the exchange). */
  observer: ResponseObserver | undefined = undefined;
  /** The connection stays open after this response (node:http's meaning; false sends `Connection: close`). */
  shouldKeepAlive: boolean;
  sendDate = true;
  /** end() was called. */
  finished = false;
  destroyed = false;
  /** The connection closes after this response. */
  last = false;
  /** Answered with an `HTTP/1.0` status line (an HTTP/1.0 request, with accept_http_10). */
  http10 = false;
  private head: string | undefined;
  private headWritten = false;
  private hasBody: boolean;
  private chunked = false;
  private readonly chunkedByDefault: boolean;
  private contentLength: number | undefined;
  private trailer = '';
  private defaultKeepAlive = true;
  private removedConnection = false;
  private removedContentLength = false;
  private removedTransferEncoding = false;
  /** Headers set one by one (setHeader), by lower-case name: [name as given, value]. */
  private outHeaders: Record<string, [string, OutgoingHttpHeader]> | undefined;
  /** What this turn has written and not yet handed to the socket, and the callbacks waiting on it. */
  private parts: (Buffer | string)[] = [];
  private partsBytes = 0;
  private callbacks: Callback[] = [];
  private flushScheduled = false;
  private flushedAll = false;
  private needDrain = false;
  private closed = false;

  constructor(
    readonly req: Http1Request,
    readonly socket: Socket,
    private readonly connection: ResponseConnection,
    keepAlive: boolean,
  ) {
    super();
    this.hasBody = req.method !== 'HEAD';
    this.shouldKeepAlive = keepAlive;
    if (req.httpVersionMajor < 1 || req.httpVersionMinor < 1) {
      const te = req.headers.te;
      this.chunkedByDefault = typeof te === 'string' && CHUNKED.test(te);
      this.shouldKeepAlive = false;
    } else this.chunkedByDefault = true;
  }

  get headersSent(): boolean {
    return this.head !== undefined;
  }

  get writableEnded(): boolean {
    return this.finished;
  }

  get writableFinished(): boolean {
    return this.finished && this.flushedAll && this.partsBytes === 0 && this.socket.writableLength === 0;
  }

  get writableLength(): number {
    return this.partsBytes + this.socket.writableLength;
  }

  setHeader(name: string, value: OutgoingHttpHeader): this {
    if (this.head !== undefined) throw httpError('ERR_HTTP_HEADERS_SENT', 'Cannot set headers after they are sent to the client');
    checkName(name);
    checkValue(name, value);
    (this.outHeaders ??= Object.create(null) as Record<string, [string, OutgoingHttpHeader]>)[name.toLowerCase()] = [name, value];
    return this;
  }

  getHeaderNames(): string[] {
    return this.outHeaders ? Object.keys(this.outHeaders) : [];
  }

  getHeaders(): OutgoingHttpHeaders {
    const out = Object.create(null) as OutgoingHttpHeaders;
    if (this.outHeaders) for (const k in this.outHeaders) out[k] = this.outHeaders[k]![1];
    return out;
  }

  removeHeader(name: string): void {
    if (this.head !== undefined) throw httpError('ERR_HTTP_HEADERS_SENT', 'Cannot remove headers after they are sent to the client');
    const key = name.toLowerCase();
    if (key === 'connection') this.removedConnection = true;
    else if (key === 'content-length') this.removedContentLength = true;
    else if (key === 'transfer-encoding') this.removedTransferEncoding = true;
    else if (key === 'date') this.sendDate = false;
    if (this.outHeaders) delete this.outHeaders[key];
  }

  /**
   * The status line and headers, kept until the first write or the end: a flat [name, value, …]
   * list (what the router gives), or an object; merged over setHeader()'s as node:http merges them.
   */
  writeHead(status: number, reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this {
    if (this.head !== undefined) throw httpError('ERR_HTTP_HEADERS_SENT', 'Cannot write headers after they are sent to the client');
    let given = headers;
    if (typeof reason === 'string') this.statusMessage = reason;
    else if (reason !== undefined) given = reason;
    if (given !== undefined && given !== null) this.observer?.headersGiven(given);
    status |= 0;
    if (status < 100 || status > 999) throw httpError('ERR_HTTP_INVALID_STATUS_CODE', `Invalid status code: ${status}`, RangeError);
    this.statusCode = status;
    this.statusMessage ??= REASON_PHRASES[status] ?? 'unknown';
    if (status === 204 || status === 304 || status < 200) this.hasBody = false;
    let line = `${this.http10 ? 'HTTP/1.0' : 'HTTP/1.1'} ${status} ${this.statusMessage}\r\n`;
    if (INVALID_VALUE.test(this.statusMessage)) throw httpError('ERR_INVALID_CHAR', 'Invalid character in statusMessage', TypeError);
    const state = { connection: false, contentLength: false, te: false, date: false, trailer: false };
    if (this.outHeaders && given !== undefined) {
      // Headers set one by one, then more given here: these win, duplicates within them kept.
      if (Array.isArray(given)) {
        if (given.length % 2 !== 0) throw httpError('ERR_INVALID_ARG_VALUE', 'The argument \'headers\' is invalid', TypeError);
        for (let i = 0; i < given.length; i += 2) delete this.outHeaders[String(given[i]).toLowerCase()];
        for (let i = 0; i < given.length; i += 2) {
          const k = String(given[i]);
          const key = k.toLowerCase();
          const prev = this.outHeaders[key];
          if (prev === undefined) this.setHeader(k, given[i + 1] as OutgoingHttpHeader);
          else prev[1] = ([] as (string | number)[]).concat(prev[1] as string, given[i + 1] as string) as string[];
        }
      } else for (const k in given) if (given[k] !== undefined) this.setHeader(k, given[k]!);
      given = undefined;
    }
    if (given === undefined) {
      if (this.outHeaders) for (const k in this.outHeaders) line = this.field(line, state, this.outHeaders[k]![0], this.outHeaders[k]![1], false);
    } else if (Array.isArray(given)) {
      if (given.length % 2 !== 0) throw httpError('ERR_INVALID_ARG_VALUE', 'The argument \'headers\' is invalid', TypeError);
      for (let i = 0; i < given.length; i += 2) line = this.field(line, state, String(given[i]), given[i + 1] as OutgoingHttpHeader, true);
    } else {
      for (const k in given) if (Object.hasOwn(given, k) && given[k] !== undefined) line = this.field(line, state, k, given[k]!, true);
    }
    if (this.sendDate && !state.date) line += `Date: ${utcDate()}\r\n`;
    if (this.chunked && (status === 204 || status === 304)) {
      this.chunked = false;
      this.shouldKeepAlive = false;
    }
    if (this.removedConnection) this.last = !this.shouldKeepAlive;
    else if (!state.connection) {
      if (this.shouldKeepAlive && (state.contentLength || this.chunkedByDefault)) {
        line += 'Connection: keep-alive\r\n';
        const keepAliveMs = this.connection.keepAliveTimeoutMs;
        if (keepAliveMs && this.defaultKeepAlive) line += `Keep-Alive: timeout=${Math.floor(keepAliveMs / 1000)}\r\n`;
      } else {
        this.last = true;
        line += 'Connection: close\r\n';
      }
    }
    if (!state.contentLength && !state.te) {
      if (!this.hasBody) this.chunked = false;
      else if (!this.chunkedByDefault) this.last = true;
      else if (!state.trailer && !this.removedContentLength && this.contentLength !== undefined) line += `Content-Length: ${this.contentLength}\r\n`;
      else if (!this.removedTransferEncoding) {
        line += 'Transfer-Encoding: chunked\r\n';
        this.chunked = true;
      } else this.last = true;
    }
    if (!this.chunked && state.trailer) throw httpError('ERR_HTTP_TRAILER_INVALID', 'Trailers are invalid with this transfer encoding');
    this.head = line + '\r\n';
    return this;
  }

  /** One header field onto the head, noting those that decide the framing and the connection's fate. */
  private field(line: string, state: { connection: boolean; contentLength: boolean; te: boolean; date: boolean; trailer: boolean }, name: string, value: OutgoingHttpHeader, validate: boolean): string {
    if (validate) checkName(name);
    if (Array.isArray(value)) {
      if (value.length < 2 || name.toLowerCase() !== 'cookie') {
        for (const v of value) line = this.field(line, state, name, v, validate);
        return line;
      }
      value = value.join('; ');
    }
    const text = String(value);
    if (validate) checkValue(name, value);
    line += `${name}: ${text}\r\n`;
    if (name.length < 4 || name.length > 17) return line;
    switch (name.toLowerCase()) {
      case 'connection':
        state.connection = true;
        this.removedConnection = false;
        if (CONNECTION_CLOSE.test(text)) this.last = true;
        else this.shouldKeepAlive = true;
        break;
      case 'transfer-encoding':
        state.te = true;
        this.removedTransferEncoding = false;
        if (CHUNKED.test(text)) this.chunked = true;
        break;
      case 'content-length':
        state.contentLength = true;
        this.contentLength = +text;
        this.removedContentLength = false;
        break;
      case 'date':
        state.date = true;
        break;
      case 'trailer':
        state.trailer = true;
        break;
      case 'keep-alive':
        this.defaultKeepAlive = false;
        break;
    }
    return line;
  }

  addTrailers(headers: OutgoingHttpHeaders | ReadonlyArray<[string, string]>): void {
    this.trailer = trailerFields(headers);
  }

  write(chunk: string | Uint8Array, encoding?: BufferEncoding | Callback, callback?: Callback): boolean {
    this.observer?.sending(chunk);
    if (typeof encoding === 'function') {
      callback = encoding;
      encoding = undefined;
    }
    return this.writeBody(chunk, encoding, callback, false);
  }

  private writeBody(chunk: string | Uint8Array, encoding: BufferEncoding | undefined, callback: Callback | undefined, fromEnd: boolean): boolean {
    if (chunk === null) throw httpError('ERR_STREAM_NULL_VALUES', 'May not write null values to stream', TypeError);
    if (this.finished || this.destroyed) {
      const err = this.finished ? httpError('ERR_STREAM_WRITE_AFTER_END', 'write after end') : httpError('ERR_STREAM_DESTROYED', 'Cannot call write after a stream was destroyed');
      process.nextTick(() => {
        callback?.(err);
        if (!this.destroyed) this.emit('error', err);
      });
      return false;
    }
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, encoding ?? 'utf8') : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.head === undefined) {
      if (fromEnd) this.contentLength = bytes.length;
      this.writeHead(this.statusCode);
    }
    if (!this.hasBody) {
      // A response to HEAD, a 204 or a 304 has no body: what is written is dropped (node:http's rule).
      if (callback) process.nextTick(callback);
      return true;
    }
    if (this.chunked && bytes.length > 0) {
      this.queue(`${bytes.length.toString(16)}\r\n`);
      this.queue(bytes);
      this.queue('\r\n');
    } else if (bytes.length > 0) this.queue(bytes);
    if (callback) this.callbacks.push(callback);
    if (fromEnd) return true;
    if (this.partsBytes >= COALESCE_BYTES) this.flush();
    else if (!this.flushScheduled) {
      this.flushScheduled = true;
      process.nextTick(() => this.flush());
    }
    const ok = this.writableLength < this.socket.writableHighWaterMark;
    if (!ok) this.needDrain = true;
    return ok;
  }

  end(chunk?: string | Uint8Array | Callback, encoding?: BufferEncoding | Callback, callback?: Callback): this {
    if (typeof chunk !== 'function') this.observer?.ending(chunk);
    if (typeof chunk === 'function') {
      callback = chunk;
      chunk = undefined;
    } else if (typeof encoding === 'function') {
      callback = encoding;
      encoding = undefined;
    }
    if (this.finished) {
      if (chunk) process.nextTick(() => (callback ?? (() => {}))(httpError('ERR_STREAM_WRITE_AFTER_END', 'write after end')));
      else if (callback) {
        if (!this.writableFinished) this.once('finish', callback);
        else callback(httpError('ERR_STREAM_ALREADY_FINISHED', 'Cannot call end after a stream was finished'));
      }
      return this;
    }
    if (chunk) this.writeBody(chunk, encoding as BufferEncoding | undefined, undefined, true);
    else if (this.head === undefined) {
      this.contentLength = 0;
      this.writeHead(this.statusCode);
    }
    if (callback) this.once('finish', callback);
    if (this.hasBody && this.chunked) this.queue(`0\r\n${this.trailer}\r\n`);
    this.finished = true;
    if (this.destroyed) return this;
    this.flush(() => this.wroteAll());
    return this;
  }

  /** Everything, the end included, is with the kernel: 'finish', 'close', then the connection goes on (the next request, or its end). */
  private wroteAll(): void {
    this.flushedAll = true;
    this.emit('finish');
    this.close();
    this.connection.finished(this);
  }

  /** The response is over, finished or cut short ('close', once). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.destroyed = true;
    this.emit('close');
  }

  /** The socket drained: a writer told to wait may write again. */
  drained(): void {
    if (this.needDrain && !this.finished) {
      this.needDrain = false;
      this.emit('drain');
    }
  }

  destroy(error?: Error): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.socket.destroy(error);
    return this;
  }

  /** The head goes out before the first piece of body (or at the end, with none). */
  private queueHead(): void {
    if (this.headWritten || this.head === undefined) return;
    this.headWritten = true;
    this.parts.push(this.head);
    this.partsBytes += this.head.length;
  }

  private queue(piece: Buffer | string): void {
    this.queueHead();
    this.parts.push(piece);
    this.partsBytes += piece.length;
  }

  /**
   * Hands what this turn wrote to the socket: the head and small bodies copied into one buffer and
   * written once (the response's last such write straight to the socket's handle: direct-write.ts);
   * large ones written piece by piece under one cork (one writev).
   */
  private flush(done?: Callback): void {
    this.flushScheduled = false;
    if (done) this.queueHead();
    const parts = this.parts;
    const callbacks = this.callbacks;
    const socket = this.socket;
    if (parts.length === 0 && callbacks.length === 0) {
      if (done) process.nextTick(done);
      return;
    }
    this.parts = [];
    this.callbacks = [];
    const bytes = this.partsBytes;
    this.partsBytes = 0;
    // A writer told to wait hears 'drain' once this write is with the kernel. The socket says so
    // itself only when it had to hold the write back: one the kernel takes at once leaves the
    // socket with nothing to drain, and it says nothing.
    const drainAfter = this.needDrain;
    const after =
      callbacks.length === 0 && !done && !drainAfter
        ? undefined
        : (err?: Error | null) => {
            for (const cb of callbacks) cb(err);
            if (err) return;
            done?.();
            if (drainAfter && socket.writableLength < socket.writableHighWaterMark) this.drained();
          };
    if (socket.destroyed || !socket.writable) {
      if (after) process.nextTick(after, httpError('ERR_STREAM_DESTROYED', 'Cannot call write after a stream was destroyed'));
      return;
    }
    if (parts.length === 1) {
      const only = parts[0]!;
      if (typeof only === 'string') socket.write(only, 'latin1', after);
      else if (done) writeBuffer(socket, only, after!);
      else socket.write(only, after);
      return;
    }
    if (bytes <= COALESCE_BYTES) {
      const buffer = Buffer.allocUnsafe(bytes);
      let at = 0;
      for (const part of parts) at += typeof part === 'string' ? buffer.write(part, at, 'latin1') : part.copy(buffer, at);
      if (done) writeBuffer(socket, buffer, after!);
      else socket.write(buffer, after);
      return;
    }
    socket.cork();
    for (let i = 0; i < parts.length - 1; i++) {
      const part = parts[i]!;
      if (typeof part === 'string') socket.write(part, 'latin1');
      else socket.write(part);
    }
    const last = parts[parts.length - 1]!;
    if (typeof last === 'string') socket.write(last, 'latin1', after);
    else socket.write(last, after);
    socket.uncork();
  }
}
