import protobuf from 'protobufjs';
import { checkFieldRules, fieldRules, oneofRequired } from './pgv.js';
import { childPath, fullName, lookupTypeOrNull, type JsonObject } from './proto-json.js';
import { typeNameOfUrl } from './wkt.js';
import { configError, type ConfigError } from './config-error.js';

/**
 * Envoy's constraint annotations (protoc-gen-validate), checked over a normalised message.
 * Envoy validates the bootstrap once, after `--config-yaml` is merged over the file, so an
 * overlay may set one field of a message whose other required fields come from the file.
 */

interface Plan {
  /** Fields with rules, or of message type (to descend into). */
  fields: protobuf.Field[];
  requiredOneofs: protobuf.OneOf[];
}

const plans = new WeakMap<protobuf.Type, Plan>();

function planFor(type: protobuf.Type): Plan {
  let plan = plans.get(type);
  if (!plan) {
    plan = {
      fields: type.fieldsArray.filter((f) => fieldRules(f) !== null || f.resolvedType instanceof protobuf.Type),
      requiredOneofs: type.oneofsArray.filter(oneofRequired),
    };
    plans.set(type, plan);
  }
  return plan;
}

/**
 * `anyErrors`: where the errors inside an Any's payload go (by default with the others). Envoy
 * validates a discovery resource without descending into its Anys (recurse_into_any false): a
 * typed_config's rules are checked when its factory is built, resource by resource.
 */
export function checkConstraints(type: protobuf.Type, message: JsonObject, path: string, errors: ConfigError[], anyErrors: ConfigError[] = errors): void {
  if (fullName(type).startsWith('google.protobuf.')) return;
  const plan = planFor(type);
  for (const field of plan.fields) {
    const value = message[field.name];
    const fieldPath = childPath(path, field.name);
    if (fieldRules(field)) {
      const enumNumber = field.resolvedType instanceof protobuf.Enum ? enumNumbers(field.resolvedType, value) : undefined;
      checkFieldRules(field, value, enumNumber, fieldPath, errors);
    }
    if (!(field.resolvedType instanceof protobuf.Type) || value === undefined) continue;
    // message.skip: the message's own rules are not checked there (PGV's skip).
    if (fieldRules(field)?.['message.skip'] === true) continue;
    const inner = field.resolvedType;
    if (field.map) {
      for (const [k, v] of Object.entries(value as JsonObject)) checkNested(inner, v, `${fieldPath}[${JSON.stringify(k)}]`, errors, anyErrors);
    } else if (field.repeated) {
      (value as unknown[]).forEach((v, i) => checkNested(inner, v, `${fieldPath}[${i}]`, errors, anyErrors));
    } else {
      checkNested(inner, value, fieldPath, errors, anyErrors);
    }
  }
  for (const oneof of plan.requiredOneofs) {
    if (!oneof.fieldsArray.some((f) => message[f.name] !== undefined)) {
      errors.push(configError('constraint', path || '<root>', `one of ${oneof.fieldsArray.map((f) => f.name).join(', ')} is required`));
    }
  }
}

function checkNested(type: protobuf.Type, value: unknown, path: string, errors: ConfigError[], anyErrors: ConfigError[]): void {
  if (fullName(type) === 'google.protobuf.Any') {
    const any = value as JsonObject;
    const inner = lookupTypeOrNull(type.root as protobuf.Root, typeNameOfUrl(String(any['@type'])));
    if (!inner) return; // an unknown type is reported by the extension check
    const { '@type': _t, ...fields } = any;
    checkConstraints(inner, fields, path, anyErrors, anyErrors);
    return;
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) checkConstraints(type, value as JsonObject, path, errors, anyErrors);
}
function enumNumbers(type: protobuf.Enum, value: unknown): number | number[] | undefined {
  const one = (v: unknown) => (typeof v === 'number' ? v : (type.values[String(v)] ?? 0));
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.map(one) : one(value);
}
