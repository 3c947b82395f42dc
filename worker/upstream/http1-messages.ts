import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import type { UpstreamController, UpstreamHandler, UpstreamRequest } from './upstream-handler.js';
import { INVALID_TARGET, INVALID_VALUE, lowerCaseName, TOKEN, type ParseError } from '../http1/llhttp.js';

/**
 * What an HTTP/1.1 upstream connection (http1-connection.ts) reads and writes beside a request's
 * head: the errors it fails a request with, a response head as node:http's header object, the
 * server's keep-alive hint, and a request body that streams.
 */

export function closedError(message: string): Error {
  return Object.assign(new Error(message), { code: 'ECONNRESET' });
}

export function protocolError(err: ParseError | Error, message: string): Error {
  return Object.assign(new Error(`${message}: ${(err as ParseError).reason ?? err.message}`), { name: 'HTTPParserError', code: (err as ParseError).code ?? 'HPE_INVALID' });
}

/** A flat [name, value, …] list as an object of lower-case names, repeated names as arrays (node:http's shape, set-cookie included). */
export function headersObject(flat: string[]): IncomingHttpHeaders {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i < flat.length; i += 2) {
    const k = lowerCaseName(flat[i]!);
    const v = flat[i + 1]!;
    const prev = out[k];
    if (prev === undefined) out[k] = v;
    else if (typeof prev === 'string') out[k] = [prev, v];
    else prev.push(v);
  }
  return out as IncomingHttpHeaders;
}

const KEEP_ALIVE_TIMEOUT = /(?:^|[,;\s])timeout\s*=\s*(\d+)/i;
/** The last hint read, and what it meant: a server sends the same one on every response. */
let lastHint = '';
let lastHintMs: number | undefined;

/** `Keep-Alive: timeout=N`, in milliseconds, or undefined. */
export function keepAliveHintMs(value: string): number | undefined {
  if (value !== lastHint) {
    const m = KEEP_ALIVE_TIMEOUT.exec(value);
    lastHint = value;
    lastHintMs = m ? Number(m[1]) * 1000 : undefined;
  }
  return lastHintMs;
}

/** A request whose body streams: written whole once `sent`, and `stopBody` stops writing it. */
export interface StreamingRequest {
  sent: boolean;
  stopBody: (() => void) | undefined;
}

/**
 * A request body that streams: chunked when its length is unknown, else as many bytes as its
 * content-length says (more or fewer is an error, and the connection cannot be trusted after
 * it). The body stream is paused while the socket holds more than it takes.
 */
export function streamRequestBody(socket: Socket, rq: StreamingRequest, body: Readable, expected: number | undefined, abort: (err: Error) => void): void {
  let written = 0;
  const onDrain = () => body.resume();
  const stop = () => {
    body.off('data', onData);
    body.off('end', onEnd);
    body.off('error', onError);
    body.off('close', onClose);
    socket.off('drain', onDrain);
    rq.stopBody = undefined;
  };
  const fail = (err: Error) => {
    stop();
    abort(err);
  };
  const onData = (chunk: Buffer | string) => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (bytes.length === 0) return;
    written += bytes.length;
    if (expected !== undefined && written > expected) {
      fail(closedError('the request body is longer than its content-length'));
      return;
    }
    let ok: boolean;
    if (expected === undefined) {
      socket.cork();
      socket.write(`${bytes.length.toString(16)}\r\n`, 'latin1');
      socket.write(bytes);
      ok = socket.write('\r\n', 'latin1');
      socket.uncork();
    } else ok = socket.write(bytes);
    if (!ok) {
      body.pause();
      socket.once('drain', onDrain);
    }
  };
  const onEnd = () => {
    stop();
    if (expected !== undefined && written !== expected) {
      abort(closedError('the request body is shorter than its content-length'));
      return;
    }
    if (expected === undefined) socket.write('0\r\n\r\n', 'latin1');
    rq.sent = true;
  };
  const onError = (err: Error) => fail(err);
  // The client's side closed before its body ended (it went away).
  const onClose = () => fail(closedError('the request body was cut short'));
  rq.stopBody = stop;
  body.on('data', onData);
  body.once('end', onEnd);
  body.once('error', onError);
  body.once('close', onClose);
  if (body.readableEnded) onEnd();
  else body.resume();
}

/**
 * A request's head up to its framing: the request line and its headers, checked as Node's client
 * checks them (method, target, names and values), without the framing and connection headers
 * (this side decides those); the content-length it gave, or why it cannot be sent.
 */
export function requestHead(method: string, path: string, headers: readonly string[], body: Buffer | Readable | null): { head: string; length: string | undefined } | { invalid: string } {
  let head = `${method} ${path} HTTP/1.1\r\n`;
  let length: string | undefined;
  let invalid: string | undefined;
  if (!TOKEN.test(method)) invalid = `invalid method '${method}'`;
  else if (INVALID_TARGET.test(path)) invalid = 'invalid request target';
  for (let i = 0; i < headers.length && invalid === undefined; i += 2) {
    const k = headers[i]!;
    const v = headers[i + 1]!;
    if (!TOKEN.test(k)) {
      invalid = `invalid header name '${k}'`;
      continue;
    }
    if (INVALID_VALUE.test(v)) {
      invalid = `invalid value of header '${k}'`;
      continue;
    }
    // Only names of these lengths can be framing or connection headers: the others are not lower-cased.
    const framing = k.length === 10 || k.length === 14 || k.length === 17 ? k.toLowerCase() : '';
    if (framing === 'content-length') length = v;
    // The framing and the connection's fate are this side's: whatever else said so is not forwarded.
    else if (framing !== 'connection' && framing !== 'keep-alive' && framing !== 'transfer-encoding') head += `${k}: ${v}\r\n`;
  }
  if (invalid === undefined && Buffer.isBuffer(body) && length !== undefined && Number(length) !== body.length) invalid = 'the body is not as long as its content-length';
  if (invalid !== undefined) return { invalid };
  return { head, length };
}

/** One request on its connection; it is the controller its handler gets. */
export class InFlight implements UpstreamController {
  /** The response is over (ended, failed or aborted): no further callback. */
  done = false;
  /** The whole request (head and body) has been written. */
  sent = false;
  /** A 1xx response is being read: its end is not the response's. */
  informational = false;
  /** A body stream being written, and how to stop writing it. */
  stopBody: (() => void) | undefined;

  constructor(
    private readonly connection: { abort(rq: InFlight, reason: Error): void; readonly socket: Socket },
    readonly request: UpstreamRequest,
    readonly handler: UpstreamHandler,
    /** The connection's last request: sent with `connection: close`. */
    readonly last: boolean,
  ) {}

  abort(reason: Error): void {
    this.connection.abort(this, reason);
  }

  pause(): void {
    this.connection.socket.pause();
  }

  resume(): void {
    this.connection.socket.resume();
  }

  bufferedBytes(): number {
    return this.connection.socket.writableLength;
  }
}
