import type protobuf from 'protobufjs';
import { envoySchema } from '../shared/config/schema.js';
import { protobufjs } from '../shared/protobufjs.js';

/**
 * The messages of Envoy's router_check_tool (its package `envoy.RouterCheckToolSchema`, here
 * `RouterCheckToolSchema`: a name no file format spells), by the same field names and numbers, so
 * that a test file written for Envoy's tool reads here in any of its formats (YAML, JSON, text
 * and binary protobuf) and `--output-path` writes what Envoy's writes. The constraints are its
 * PGV rules, checked by the same code as the configuration's.
 */

const PACKAGE = 'RouterCheckToolSchema';
const STRING_VALUE = '.google.protobuf.StringValue';
const HEADER_VALUE = '.envoy.config.core.v3.HeaderValue';
const HEADER_MATCHER = '.envoy.config.route.v3.HeaderMatcher';

type FieldSpec = [name: string, id: number, type: string, options?: Record<string, unknown>, repeated?: 'repeated'];

const MESSAGES: Record<string, FieldSpec[]> = {
  Validation: [
    ['tests', 1, 'ValidationItem', { '(validate.rules).repeated.min_items': 1 }, 'repeated'],
    ['runtime', 2, '.google.protobuf.Struct'],
  ],
  ValidationItem: [
    ['test_name', 1, 'string', { '(validate.rules).string.min_len': 1 }],
    ['input', 2, 'ValidationInput', { '(validate.rules).message.required': true }],
    ['validate', 3, 'ValidationAssert', { '(validate.rules).message.required': true }],
  ],
  ValidationInput: [
    ['authority', 1, 'string', { '(validate.rules).string.min_len': 1 }],
    ['path', 2, 'string', { '(validate.rules).string.min_len': 1 }],
    ['method', 4, 'string', { '(validate.rules).string.min_len': 3 }],
    ['random_value', 5, 'uint64'],
    ['ssl', 6, 'bool'],
    ['internal', 7, 'bool'],
    ['runtime', 9, 'string'],
    ['additional_request_headers', 10, HEADER_VALUE, {}, 'repeated'],
    ['additional_response_headers', 11, HEADER_VALUE, {}, 'repeated'],
    ['dynamic_metadata', 12, 'DynamicMetadata', {}, 'repeated'],
  ],
  /**
   * envoy.extensions.filters.http.set_metadata.v3.Metadata, field for field (this proxy has no
   * set_metadata filter, so the schema does not hold it). Routes here cannot match on dynamic
   * metadata (RouteMatch.dynamic_metadata is refused), so a test's metadata changes no route.
   */
  DynamicMetadata: [
    ['metadata_namespace', 1, 'string', { '(validate.rules).string.min_len': 1 }],
    ['allow_overwrite', 2, 'bool'],
    ['value', 3, '.google.protobuf.Struct'],
    ['typed_value', 4, '.google.protobuf.Any'],
  ],
  ValidationAssert: [
    ['cluster_name', 1, STRING_VALUE],
    ['virtual_cluster_name', 2, STRING_VALUE],
    ['virtual_host_name', 3, STRING_VALUE],
    ['host_rewrite', 4, STRING_VALUE],
    ['path_rewrite', 5, STRING_VALUE],
    ['path_redirect', 6, STRING_VALUE],
    ['request_header_fields', 9, HEADER_VALUE, { deprecated: true }, 'repeated'],
    ['response_header_fields', 10, HEADER_VALUE, { deprecated: true }, 'repeated'],
    ['request_header_matches', 11, HEADER_MATCHER, {}, 'repeated'],
    ['response_header_matches', 12, HEADER_MATCHER, {}, 'repeated'],
    ['code_redirect', 13, '.google.protobuf.UInt32Value'],
  ],
  ValidationResult: [['test_results', 1, 'ValidationItemResult', {}, 'repeated']],
  ValidationItemResult: [
    ['test_name', 1, 'string'],
    ['test_passed', 2, 'bool'],
    ['failure', 3, 'ValidationFailure'],
  ],
  ValidationFailure: [
    ...(['cluster_name', 'virtual_cluster_name', 'virtual_host_name', 'host_rewrite', 'path_rewrite', 'path_redirect'] as const).flatMap((name, i): FieldSpec[] => [
      [`expected_${name}`, 2 * i + 1, STRING_VALUE],
      [`actual_${name}`, 2 * i + 2, STRING_VALUE],
    ]),
    ['expected_code_redirect', 13, '.google.protobuf.UInt32Value'],
    ['actual_code_redirect', 14, '.google.protobuf.UInt32Value'],
    ['request_header_match_failures', 15, 'HeaderMatchFailure', {}, 'repeated'],
    ['response_header_match_failures', 16, 'HeaderMatchFailure', {}, 'repeated'],
  ],
  HeaderMatchFailure: [
    ['header_matcher', 1, HEADER_MATCHER],
    ['actual_header_value', 2, STRING_VALUE],
  ],
};

let root: protobuf.Root | undefined;

/** The Envoy schema with the tool's messages added (once per process). */
export function toolSchema(): protobuf.Root {
  if (root) return root;
  const schema = envoySchema();
  const pb = protobufjs();
  const ns = new pb.Namespace(PACKAGE);
  for (const [name, fields] of Object.entries(MESSAGES)) {
    const type = new pb.Type(name);
    for (const [field, id, fieldType, options, rule] of fields) {
      // The Envoy messages they name are read in now, so that the fields resolve.
      if (fieldType.startsWith('.')) schema.lookupType(fieldType.slice(1));
      type.add(new pb.Field(field, id, fieldType, rule, undefined, options && Object.keys(options).length ? options : undefined));
    }
    ns.add(type);
  }
  schema.add(ns);
  for (const name of Object.keys(MESSAGES)) schema.lookupType(`${PACKAGE}.${name}`).resolveAll();
  return (root = schema);
}

export function toolType(name: keyof typeof MESSAGES): protobuf.Type {
  return toolSchema().lookupType(`${PACKAGE}.${name}`);
}
