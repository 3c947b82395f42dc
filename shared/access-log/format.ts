import { hostname } from 'node:os';
import { obj } from '../config/access.js';
import { readDataSource } from '../config/data-source.js';
import type { JsonObject } from '../config/proto-json.js';
import { entryRequestHeader, responseFlagsText, type AccessLogEntry } from './entry.js';
import { compileStrftime } from './strftime.js';
import { ConfigFault } from '../config/config-error.js';

/**
 * Envoy's substitution format strings (`%COMMAND(arg):max%` between literal text) and JSON
 * format dictionaries, compiled once into closures. A command this proxy does not implement is
 * a configuration error: Envoy's `Not supported field in StreamInfo: X` for names Envoy does not
 * know either, and a hint for the ones it knows but this proxy cannot fill.
 */

export const DEFAULT_FORMAT =
  '[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" ' +
  '%RESPONSE_CODE% %RESPONSE_FLAGS% %BYTES_RECEIVED% %BYTES_SENT% %DURATION% ' +
  '%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% ' +
  '"%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" ' +
  '"%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%"\n';

/** A metadata value that is neither a string nor a number: JSON in text, itself in typed JSON. */
class Structured {
  constructor(readonly value: unknown) {}
  toString(): string {
    return JSON.stringify(this.value);
  }
}

/** A command's value: numbers (and structured metadata) stay as they are in typed JSON; `undefined` is Envoy's "no value". */
type Value = string | number | Structured | undefined;
type Command = (e: AccessLogEntry) => Value;
type Piece = string | Command;
type JsonValue = unknown;

export interface LogFormatter {
  format(e: AccessLogEntry): string;
  /** The text, when the format has no operator: the same for every entry, which it does not read. */
  readonly constant?: string;
}

