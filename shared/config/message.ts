import { load as loadYaml } from 'js-yaml';
import { checkConstraints } from './constraints.js';
import { documentLimitError } from './limits.js';
import { ProtoJsonReader, type JsonObject } from './proto-json.js';
import { envoySchema } from './schema.js';
import { checkSupportedFields } from './supported.js';
import { configError, type ConfigError } from './config-error.js';

/**
 * One message of Envoy's API from YAML or JSON text (an admin request body such as POST /tap's
 * TapRequest), checked as strictly as a bootstrap: unknown fields, types, Envoy's constraint
 * annotations and the fields this proxy implements. Either the canonical message or every error.
 */
export function readMessage(typeName: string, text: string): { message: JsonObject; errors: [] } | { message?: undefined; errors: ConfigError[] } {
  let doc: unknown;
  try {
    doc = loadYaml(text);
  } catch (err) {
    return { errors: [configError('parse', '', `unable to parse YAML: ${(err as Error).message}`)] };
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return { errors: [configError('parse', '', `a ${typeName} must be a mapping`)] };
  const refusal = documentLimitError(doc);
  if (refusal) return { errors: [configError('too_large', '', `refused: ${refusal}`)] };
  const root = envoySchema();
  const type = root.lookupType(typeName);
  const reader = new ProtoJsonReader(root, { unknownFields: 'reject' });
  const message = reader.readMessage(type, doc as JsonObject, '') ?? {};
  const errors = [...reader.errors];
  if (errors.length === 0) {
    checkConstraints(type, message, '', errors);
    checkSupportedFields(type, message, '', errors);
  }
  return errors.length ? { errors } : { message, errors: [] };
}
