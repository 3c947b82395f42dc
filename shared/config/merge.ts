import protobuf from 'protobufjs';
import { fullName, lookupTypeOrNull, type JsonObject } from './proto-json.js';
import { typeNameOfUrl } from './wkt.js';

/**
 * Protobuf MergeFrom over normalised configuration (the semantics Envoy applies to
 * `--config-yaml` over `--config-path`): set scalars replace, repeated fields append, map entries
 * replace by key, sub-messages merge recursively, and setting one member of a oneof clears the
 * others. Because normalised configuration already forgets default-valued scalars, "set" is
 * simply "present". Well-known types other than Struct are replaced whole (a Duration is one
 * value to an operator, not two fields to merge); an Any merges only when both sides carry the
 * same type.
 */
export function mergeMessage(type: protobuf.Type, base: JsonObject, overlay: JsonObject): JsonObject {
  const out: JsonObject = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    const field = type.fields[key];
    if (!field) {
      out[key] = value;
      continue;
    }
    for (const other of field.partOf?.fieldsArray ?? []) if (other !== field) delete out[other.name];
    const current = out[key];
    if (field.map) {
      out[key] = { ...(current as JsonObject | undefined), ...(value as JsonObject) };
    } else if (field.repeated) {
      out[key] = [...((current as unknown[] | undefined) ?? []), ...(value as unknown[])];
    } else if (field.resolvedType instanceof protobuf.Type && current !== undefined) {
      out[key] = mergeValue(field.resolvedType, current, value);
    } else {
      out[key] = value;
    }
  }
  return out;
}

function mergeValue(type: protobuf.Type, current: unknown, value: unknown): unknown {
  const name = fullName(type);
  if (name === 'google.protobuf.Struct') return { ...(current as JsonObject), ...(value as JsonObject) };
  if (name === 'google.protobuf.Any') {
    const a = current as JsonObject;
    const b = value as JsonObject;
    if (a['@type'] !== b['@type']) return b;
    const inner = lookupTypeOrNull(type.root as protobuf.Root, typeNameOfUrl(String(b['@type'])));
    if (!inner || fullName(inner).startsWith('google.protobuf.')) return b;
    const { '@type': typeUrl, ...aFields } = a;
    const { '@type': _same, ...bFields } = b;
    return { '@type': typeUrl, ...mergeMessage(inner, aFields, bFields) };
  }
  if (name.startsWith('google.protobuf.')) return value;
  return mergeMessage(type, current as JsonObject, value as JsonObject);
}
