import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';

/**
 * How a request travels to an upstream, whatever carries it (an HTTP/1.1 connection of
 * http1-connection.ts, an HTTP/2 stream of h2.ts): the request, the callbacks that follow its
 * response, and the control the caller has over it meanwhile.
 */

export interface UpstreamRequest {
  method: string;
  path: string;
  /** Flat [name, value, …] list, names in lower case; `host` is the authority. */
  headers: string[];
  body: Buffer | Readable | null;
}

/** What the caller may do with a request under way. */
export interface UpstreamController {
  /** Ends the request here: its connection (HTTP/1.1) or stream (HTTP/2) is reset, and onResponseError follows with `reason`. */
  abort(reason: Error): void;
  /** Stops reading the response (flow control), until resume(). */
  pause(): void;
  resume(): void;
  /** The request's bytes written here and not yet taken by the upstream (its connection's, or its stream's), for buffer accounts. */
  bufferedBytes(): number;
  /** An HTTP/2 response that was headers only (gRPC's trailers-only answer). */
  readonly headersOnly?: boolean;
}

/** Told of the request's progress, in this order: start, response start, data…, then end or error (error may come at any point). */
export interface UpstreamHandler {
  /** The request has its connection and is about to be written. */
  onRequestStart?(controller: UpstreamController): void;
  onResponseStart?(controller: UpstreamController, statusCode: number, headers: IncomingHttpHeaders, statusMessage?: string): void;
  onResponseData?(controller: UpstreamController, chunk: Buffer): void;
  onResponseEnd?(controller: UpstreamController, trailers: IncomingHttpHeaders): void;
  /**
   * The last piece of the body and the end together, when one read brought both (HTTP/1.1): the
   * caller can hand both to its client at once (one write, no turn of the loop between). A handler
   * without it is given onResponseData, then onResponseEnd.
   */
  onResponseLastData?(controller: UpstreamController, chunk: Buffer, trailers: IncomingHttpHeaders): void;
  onResponseError?(controller: UpstreamController, err: Error): void;
}

/** The code of the error a connection attempt fails with when the cluster's connect_timeout passes. */
export const CONNECT_TIMEOUT = 'ERR_UPSTREAM_CONNECT_TIMEOUT';

/** The error for a connection attempt that connect_timeout cut short. */
export function connectTimeoutError(address: string): Error & { code: string } {
  return Object.assign(new Error(`connect to ${address} timed out`), { code: CONNECT_TIMEOUT });
}
