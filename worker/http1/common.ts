import type { OutgoingHttpHeader, OutgoingHttpHeaders } from 'node:http';
import { INVALID_VALUE, TOKEN } from './llhttp.js';

/**
 * What the HTTP/1.1 server (server.ts) and its responses (response.ts) share, as node:http's
 * _http_common and internal/http hold it: the checks of a header's name and value, the Date
 * header, and the errors a request or a response fails with.
 */

let dateSecond = -1;
let dateText = '';
/** The Date header's value, computed once a second. */
export function utcDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

export function httpError(code: string, message: string, Type: ErrorConstructor = Error): Error {
  return Object.assign(new Type(message), { code });
}

export function checkName(name: string): void {
  if (typeof name !== 'string' || !name || !TOKEN.test(name)) throw httpError('ERR_INVALID_HTTP_TOKEN', `Header name must be a valid HTTP token ["${name}"]`, TypeError);
}

export function checkValue(name: string, value: OutgoingHttpHeader | undefined): void {
  if (value === undefined) throw httpError('ERR_HTTP_INVALID_HEADER_VALUE', `Invalid value "${value}" for header "${name}"`, TypeError);
  if (Array.isArray(value)) {
    for (const v of value) if (INVALID_VALUE.test(String(v))) throw httpError('ERR_INVALID_CHAR', `Invalid character in header content ["${name}"]`, TypeError);
  } else if (INVALID_VALUE.test(String(value))) throw httpError('ERR_INVALID_CHAR', `Invalid character in header content ["${name}"]`, TypeError);
}

/** A chunked response's trailer fields (addTrailers), checked as node:http checks them, as the text that goes after the last chunk. */
export function trailerFields(headers: OutgoingHttpHeaders | ReadonlyArray<[string, string]>): string {
  let trailer = '';
  const pairs: [string, OutgoingHttpHeader | undefined][] = Array.isArray(headers) ? (headers as [string, string][]) : Object.entries(headers);
  for (const [name, value] of pairs) {
    checkName(name);
    if (value === undefined) continue;
    for (const v of Array.isArray(value) && value.length > 1 ? value : [Array.isArray(value) ? value.join('; ') : value]) {
      if (INVALID_VALUE.test(String(v))) throw httpError('ERR_INVALID_CHAR', `Invalid character in trailer content ["${name}"]`, TypeError);
      trailer += `${name}: ${String(v)}\r\n`;
    }
  }
  return trailer;
}

/** `headers`: the request's head was still incomplete at the headers timeout (request_headers_timeout, rather than request_timeout). */
export function timeoutError(headers: boolean): NodeJS.ErrnoException & { headers: boolean } {
  return Object.assign(new Error(headers ? 'Request header timeout' : 'Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT', headers });
}

const CHUNKED_ONLY = /^\s*chunked\s*$/i;

/** What a Transfer-Encoding other than a lone `chunked` is refused with (Envoy's 501, http1.invalid_transfer_encoding). */
export const UNSUPPORTED_TRANSFER_CODING = 'ERR_UNSUPPORTED_TRANSFER_CODING';

export function transferCodingError(): NodeJS.ErrnoException {
  return Object.assign(new Error('http/1.1 protocol error: unsupported transfer encoding'), { code: UNSUPPORTED_TRANSFER_CODING });
}

export function resetError(): NodeJS.ErrnoException {
  return Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
}

/** Envoy's codec serves a Transfer-Encoding of a lone `chunked` only (llhttp reads `gzip, chunked` as chunked and drops the coding), and none on a CONNECT. */
export function transferCodingSupported(raw: string[], method: string): boolean {
  let found: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length !== 17 || name.toLowerCase() !== 'transfer-encoding') continue;
    if (found !== undefined) return false; // two of them: `chunked, chunked` at best
    found = raw[i + 1]!;
  }
  return found === undefined || (CHUNKED_ONLY.test(found) && method !== 'CONNECT');
}
