import type { IncomingHttpHeaders, OutgoingHttpHeader, OutgoingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';

/**
 * A downstream request and its response as the connection manager, its filters and the router
 * use them. Three kinds satisfy them: ../http1's own (HTTP/1.1 on the connection manager's server),
 * node:http2's compatibility request and response (HTTP/2), and node:http's IncomingMessage and
 * ServerResponse (an upgrade's answer written on its socket). What is here is all any of them may
 * be asked for.
 */

export interface DownstreamRequest extends Readable {
  readonly socket: Socket;
  headers: IncomingHttpHeaders;
  readonly rawHeaders: string[];
  readonly method?: string;
  readonly url?: string;
  readonly httpVersion: string;
  readonly httpVersionMajor: number;
  readonly httpVersionMinor: number;
  /** The whole request, body included, has been read. */
  readonly complete: boolean;
  /** The client went away before the request was read whole. */
  readonly aborted: boolean;
  setTimeout(ms: number, callback?: () => void): this;
}

type WriteCallback = (err?: Error | null) => void;

export interface DownstreamResponse extends NodeJS.EventEmitter {
  statusCode: number;
  /** HTTP/1: the connection stays open after this response (false sends `Connection: close`). */
  shouldKeepAlive: boolean;
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  readonly writableFinished: boolean;
  readonly writableLength: number;
  readonly destroyed: boolean;
  writeHead(status: number, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this;
  writeHead(status: number, reason: string, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this;
  setHeader(name: string, value: OutgoingHttpHeader): this;
  getHeaders(): OutgoingHttpHeaders;
  getHeaderNames(): string[];
  removeHeader(name: string): void;
  addTrailers(headers: OutgoingHttpHeaders | ReadonlyArray<[string, string]>): void;
  write(chunk: string | Uint8Array, callback?: WriteCallback): boolean;
  write(chunk: string | Uint8Array, encoding: BufferEncoding, callback?: WriteCallback): boolean;
  end(callback?: () => void): this;
  end(chunk: string | Uint8Array, callback?: () => void): this;
  end(chunk: string | Uint8Array, encoding: BufferEncoding, callback?: () => void): this;
  destroy(error?: Error): this;
}
