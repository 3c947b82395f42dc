import protobuf from 'protobufjs';
import { WRAPPER_TYPES, formatDuration, normalizeTimestamp, parseDuration, typeNameOfUrl } from './wkt.js';
import { configError, type ConfigError, type ConfigErrorCode } from './config-error.js';

/**
 * Reads canonical proto3 JSON (what YAML and JSON bootstraps are) against Envoy's schema and
 * returns it *normalised*: snake_case keys in field-number order, enums by name, Durations in
 * Envoy's printed form, 64-bit integers as numbers (strings beyond 2^53), and scalar fields that
 * hold their default value dropped, exactly as a proto3 message would forget them. The result is
 * both what the proxy runs on and what `/config_dump` prints.
 *
 * Unlike protobufjs' own `fromObject`, nothing is dropped or coerced silently: every unknown
 * field and type mismatch is reported with its field path, all in one pass. Envoy's constraint
 * annotations are checked afterwards (constraints.ts), on the merged bootstrap, as Envoy does.
 */

export type JsonObject = Record<string, unknown>;

export interface UnknownFieldUse {
  path: string;
  typeName: string;
  field: string;
}

export interface AnyUse {
  path: string;
  typeUrl: string;
  /** Full message name; absent from the schema when `known` is false. */
  typeName: string;
  known: boolean;
  value: JsonObject;
}

export interface DeprecatedFieldUse {
  path: string;
  typeName: string;
  field: string;
}

export interface ReadOptions {
  /** `reject` (default): an unknown field is an error. `allow`: it is recorded and skipped. */
  unknownFields: 'reject' | 'allow';
}

interface TypeInfo {
  byKey: Map<string, protobuf.Field>;
  ordered: protobuf.Field[];
}

const typeInfoCache = new WeakMap<protobuf.Type, TypeInfo>();

function typeInfo(type: protobuf.Type): TypeInfo {
  let info = typeInfoCache.get(type);
  if (info) return info;
  const byKey = new Map<string, protobuf.Field>();
  for (const f of type.fieldsArray) {
    byKey.set(f.name, f);
    byKey.set(jsonName(f.name), f);
  }
  info = { byKey, ordered: [...type.fieldsArray].sort((a, b) => a.id - b.id) };
  typeInfoCache.set(type, info);
  return info;
}

/** protobufjs types map fields as plain Fields; their key type lives on the MapField subclass. */
export function mapKeyType(field: protobuf.Field): string {
  return (field as unknown as protobuf.MapField).keyType;
}

