import { createRequire } from 'node:module';

/**
 * Node's own HTTP/1.1 parser (llhttp, compiled into Node, the one node:http's server and client
 * use), reached through node:_http_common as node:http reaches it: a tested parser, strict about
 * what would allow request smuggling, at native speed (undici's copy runs as WebAssembly and
 * calls back into JavaScript for every header). Node 20's interface, which is not public:
 * callbacks are set on the parser object under the numeric keys below.
 */

export interface ParseError extends Error {
  code: string;
  reason?: string;
  bytesParsed?: number;
}

export interface NativeParser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenientFlags: number): void;
  /** Bytes parsed, or the error that stopped it. */
  execute(data: Buffer): number | ParseError;
  /** The end of input: completes a response read until close, or says what was cut short. */
  finish(): number | ParseError | undefined;
  close(): void;
  /** Reads a stream handle directly (in C++, no 'data' event): kOnExecute says what each read parsed. */
  consume(handle: object): void;
  unconsume(): void;
  /** The buffer being parsed when kOnExecute runs. */
  getCurrentBuffer(): Buffer;
  [callback: number]: ((...args: never[]) => unknown) | undefined;
}

interface NativeParserClass {
  new (): NativeParser;
  readonly REQUEST: number;
  readonly RESPONSE: number;
  readonly kOnMessageBegin: number;
  readonly kOnHeaders: number;
  readonly kOnHeadersComplete: number;
  readonly kOnBody: number;
  readonly kOnMessageComplete: number;
  readonly kOnExecute: number;
}

const common = createRequire(import.meta.url)('_http_common') as { HTTPParser: NativeParserClass; methods: string[] };

export const HTTPParser = common.HTTPParser;
/** Method names by the index a request's headers-complete callback gives. */
export const METHODS = common.methods;

/** Header names and method tokens (RFC 9110 §5.6.2). */
export const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A header value may hold tab, visible ASCII and obs-text; never CR, LF or NUL. */
export const INVALID_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
/** A request target is visible characters, no spaces or controls. */
export const INVALID_TARGET = /[^\u0021-\u00ff]/;

/** Lower-cased header names, as they were asked for: an upstream sends the same few on every response. */
const lowerNames = new Map<string, string>();
const LOWER_NAMES_KEPT = 512;

/**
 * A header name in lower case. A name the parser gives is a new string each time, and lower-casing
 * one with capitals (`Content-Type`, `Date`, `Connection`, `Keep-Alive`) makes another; these are
 * looked up instead. At most 512 names are kept, whoever sends them; past that, they are made.
 * (300-500 ns less for a typical response's five headers, measured in a loop.)
 */
export function lowerCaseName(name: string): string {
  let lower = lowerNames.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    if (lowerNames.size < LOWER_NAMES_KEPT) lowerNames.set(name, lower);
  }
  return lower;
}
