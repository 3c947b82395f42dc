import type { IncomingHttpHeaders } from 'node:http';

/**
 * Requests the proxy makes itself to a cluster (an authorization or rate-limit service, a Lua
 * httpCall), as filters see them: what goes out, what comes back and how a call fails. The
 * worker's async client (worker/upstream/async-client.ts) and unary gRPC calls
 * (worker/upstream/grpc-unary.ts) carry them.
 */

export interface AsyncRequest {
  method: string;
  path: string;
  /** Flat [name, value, …] list; `host` becomes :authority on HTTP/2. */
  headers: string[];
  body: Buffer | null;
  timeoutMs: number;
  /** The most bytes of response body kept (the rest is an error). */
  maxBodyBytes?: number;
}

export interface AsyncResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export class AsyncRequestError extends Error {
  override name = 'AsyncRequestError';
  constructor(
    message: string,
    readonly reason: 'no_host' | 'timeout' | 'reset' | 'too_large',
  ) {
    super(message);
  }
}

export class GrpcCallError extends Error {
  override name = 'GrpcCallError';
  constructor(
    message: string,
    readonly timedOut: boolean,
  ) {
    super(message);
  }
}