export function jsonName(snake: string): string {
  return snake.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

const fullNames = new WeakMap<protobuf.ReflectionObject, string>();

/** The full name without the leading dot. Cached: protobufjs recomputes it from the parents on every access. */
export function fullName(t: protobuf.ReflectionObject): string {
  let name = fullNames.get(t);
  if (name === undefined) {
    name = t.fullName.startsWith('.') ? t.fullName.slice(1) : t.fullName;
    fullNames.set(t, name);
  }
  return name;
}

const typeLookups = new WeakMap<protobuf.Root, Map<string, protobuf.Type | null>>();

/** The message type of a full name (as in an Any's type URL), or null; cached per schema. */
export function lookupTypeOrNull(root: protobuf.Root, name: string): protobuf.Type | null {
  let cache = typeLookups.get(root);
  if (!cache) typeLookups.set(root, (cache = new Map()));
  let type = cache.get(name);
  if (type === undefined) {
    try {
      // protobufjs answers an empty name (an Any without a type URL) with the root itself.
      const found = root.lookupType(name);
      type = found instanceof protobuf.Type ? found : null;
    } catch {
      type = null;
    }
    cache.set(name, type);
  }
  return type;
}

export function childPath(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

const INT32 = new Set(['int32', 'sint32', 'sfixed32']);
const UINT32 = new Set(['uint32', 'fixed32']);
const INT64 = new Set(['int64', 'sint64', 'sfixed64', 'uint64', 'fixed64']);

function isPlainObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v)}`;
  return `the ${typeof v} ${String(v)}`;
}

function isDefaultScalar(field: protobuf.Field, v: unknown, enumNumber: number | undefined): boolean {
  if (field.resolvedType instanceof protobuf.Enum) return enumNumber === 0;
  return v === 0 || v === '' || v === false;
}

export class ProtoJsonReader {
  readonly errors: ConfigError[] = [];
  readonly unknownFields: UnknownFieldUse[] = [];
  readonly anys: AnyUse[] = [];
  readonly deprecated: DeprecatedFieldUse[] = [];

  constructor(
    private readonly root: protobuf.Root,
    private readonly options: ReadOptions = { unknownFields: 'reject' },
  ) {}

  private error(path: string, message: string, code: ConfigErrorCode = 'invalid_value'): void {
    this.errors.push(configError(code, path || '<root>', message));
  }

  /** Reads a message; undefined when the value could not be read (the reason is in `errors`). */
  readMessage(type: protobuf.Type, value: unknown, path: string): JsonObject | undefined {
    const wkt = this.readWellKnown(type, value, path);
    if (wkt !== NOT_WELL_KNOWN) return wkt as JsonObject | undefined;
    if (!isPlainObject(value)) {
      this.error(path, `expected an object for ${fullName(type)}, got ${describe(value)}`);
      return undefined;
    }
    const info = typeInfo(type);
    const present = new Map<protobuf.Field, { value: unknown; enumNumber?: number }>();
    for (const [key, raw] of Object.entries(value)) {
      const field = info.byKey.get(key);
      const fieldPath = childPath(path, key);
      if (!field) {
        if (this.options.unknownFields === 'allow') {
          this.unknownFields.push({ path: fieldPath, typeName: fullName(type), field: key });
        } else {
          this.error(fieldPath, `unknown field in ${fullName(type)}`, 'unknown_field');
        }
        continue;
      }
      if (present.has(field)) {
        this.error(fieldPath, `field ${field.name} is set twice (as ${field.name} and ${jsonName(field.name)})`);
        continue;
      }
      if (raw === null && !(field.resolvedType instanceof protobuf.Type && fullName(field.resolvedType) === 'google.protobuf.Value')) {
        continue; // proto3 JSON: null means "not set"
      }
      if (field.options?.deprecated === true) {
        this.deprecated.push({ path: fieldPath, typeName: fullName(type), field: field.name });
      }
      const read = this.readField(field, raw, fieldPath);
      if (read === undefined) continue;
      present.set(field, read);
    }

    const out: JsonObject = {};
    for (const field of info.ordered) {
      const got = present.get(field);
      if (!got) continue;
      const isPlainScalar = !field.repeated && !field.map && !field.partOf && !(field.resolvedType instanceof protobuf.Type);
      if (isPlainScalar && isDefaultScalar(field, got.value, got.enumNumber)) continue;
      out[field.name] = got.value;
    }
    for (const oneof of type.oneofsArray) {
      const set = oneof.fieldsArray.filter((f) => present.has(f));
      if (set.length > 1) {
        this.error(path, `only one of ${oneof.fieldsArray.map((f) => f.name).join(', ')} may be set (got ${set.map((f) => f.name).join(' and ')})`, 'conflict');
      }
    }
    return out;
  }

  private readField(field: protobuf.Field, raw: unknown, path: string): { value: unknown; enumNumber?: number } | undefined {
    if (field.map) {
      if (!isPlainObject(raw)) {
        this.error(path, `expected a map (object), got ${describe(raw)}`);
        return undefined;
      }
      const out: JsonObject = {};
      const keyType = mapKeyType(field);
      for (const [k, v] of Object.entries(raw)) {
        const entryPath = `${path}[${JSON.stringify(k)}]`;
        if (keyType !== 'string' && this.readScalar(keyType, k, entryPath) === undefined) continue;
        const value = this.readSingle(field, v, entryPath);
        if (value !== undefined) out[k] = value.value;
      }
      return { value: out };
    }
    if (field.repeated) {
      // A lone value where a list belongs is a list of one, as Envoy's loader reads it (protobuf's
      // JSON parser with allow_legacy_syntax): Envoy's dynamic-config-fs sandbox writes `filters:` so.
      const items = Array.isArray(raw) ? raw : [raw];
      const values: unknown[] = [];
      items.forEach((item, i) => {
        const got = this.readSingle(field, item, `${path}[${i}]`);
        if (got !== undefined) values.push(got.value);
      });
      return values.length === 0 ? undefined : { value: values };
    }
    return this.readSingle(field, raw, path);
  }

  private readSingle(field: protobuf.Field, raw: unknown, path: string): { value: unknown; enumNumber?: number } | undefined {
    const resolved = field.resolvedType;
    if (resolved instanceof protobuf.Type) {
      const v = this.readMessage(resolved, raw, path);
      return v === undefined ? undefined : { value: v };
    }
    if (resolved instanceof protobuf.Enum) return this.readEnum(resolved, raw, path);
    const v = this.readScalar(field.type, raw, path);
    return v === undefined ? undefined : { value: v };
  }

  private readEnum(type: protobuf.Enum, raw: unknown, path: string): { value: unknown; enumNumber: number } | undefined {
    if (typeof raw === 'string') {
      // As Envoy parses (case_insensitive_enum_parsing): a value not found is tried in upper case,
      // so `strict_dns` is STRICT_DNS; the canonical name is kept.
      const upper = type.values[raw] === undefined && type.values[raw.toUpperCase()] !== undefined ? raw.toUpperCase() : raw;
      const n = type.values[upper];
      if (upper !== raw) return { value: upper, enumNumber: n! };
      if (n === undefined) {
        this.error(path, `unknown value ${JSON.stringify(raw)} for enum ${fullName(type)} (one of ${Object.keys(type.values).join(', ')})`);
        return undefined;
      }
      return { value: raw, enumNumber: n };
    }
    if (typeof raw === 'number' && Number.isInteger(raw)) {
      const name = type.valuesById[raw];
      return { value: name ?? raw, enumNumber: raw };
    }
    this.error(path, `expected an enum name of ${fullName(type)}, got ${describe(raw)}`);
    return undefined;
  }

  readScalar(kind: string, raw: unknown, path: string): unknown {
    switch (kind) {
      case 'string':
        if (typeof raw === 'string') return raw;
        break;
      case 'bool':
        if (typeof raw === 'boolean') return raw;
        if (raw === 'true' || raw === 'false') return raw === 'true'; // map keys
        break;
      case 'bytes':
        if (typeof raw === 'string' && /^[A-Za-z0-9+/\-_]*={0,2}$/.test(raw)) return raw;
        this.error(path, `expected base64-encoded bytes, got ${describe(raw)}`);
        return undefined;
      case 'double':
      case 'float': {
        if (typeof raw === 'number') return raw;
        if (raw === 'NaN') return NaN;
        if (raw === 'Infinity') return Infinity;
        if (raw === '-Infinity') return -Infinity;
        if (typeof raw === 'string' && raw.trim() !== '' && !Number.isNaN(Number(raw))) return Number(raw);
        break;
      }
      default: {
        if (!INT32.has(kind) && !UINT32.has(kind) && !INT64.has(kind)) break;
        let n: number | bigint | undefined;
        if (typeof raw === 'number' && Number.isInteger(raw)) n = raw;
        else if (typeof raw === 'string' && /^-?\d+$/.test(raw)) n = BigInt(raw);
        if (n === undefined) {
          this.error(path, `expected an integer (${kind}), got ${describe(raw)}`);
          return undefined;
        }
        const big = BigInt(n);
        const [min, max] = INT32.has(kind)
          ? [-(2n ** 31n), 2n ** 31n - 1n]
          : UINT32.has(kind)
            ? [0n, 2n ** 32n - 1n]
            : kind.startsWith('u') || kind === 'fixed64'
              ? [0n, 2n ** 64n - 1n]
              : [-(2n ** 63n), 2n ** 63n - 1n];
        if (big < min || big > max) {
          this.error(path, `value ${big} is out of range for ${kind}`);
          return undefined;
        }
        return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big.toString();
      }
    }
    this.error(path, `expected ${kind === 'bool' ? 'a boolean' : kind === 'string' ? 'a string' : `a number (${kind})`}, got ${describe(raw)}`);
    return undefined;
  }

  /** Well-known types have their own JSON forms. Returns NOT_WELL_KNOWN for ordinary messages. */
  private readWellKnown(type: protobuf.Type, value: unknown, path: string): unknown {
    const name = fullName(type);
    if (!name.startsWith('google.protobuf.')) return NOT_WELL_KNOWN;
    const wrapped = WRAPPER_TYPES[name];
    if (wrapped) return this.readScalar(wrapped, value, path);
    switch (name) {
      case 'google.protobuf.Duration': {
        const parts = typeof value === 'string' ? parseDuration(value) : undefined;
        if (!parts) {
          this.error(path, `expected a duration such as "1s" or "0.250s", got ${describe(value)}`);
          return undefined;
        }
        return formatDuration(parts.seconds, parts.nanos);
      }
      case 'google.protobuf.Timestamp': {
        const ts = typeof value === 'string' ? normalizeTimestamp(value) : undefined;
        if (!ts) this.error(path, `expected an RFC 3339 timestamp, got ${describe(value)}`);
        return ts;
      }
      case 'google.protobuf.FieldMask':
        if (typeof value === 'string') return value;
        this.error(path, `expected a field mask string such as "a.b,c", got ${describe(value)}`);
        return undefined;
      case 'google.protobuf.Struct':
        if (isPlainObject(value)) return value;
        this.error(path, `expected an object (Struct), got ${describe(value)}`);
        return undefined;
      case 'google.protobuf.ListValue':
        if (Array.isArray(value)) return value;
        this.error(path, `expected a list (ListValue), got ${describe(value)}`);
        return undefined;
      case 'google.protobuf.Value':
        return value;
      case 'google.protobuf.Empty':
        // An Any of Empty may leave out its `value`, as protobuf's JSON parser allows.
        if (value === undefined || (isPlainObject(value) && Object.keys(value).length === 0)) return {};
        this.error(path, `expected an empty object, got ${describe(value)}`);
        return undefined;
      case 'google.protobuf.Any':
        return this.readAny(value, path);
      default:
        return NOT_WELL_KNOWN;
    }
  }

  private readAny(value: unknown, path: string): JsonObject | undefined {
    // `{}` is the empty Any (no type URL), as protobuf's JSON parser reads it: only a route's
    // FilterConfig.config takes one (it enables a filter); checkAnyUses refuses it anywhere else.
    if (isPlainObject(value) && Object.keys(value).length === 0) {
      this.anys.push({ path, typeUrl: '', typeName: '', known: false, value: {} });
      return {};
    }
    if (!isPlainObject(value) || typeof value['@type'] !== 'string') {
      this.error(path, `expected an object with "@type" (google.protobuf.Any), got ${describe(value)}`);
      return undefined;
    }
    const typeUrl = value['@type'];
    const typeName = typeNameOfUrl(typeUrl);
    // A TypedStruct (udpa.type.v1 or xds.type.v3) names the type of its Struct `value`: it is that
    // typed configuration, as Envoy unwraps it (Istio configures extensions so).
    if (TYPED_STRUCTS.has(typeName)) {
      const inner = value.type_url;
      if (typeof inner !== 'string' || !inner) {
        this.error(childPath(path, 'type_url'), `a TypedStruct needs a type_url naming its value's type`);
        return undefined;
      }
      if (value.value !== undefined && !isPlainObject(value.value)) {
        this.error(childPath(path, 'value'), `expected an object (google.protobuf.Struct), got ${describe(value.value)}`);
        return undefined;
      }
      return this.readAny({ ...(value.value as JsonObject | undefined), '@type': inner }, path);
    }
    const type = lookupTypeOrNull(this.root, typeName);
    const { '@type': _ignored, ...rest } = value;
    if (!type) {
      this.anys.push({ path, typeUrl, typeName, known: false, value: rest });
      return { '@type': typeUrl, ...rest };
    }
    const isWkt = fullName(type).startsWith('google.protobuf.') && readWellKnownNames.has(fullName(type));
    const inner = isWkt ? this.readMessage(type, rest.value, childPath(path, 'value')) : this.readMessage(type, rest, path);
    if (inner === undefined) return undefined;
    const normalised = isWkt ? { '@type': typeUrl, value: inner } : { '@type': typeUrl, ...inner };
    this.anys.push({ path, typeUrl, typeName, known: true, value: inner as JsonObject });
    return normalised;
  }
}

const TYPED_STRUCTS = new Set(['udpa.type.v1.TypedStruct', 'xds.type.v3.TypedStruct']);

const NOT_WELL_KNOWN = Symbol('not a well-known type');
const readWellKnownNames = new Set([
  ...Object.keys(WRAPPER_TYPES),
  'google.protobuf.Duration',
  'google.protobuf.Timestamp',
  'google.protobuf.FieldMask',
  'google.protobuf.Struct',
  'google.protobuf.ListValue',
  'google.protobuf.Value',
  'google.protobuf.Empty',
  'google.protobuf.Any',
]);
