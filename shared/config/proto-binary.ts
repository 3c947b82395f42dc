import { isUtf8 } from 'node:buffer';
import protobuf from 'protobufjs';
import { MAX_DEPTH } from './limits.js';
import { childPath, fullName, lookupTypeOrNull, mapKeyType, type JsonObject, type UnknownFieldUse } from './proto-json.js';
import { WRAPPER_TYPES, formatDuration, formatFieldMask, formatTimestamp, structValueToJson, typeNameOfUrl } from './wkt.js';
import { configError, type ConfigError } from './config-error.js';

/**
 * Binary proto3 → canonical proto3 JSON, by reflection over the schema. protobufjs' generated
 * decoders skip unknown field numbers without a word; Envoy rejects them, so this decoder
 * reports each one with its field path. The JSON it returns then goes through the same
 * ProtoJsonReader as YAML and JSON bootstraps, so every format is validated by one code path.
 */

export interface DecodeResult {
  json: JsonObject;
  unknownFields: UnknownFieldUse[];
  errors: ConfigError[];
}

const WIRE = { VARINT: 0, I64: 1, LEN: 2, I32: 5 } as const;
const PACKABLE = new Set(['double', 'float', 'int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'fixed32', 'fixed64', 'sfixed32', 'sfixed64', 'bool']);

function longToJson(v: unknown): number | string {
  if (typeof v === 'number') return v;
  const s = (v as { toString(): string }).toString();
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : s;
}

export class BinaryDecoder {
  readonly unknownFields: UnknownFieldUse[] = [];
  readonly errors: ConfigError[] = [];

  /** `depth`: messages already open around this decoder's (an Any's payload continues its container's count). */
  constructor(
    private readonly root: protobuf.Root,
    public depth = 0,
  ) {}

  decode(type: protobuf.Type, bytes: Uint8Array, path = ''): DecodeResult {
    const json = this.decodeMessage(type, bytes, path) as JsonObject;
    return { json, unknownFields: this.unknownFields, errors: this.errors };
  }

  private readScalar(reader: protobuf.Reader, kind: string): unknown {
    switch (kind) {
      case 'double': return reader.double();
      case 'float': return reader.float();
      case 'int32': return reader.int32();
      case 'uint32': return reader.uint32();
      case 'sint32': return reader.sint32();
      case 'fixed32': return reader.fixed32();
      case 'sfixed32': return reader.sfixed32();
      case 'int64': return longToJson(reader.int64());
      case 'uint64': return longToJson(reader.uint64());
      case 'sint64': return longToJson(reader.sint64());
      case 'fixed64': return longToJson(reader.fixed64());
      case 'sfixed64': return longToJson(reader.sfixed64());
      case 'bool': return reader.bool();
      case 'string': {
        // protobuf (and Envoy) refuse a string that is not UTF-8; Node's decoder would swap in U+FFFD.
        const bytes = reader.bytes();
        if (!isUtf8(bytes)) throw new Error('a string field holds invalid UTF-8');
        return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
      }
      case 'bytes': return Buffer.from(reader.bytes()).toString('base64');
      default: throw new Error(`unsupported scalar type ${kind}`);
    }
  }

  private readValue(field: protobuf.Field, kind: string, resolved: protobuf.ReflectionObject | null, reader: protobuf.Reader, path: string): unknown {
    if (resolved instanceof protobuf.Type) return this.decodeMessage(resolved, reader.bytes(), path);
    if (resolved instanceof protobuf.Enum) {
      const n = reader.int32();
      return resolved.valuesById[n] ?? n;
    }
    return this.readScalar(reader, kind);
  }

  /** Decodes one message into message form, then turns well-known types into their JSON form. */
  decodeMessage(type: protobuf.Type, bytes: Uint8Array, path: string): unknown {
    // Protocol Buffers' own recursion limit (limits.ts): deeper input would only overflow the stack.
    if (this.depth >= MAX_DEPTH) {
      this.errors.push(configError('too_large', path.length > 120 ? `${path.slice(0, 120)}…` : path, `refused: nested deeper than ${MAX_DEPTH} levels`));
      return {};
    }
    this.depth++;
    try {
      return this.decodeFields(type, bytes, path);
    } finally {
      this.depth--;
    }
  }

  private decodeFields(type: protobuf.Type, bytes: Uint8Array, path: string): unknown {
    const reader = protobuf.Reader.create(bytes);
    const form: JsonObject = {};
    while (reader.pos < reader.len) {
      const tag = reader.uint32();
      const id = tag >>> 3;
      const wireType = tag & 7;
      const field = type.fieldsById[id];
      if (!field) {
        this.unknownFields.push({ path: childPath(path, `#${id}`), typeName: fullName(type), field: `field number ${id}` });
        reader.skipType(wireType);
        continue;
      }
      const fieldPath = childPath(path, field.name);
      try {
        if (field.map) {
          const keyType = mapKeyType(field);
          const entry = protobuf.Reader.create(reader.bytes());
          let key: unknown = keyType === 'string' ? '' : 0;
          let value: unknown;
          while (entry.pos < entry.len) {
            const t = entry.uint32();
            if (t >>> 3 === 1) key = this.readScalar(entry, keyType);
            else if (t >>> 3 === 2) value = this.readValue(field, field.type, field.resolvedType, entry, `${fieldPath}[${JSON.stringify(String(key))}]`);
            else entry.skipType(t & 7);
          }
          const map = (form[field.name] ??= {}) as JsonObject;
          map[String(key)] = value ?? (field.resolvedType instanceof protobuf.Type ? {} : field.resolvedType instanceof protobuf.Enum ? field.resolvedType.valuesById[0] : defaultScalar(field.type));
        } else if (field.repeated) {
          const list = (form[field.name] ??= []) as unknown[];
          if (wireType === WIRE.LEN && (PACKABLE.has(field.type) || field.resolvedType instanceof protobuf.Enum)) {
            const end = reader.uint32() + reader.pos;
            while (reader.pos < end) list.push(this.readValue(field, field.type, field.resolvedType, reader, `${fieldPath}[${list.length}]`));
          } else {
            list.push(this.readValue(field, field.type, field.resolvedType, reader, `${fieldPath}[${list.length}]`));
          }
        } else {
          const value = this.readValue(field, field.type, field.resolvedType, reader, fieldPath);
          const previous = form[field.name];
          // A singular message that appears twice on the wire is merged (protobuf semantics).
          form[field.name] = field.resolvedType instanceof protobuf.Type && isObject(previous) && isObject(value) ? { ...previous, ...value } : value;
          for (const other of field.partOf?.fieldsArray ?? []) if (other !== field) delete form[other.name];
        }
      } catch (err) {
        this.errors.push(configError('parse', fieldPath, `malformed binary data (${(err as Error).message})`));
        return form;
      }
    }
    return messageFormToJson(type, form, path, this.root, this);
  }
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function defaultScalar(kind: string): unknown {
  return kind === 'string' ? '' : kind === 'bool' ? false : kind === 'bytes' ? '' : 0;
}

/**
 * Well-known types in message form ({seconds, nanos}, {fields: …}, {type_url, value}) → their
 * canonical JSON form. Shared by the binary decoder and the text-format parser.
 */
export function messageFormToJson(
  type: protobuf.Type,
  form: JsonObject,
  path: string,
  root: protobuf.Root,
  sink: { errors: ConfigError[]; unknownFields: UnknownFieldUse[]; depth?: number },
): unknown {
  const name = fullName(type);
  if (!name.startsWith('google.protobuf.')) return form;
  if (WRAPPER_TYPES[name]) return form.value ?? defaultScalar(WRAPPER_TYPES[name]!);
  switch (name) {
    case 'google.protobuf.Duration':
      return formatDuration(BigInt(form.seconds as number | string ?? 0), Number(form.nanos ?? 0));
    case 'google.protobuf.Timestamp':
      return formatTimestamp(BigInt(form.seconds as number | string ?? 0), Number(form.nanos ?? 0));
    case 'google.protobuf.FieldMask':
      return formatFieldMask((form.paths as string[] | undefined) ?? []);
    case 'google.protobuf.Struct':
      return form.fields ?? {};
    case 'google.protobuf.Value':
      return structValueToJson(form);
    case 'google.protobuf.ListValue':
      return form.values ?? [];
    case 'google.protobuf.Any': {
      const typeUrl = String(form.type_url ?? '');
      if (!typeUrl) return {}; // the empty Any, `{}` in JSON (a route's FilterConfig.config enabling its filter)
      const inner = lookupTypeOrNull(root, typeNameOfUrl(typeUrl));
      if (!inner) return { '@type': typeUrl };
      const bytes = Buffer.from(String(form.value ?? ''), 'base64');
      const decoder = new BinaryDecoder(root, sink.depth ?? 0);
      const value = decoder.decodeMessage(inner, bytes, path);
      sink.errors.push(...decoder.errors);
      sink.unknownFields.push(...decoder.unknownFields);
      return isObject(value) && !fullName(inner).startsWith('google.protobuf.') ? { '@type': typeUrl, ...value } : { '@type': typeUrl, value };
    }
    default:
      return form;
  }
}
