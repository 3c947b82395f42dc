import protobuf from 'protobufjs';
import type { JsonObject } from '../shared/config/proto-json.js';
import { parseDuration } from '../shared/config/wkt.js';

/**
 * A message in protobuf's text format, as C++'s TextFormat prints it (Envoy's tool names an
 * untested route by its match so): fields by number, `name: value` lines, messages as
 * `name {` … `}` indented by two, every line ending in a newline. Read from the canonical JSON
 * form, so well-known wrappers (bare values there) and durations are messages again.
 */

const WRAPPERS = new Set(['BoolValue', 'StringValue', 'BytesValue', 'Int32Value', 'UInt32Value', 'Int64Value', 'UInt64Value', 'FloatValue', 'DoubleValue'].map((n) => `.google.protobuf.${n}`));

export function textFormat(type: protobuf.Type, message: JsonObject, indent = ''): string {
  let out = '';
  for (const field of [...type.fieldsArray].sort((a, b) => a.id - b.id)) {
    const value = message[field.name];
    if (value === undefined || value === null) continue;
    for (const v of field.repeated && Array.isArray(value) ? value : [value]) out += fieldText(field, v, indent);
  }
  return out;
}

function fieldText(field: protobuf.Field, value: unknown, indent: string): string {
  const t = field.resolvedType;
  if (t instanceof protobuf.Type) {
    const name = t.fullName;
    let inner: string;
    if (WRAPPERS.has(name)) inner = `${indent}  value: ${scalar(value, /String|Bytes/.test(name))}\n`;
    else if (name === '.google.protobuf.Duration' && typeof value === 'string') {
      const d = parseDuration(value);
      inner = d ? `${d.seconds ? `${indent}  seconds: ${d.seconds}\n` : ''}${d.nanos ? `${indent}  nanos: ${d.nanos}\n` : ''}` : '';
    } else inner = textFormat(t, value as JsonObject, `${indent}  `);
    return `${indent}${field.name} {\n${inner}${indent}}\n`;
  }
  return `${indent}${field.name}: ${t instanceof protobuf.Enum ? String(value) : scalar(value, field.type === 'string' || field.type === 'bytes')}\n`;
}

/** A string or bytes field quoted (JSON's escapes are C's for what a match holds); numbers and bools bare. */
function scalar(value: unknown, quoted: boolean): string {
  return quoted ? JSON.stringify(String(value)) : String(value);
}
