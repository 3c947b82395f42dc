import { httpModule } from '../builtins.js';

/**
 * Canonical proto3 JSON forms of the well-known types that Envoy's API uses, and the
 * conversions from their message form (as binary and text protos carry them).
 */

const MAX_DURATION_SECONDS = 315_576_000_000n;

export interface DurationParts {
  seconds: bigint;
  nanos: number;
}

/** `"1.5s"` → parts; undefined when the string is not a canonical Duration. */
export function parseDuration(text: string): DurationParts | undefined {
  const m = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/.exec(text);
  if (!m) return undefined;
  const seconds = BigInt(m[2]!);
  if (seconds > MAX_DURATION_SECONDS) return undefined;
  const nanos = m[3] ? Number(m[3].padEnd(9, '0')) : 0;
  return m[1] ? { seconds: -seconds, nanos: -nanos } : { seconds, nanos };
}

/** Envoy prints durations with 0, 3, 6 or 9 fractional digits: "600s", "0.250s". */
export function formatDuration(seconds: bigint | number, nanos: number): string {
  const s = BigInt(seconds);
  const negative = s < 0n || nanos < 0;
  const abs = negative ? -s : s;
  const n = Math.abs(nanos);
  let frac = '';
  if (n !== 0) {
    if (n % 1_000_000 === 0) frac = '.' + String(n / 1_000_000).padStart(3, '0');
    else if (n % 1000 === 0) frac = '.' + String(n / 1000).padStart(6, '0');
    else frac = '.' + String(n).padStart(9, '0');
  }
  return `${negative ? '-' : ''}${abs}${frac}s`;
}

/** Milliseconds of a canonical Duration string (as stored in a loaded configuration). */
export function durationMs(text: string): number {
  const parts = parseDuration(text);
  if (!parts) throw new Error(`not a canonical Duration: '${text}'`);
  return Number(parts.seconds) * 1000 + parts.nanos / 1e6;
}

export function durationNanos(parts: DurationParts): bigint {
  return parts.seconds * 1_000_000_000n + BigInt(parts.nanos);
}

/** RFC 3339 with a `Z` or numeric offset → normalized UTC form; undefined when invalid. */
export function normalizeTimestamp(text: string): string | undefined {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/.exec(text);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms)) return undefined;
  const base = new Date(ms).toISOString().slice(0, 19);
  const frac = m[2] ? m[2].replace(/0+$/, '') : '';
  return `${base}${frac === '.' ? '' : frac}Z`;
}

export function formatTimestamp(seconds: bigint | number, nanos: number): string {
  const base = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  if (!nanos) return `${base}Z`;
  return `${base}${formatDuration(0, nanos).slice(1, -1)}Z`;
}

/** FieldMask message paths (snake_case) → canonical JSON string (lowerCamelCase, comma-joined). */
export function formatFieldMask(paths: string[]): string {
  return paths.map((p) => p.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())).join(',');
}

export const WRAPPER_TYPES: Readonly<Record<string, string>> = {
  'google.protobuf.DoubleValue': 'double',
  'google.protobuf.FloatValue': 'float',
  'google.protobuf.Int64Value': 'int64',
  'google.protobuf.UInt64Value': 'uint64',
  'google.protobuf.Int32Value': 'int32',
  'google.protobuf.UInt32Value': 'uint32',
  'google.protobuf.BoolValue': 'bool',
  'google.protobuf.StringValue': 'string',
  'google.protobuf.BytesValue': 'bytes',
};

/**
 * Struct, Value and ListValue in message form → plain JSON. Decoders convert bottom-up, so the
 * children (`fields` values, `values` items, `struct_value`, `list_value`) are already JSON.
 */
export function structValueToJson(value: Record<string, unknown>): unknown {
  // protobufjs' bundled google.protobuf.Value names its fields in camelCase (stringValue).
  for (const kind of ['number', 'string', 'bool', 'struct', 'list']) {
    if (`${kind}Value` in value) return value[`${kind}Value`];
    if (`${kind}_value` in value) return value[`${kind}_value`];
  }
  return null; // null_value, or nothing set
}

/** The full message name of a type URL: everything after the last '/'. */
export function typeNameOfUrl(typeUrl: string): string {
  return typeUrl.slice(typeUrl.lastIndexOf('/') + 1);
}

export const TYPE_URL_PREFIX = 'type.googleapis.com/';

/**
 * envoy.type.v3.HttpStatus's code as a number. The enum's names are the IANA reason phrases
 * without spaces or punctuation (TooManyRequests, URITooLong), as Node's STATUS_CODES has them.
 */
export function httpStatusCode(code: unknown): number {
  if (typeof code === 'number') return code;
  const wanted = String(code).toLowerCase();
  for (const [n, phrase] of Object.entries(httpModule().STATUS_CODES)) if (phrase?.replace(/[^A-Za-z0-9]/g, '').toLowerCase() === wanted) return Number(n);
  return 0;
}
