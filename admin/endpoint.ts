import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { jsonChunks, type Replacer } from './render/json-chunks.js';

/**
 * One admin endpoint: its path, its help text, whether it mutates state (POST only), its query
 * parameters, and its handler. The table of endpoints generates /help and the home page, so
 * they can never drift from what is served.
 */

export interface AdminParam {
  name: string;
  help: string;
  /** For enum parameters, the allowed values. */
  choices?: string[];
}

export interface AdminRequest {
  method: string;
  path: string;
  /**
   * Query parameters; the first value of a repeated key, as Envoy uses. With no query string and
   * an `application/x-www-form-urlencoded` body, the form's fields (Envoy's rule), except for /stats.
   */
  query: Map<string, string>;
  /** Every parameter in order, repeats included (what /runtime_modify applies). */
  params: [string, string][];
  /** The request body (POST /tap's TapRequest). */
  body: string;
  raw: IncomingMessage;
}

export interface AdminResponse {
  status: number;
  /** A string or buffer, chunks written as they come with backpressure (large /stats output), or a stream piped (a heap dump file). */
  body: string | Buffer | Iterable<string> | Readable;
  contentType?: string;
  /** Headers beyond the ones every admin response has. */
  headers?: Record<string, string>;
  /** A raw stream until the connection closes, without chunked encoding (Envoy's event stream). */
  unchunked?: boolean;
  /** Runs after the response has been sent (e.g. /quitquitquit's shutdown). */
  after?: () => void;
}

export interface AdminEndpoint {
  path: string;
  help: string;
  mutates: boolean;
  params?: AdminParam[];
  handle(request: AdminRequest): AdminResponse | Promise<AdminResponse>;
}

export const TEXT = 'text/plain; charset=UTF-8';
export const JSON_TYPE = 'application/json';

/** Proto JSON as Envoy prints it: 1-space indentation and a trailing newline. */
export function protoJson(value: unknown): string {
  return JSON.stringify(value, null, 1) + '\n';
}

/** protoJson as chunks of about 64 KiB, written as the client takes them (large dumps). */
export function* protoJsonChunks(value: unknown, replacer?: Replacer): Generator<string> {
  yield* jsonChunks(value, replacer);
  yield '\n';
}
