import protobuf from 'protobufjs';
import { checkFieldRules, oneofRequired } from './pgv.js';
import { childPath, fullName, type JsonObject } from './proto-json.js';
import { typeNameOfUrl } from './wkt.js';

/**
 * Envoy's constraint annotations (protoc-gen-validate), checked over a normalised message.
 * Envoy validates the bootstrap once, after `--config-yaml` is merged over the file, so an
 * overlay may set one field of a message whose other required fields come from the file.
 */
export function checkConstraints(type: protobuf.Type, message: JsonObject, path: string, errors: string[]): void {
  const name = fullName(type);
  if (name.startsWith('google.protobuf.')) return;
  for (const field of type.fieldsArray) {
    const value = message[field.name];
    const fieldPath = childPath(path, field.name);
    const enumType = field.resolvedType instanceof protobuf.Enum ? field.resolvedType : null;
    const enumNumber = enumType ? enumNumbers(enumType, value) : undefined;
    checkFieldRules({ field, value, enumNumber, fail: (msg) => errors.push(`${fieldPath}: ${msg}`) });
    if (!(field.resolvedType instanceof protobuf.Type) || value === undefined) continue;
    const inner = field.resolvedType;
    if (field.map) {
      for (const [k, v] of Object.entries(value as JsonObject)) checkNested(inner, v, `${fieldPath}[${JSON.stringify(k)}]`, errors);
    } else if (field.repeated) {
      (value as unknown[]).forEach((v, i) => checkNested(inner, v, `${fieldPath}[${i}]`, errors));
    } else {
      checkNested(inner, value, fieldPath, errors);
    }
  }
  for (const oneof of type.oneofsArray) {
    if (oneofRequired(oneof) && !oneof.fieldsArray.some((f) => message[f.name] !== undefined)) {
      errors.push(`${path || '<root>'}: one of ${oneof.fieldsArray.map((f) => f.name).join(', ')} is required`);
    }
  }
}

function checkNested(type: protobuf.Type, value: unknown, path: string, errors: string[]): void {
  if (fullName(type) === 'google.protobuf.Any') {
    const any = value as JsonObject;
    let inner: protobuf.Type | null = null;
    try {
      inner = type.root.lookupType(typeNameOfUrl(String(any['@type'])));
    } catch {
      return; // an unknown type is reported by the extension check
    }
    const { '@type': _t, ...fields } = any;
    checkConstraints(inner, fields, path, errors);
    return;
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) checkConstraints(type, value as JsonObject, path, errors);
}

function enumNumbers(type: protobuf.Enum, value: unknown): number | number[] | undefined {
  const one = (v: unknown) => (typeof v === 'number' ? v : (type.values[String(v)] ?? 0));
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.map(one) : one(value);
}