const withoutPort = (a: string | undefined) => (a === undefined ? undefined : a.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1'));
const justPort = (a: string | undefined) => (a === undefined ? undefined : /:(\d+)$/.exec(a)?.[1]);

const STREAM_INFO: Record<string, Command> = {
  REQUEST_DURATION: (e) => e.requestDurationMs,
  RESPONSE_DURATION: (e) => e.responseDurationMs,
  RESPONSE_TX_DURATION: (e) => (e.durationMs !== undefined && e.responseDurationMs !== undefined ? e.durationMs - e.responseDurationMs : undefined),
  DURATION: (e) => e.durationMs,
  BYTES_RECEIVED: (e) => e.bytesReceived,
  BYTES_SENT: (e) => e.bytesSent,
  PROTOCOL: (e) => e.protocol,
  RESPONSE_CODE: (e) => e.responseCode,
  RESPONSE_CODE_DETAILS: (e) => e.responseCodeDetails,
  RESPONSE_FLAGS: (e) => responseFlagsText(e.responseFlags),
  UPSTREAM_HOST: (e) => e.upstreamHost,
  UPSTREAM_CLUSTER: (e) => e.upstreamCluster,
  UPSTREAM_REQUEST_ATTEMPT_COUNT: (e) => e.attemptCount ?? 0,
  DOWNSTREAM_REMOTE_ADDRESS: (e) => e.downstreamRemoteAddress,
  DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT: (e) => withoutPort(e.downstreamRemoteAddress),
  DOWNSTREAM_REMOTE_PORT: (e) => justPort(e.downstreamRemoteAddress),
  // The peer itself, whatever address the connection manager found for the client.
  DOWNSTREAM_DIRECT_REMOTE_ADDRESS: (e) => e.downstreamDirectRemoteAddress ?? e.downstreamRemoteAddress,
  DOWNSTREAM_DIRECT_REMOTE_ADDRESS_WITHOUT_PORT: (e) => withoutPort(e.downstreamDirectRemoteAddress ?? e.downstreamRemoteAddress),
  DOWNSTREAM_LOCAL_ADDRESS: (e) => e.downstreamLocalAddress,
  DOWNSTREAM_LOCAL_ADDRESS_WITHOUT_PORT: (e) => withoutPort(e.downstreamLocalAddress),
  DOWNSTREAM_LOCAL_PORT: (e) => justPort(e.downstreamLocalAddress),
  ROUTE_NAME: (e) => e.routeName || undefined,
  FILTER_CHAIN_NAME: (e) => e.filterChainName || undefined,
  LOCAL_REPLY_BODY: (e) => e.localReplyBody ?? '',
  REQUESTED_SERVER_NAME: (e) => e.requestedServerName || undefined,
  // Envoy prints it with its spaces as underscores.
  UPSTREAM_TRANSPORT_FAILURE_REASON: (e) => (e.upstreamTransportFailureReason ? e.upstreamTransportFailureReason.replace(/ /g, '_') : undefined),
};

/** Commands Envoy has that this proxy cannot fill, with why, so the error says more than "unknown". */
const NOT_IMPLEMENTED: Record<string, string> = {
  TRAILER: 'response trailers are not forwarded by this proxy',
  CONNECTION_ID: 'connection ids are not tracked by this proxy',
  UPSTREAM_LOCAL_ADDRESS: 'the upstream connection pool does not expose its local addresses',
  CLUSTER_METADATA: 'cluster metadata is not available to access logs in this proxy',
  FILTER_STATE: 'no filter of this proxy sets filter state',
  CONNECTION_TERMINATION_DETAILS: 'connection termination details are not recorded by this proxy',
  GRPC_STATUS: 'gRPC status is not decoded by this proxy',
  REQUEST_HEADERS_BYTES: 'header byte sizes are not measured by this proxy',
  RESPONSE_HEADERS_BYTES: 'header byte sizes are not measured by this proxy',
  RESPONSE_TRAILERS_BYTES: 'header byte sizes are not measured by this proxy',
  REQUEST_TX_DURATION: 'the time the last request byte went upstream is not recorded by this proxy',
};

/** A value of a metadata namespace by key path, as Envoy prints it: strings and numbers as they are, anything else as JSON. */
function metadataValue(struct: Record<string, unknown> | undefined, path: string[]): Value {
  let v: unknown = struct;
  for (const key of path) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string' || typeof v === 'number') return v;
  return new Structured(v);
}

let isoSecond = Number.NaN;
let isoPrefix = '';

/**
 * `new Date(ms).toISOString()` (START_TIME's default form, as Envoy prints it: UTC, milliseconds),
 * with the part down to the second made once a second: toISOString took ~1.5 µs, which was the
 * largest single cost of Envoy's default access-log format.
 */
export function isoTime(ms: number): string {
  const whole = Math.floor(ms);
  const second = Math.floor(whole / 1000);
  if (second !== isoSecond) {
    isoSecond = second;
    isoPrefix = new Date(second * 1000).toISOString().slice(0, -4); // up to and with the '.'
  }
  const milli = whole - second * 1000;
  return `${isoPrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}

function headerCommand(token: string, paramStart: number, side: 'request' | 'response'): Command {
  const close = token.indexOf(')');
  const inner = token.slice(paramStart, close);
  if (/[\n\r\0]/.test(inner)) throw new ConfigFault('invalid', 'Invalid header configuration. Format string contains newline.');
  const names = inner.split('?');
  if (names.length > 2) throw new ConfigFault('invalid', `More than 1 alternative header specified in token: ${token}`);
  const main = names[0]!.toLowerCase();
  const alt = names[1]?.toLowerCase();
  const get = side === 'request' ? entryRequestHeader : (e: AccessLogEntry, n: string) => e.responseHeader(n);
  return alt ? (e) => get(e, main) ?? get(e, alt) : (e) => get(e, main);
}

function parseCommand(token: string): Command {
  const paren = token.indexOf('(');
  const name = paren < 0 ? token : token.slice(0, paren);
  if (paren >= 0 && !token.endsWith(')')) throw new ConfigFault('invalid', `Incorrect position of ')' in token: ${token}`);
  if (name === 'REQ' && paren >= 0) return headerCommand(token, 4, 'request');
  if (name === 'RESP' && paren >= 0) return headerCommand(token, 5, 'response');
  if (name === 'START_TIME') {
    if (paren < 0 || token === 'START_TIME()') return (e) => isoTime(e.startTime);
    const fmt = compileStrftime(token.slice(paren + 1, -1));
    return (e) => fmt(e.startTime);
  }
  if (name === 'DYNAMIC_METADATA' && paren >= 0) {
    const [namespace, ...path] = token.slice(paren + 1, -1).split(':');
    if (!namespace) throw new ConfigFault('missing', `${token}: DYNAMIC_METADATA needs a namespace`);
    return (e) => metadataValue(e.dynamicMetadata?.[namespace], path);
  }
  if (name === 'HOSTNAME' && paren < 0) {
    const h = hostname();
    return () => h;
  }
  if (paren < 0 && STREAM_INFO[name]) return STREAM_INFO[name]!;
  const why = NOT_IMPLEMENTED[name];
  if (why) throw new ConfigFault('unsupported', `%${name}% is not supported: ${why}`);
  throw new ConfigFault('unsupported', `Not supported field in StreamInfo: ${token}`);
}

const COMMAND = /^%([A-Z0-9_]+(?:\([^)]*\))?)(?::(\d+))?%/;

/** Splits a format string into literal text and commands. */
function parsePieces(format: string): Piece[] {
  const pieces: Piece[] = [];
  let literal = '';
  for (let pos = 0; pos < format.length; pos++) {
    if (format[pos] !== '%') {
      literal += format[pos];
      continue;
    }
    if (literal) pieces.push(literal);
    literal = '';
    const m = COMMAND.exec(format.slice(pos));
    if (!m) throw new ConfigFault('invalid', `Incorrect configuration: ${format}. Couldn't find valid command at position ${pos}`);
    const command = parseCommand(m[1]!);
    if (m[2] !== undefined) {
      const max = Number(m[2]);
      pieces.push((e) => {
        const v = command(e);
        return typeof v === 'string' ? v.slice(0, max) : v;
      });
    } else {
      pieces.push(command);
    }
    pos += m[0].length - 1;
  }
  if (literal || pieces.length === 0) pieces.push(literal);
  return pieces;
}

/** A format with no operator: `text` for every entry. */
export function constantFormat(text: string): LogFormatter {
  return { format: () => text, constant: text };
}

export function compileTextFormat(format: string, omitEmptyValues = false): LogFormatter {
  const pieces = parsePieces(format);
  if (pieces.every((p) => typeof p === 'string')) return constantFormat(pieces.join(''));
  return { format: unrolled(pieces, omitEmptyValues ? '' : '-') };
}

/**
 * The format as one function that calls each command from a call site of its own: a loop over
 * the pieces called every command from one site, which V8 then treats as megamorphic (a generic
 * call, no inlining). Built with `new Function` from the pieces' positions only: the literal
 * text and the commands are passed in as values, never written into the code.
 */
function unrolled(pieces: Piece[], empty: string): (e: AccessLogEntry) => string {
  const literals: string[] = [];
  const commands: Command[] = [];
  const lines: string[] = [];
  for (const p of pieces) {
    if (typeof p === 'string') {
      lines.push(`out += t${literals.length};`);
      literals.push(p);
    } else {
      lines.push(`v = c${commands.length}(e); out += v === undefined ? empty : v;`);
      commands.push(p);
    }
  }
  const params = [...literals.map((_, i) => `t${i}`), ...commands.map((_, i) => `c${i}`), 'empty'];
  const body = `return function format(e) { let out = ''; let v; ${lines.join(' ')} return out; };`;
  return new Function(...params, body)(...literals, ...commands, empty) as (e: AccessLogEntry) => string;
}

interface JsonOptions {
  /** Numbers stay numbers (typed_json_format, log_format.json_format); else every value is a string. */
  typed: boolean;
  omitEmptyValues: boolean;
  sortProperties: boolean;
}

type JsonTemplate = (e: AccessLogEntry) => JsonValue | undefined;

function compileJsonValue(value: JsonValue, path: string, o: JsonOptions): JsonTemplate {
  if (typeof value === 'string') {
    const pieces = parsePieces(value);
    if (pieces.length === 1 && typeof pieces[0] === 'function') {
      const command = pieces[0];
      return (e) => {
        const v = command(e);
        if (v === undefined) return o.omitEmptyValues ? undefined : o.typed ? null : '-';
        if (v instanceof Structured) return o.typed ? v.value : String(v);
        return o.typed ? v : String(v);
      };
    }
    // Several pieces always make a string; a missing part prints as in text formats.
    const text = compileTextFormat(value, o.omitEmptyValues);
    return (e) => text.format(e);
  }
  if (Array.isArray(value)) {
    const items = value.map((v, i) => compileJsonValue(v, `${path}[${i}]`, o));
    return (e) => items.map((t) => t(e)).filter((v) => v !== undefined && !(o.omitEmptyValues && v === null));
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    if (o.sortProperties) keys.sort();
    const fields = keys.map((k) => [k, compileJsonValue((value as JsonObject)[k], `${path}.${k}`, o)] as const);
    return (e) => {
      const out: JsonObject = {};
      for (const [k, t] of fields) {
        const v = t(e);
        if (v === undefined || (o.omitEmptyValues && v === null)) continue;
        out[k] = v;
      }
      return out;
    };
  }
  throw new ConfigFault('invalid_value', `${path}: Only string values, nested structs and list values are supported in structured access log format.`);
}

export function compileJsonFormat(struct: JsonObject, o: JsonOptions): LogFormatter {
  const template = compileJsonValue(struct, 'json_format', o);
  return { format: (e) => `${JSON.stringify(template(e))}\n` };
}

/** A core.v3.SubstitutionFormatString. */
export function compileSubstitutionFormat(sfs: JsonObject): LogFormatter {
  const omitEmptyValues = sfs.omit_empty_values === true;
  if (sfs.json_format !== undefined) {
    return compileJsonFormat(obj(sfs.json_format), { typed: true, omitEmptyValues, sortProperties: obj(sfs.json_format_options).sort_properties === true });
  }
  if (typeof sfs.text_format === 'string') return compileTextFormat(sfs.text_format, omitEmptyValues);
  const source = readDataSource(obj(sfs.text_format_source));
  return compileTextFormat(source?.toString() ?? '', omitEmptyValues);
}

/** The format of a FileAccessLog / StdoutAccessLog / StderrAccessLog: the default when none is given. */
export function compileAccessLogFormat(config: JsonObject): LogFormatter {
  if (typeof config.format === 'string') return compileTextFormat(config.format === '' ? DEFAULT_FORMAT : config.format);
  if (config.json_format !== undefined) return compileJsonFormat(obj(config.json_format), { typed: false, omitEmptyValues: false, sortProperties: false });
  if (config.typed_json_format !== undefined) return compileJsonFormat(obj(config.typed_json_format), { typed: true, omitEmptyValues: false, sortProperties: false });
  if (config.log_format !== undefined) return compileSubstitutionFormat(obj(config.log_format));
  return compileTextFormat(DEFAULT_FORMAT);
}
