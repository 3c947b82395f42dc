import { list, obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import { checkRegex } from '../../../../matchers.js';
import type { ExtensionDescriptor, HttpFilterDescriptor } from '../../../descriptor.js';
import { headerToMetadataFactory } from './header-to-metadata.js';
import { configError, type ConfigError } from '../../../../config/config-error.js';

/** Headers and cookies written as dynamic metadata; per route too. */
export const extensions: readonly (ExtensionDescriptor | HttpFilterDescriptor)[] = [
  {
    name: 'envoy.filters.http.header_to_metadata',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.header_to_metadata.v3.Config',
    perRouteTypeName: 'envoy.extensions.filters.http.header_to_metadata.v3.Config',
    description: 'copies request or response headers (or cookies) into dynamic metadata',
    deprecatedNames: [],
    fields: {
      'envoy.extensions.filters.http.header_to_metadata.v3.Config': ['request_rules', 'response_rules'],
    },
    create: (name, config) => headerToMetadataFactory(name, config),
    validate: checkHeaderToMetadata,
    validatePerRoute: checkHeaderToMetadata,
  },
];

/** header_to_metadata's rules, as Envoy checks them (and PROTOBUF_VALUE, not done here). */
function checkHeaderToMetadata(config: JsonObject, path: string, errors: ConfigError[]): void {
  for (const side of ['request_rules', 'response_rules']) {
    list(config[side]).forEach((r, i) => {
      const rPath = `${path}.${side}[${i}]`;
      const header = typeof r.header === 'string' && r.header !== '';
      const cookie = typeof r.cookie === 'string' && r.cookie !== '';
      if (header === cookie) errors.push(configError('invalid', rPath, 'one of header and cookie must be set'));
      if (cookie && r.remove === true) errors.push(configError('invalid', rPath, 'cannot specify remove for a cookie'));
      if (r.on_header_present === undefined && r.on_header_missing === undefined) errors.push(configError('invalid', rPath, 'one of on_header_present and on_header_missing must be set'));
      if (r.on_header_missing !== undefined && !obj(r.on_header_missing).value) errors.push(configError('conflict', `${rPath}.on_header_missing`, 'cannot be used without a non-empty value'));
      for (const kv of ['on_header_present', 'on_header_missing']) {
        const pair = obj(r[kv]);
        if (pair.value !== undefined && pair.value !== '' && pair.regex_value_rewrite !== undefined) errors.push(configError('conflict', `${rPath}.${kv}`, 'cannot specify both value and regex_value_rewrite'));
        if (pair.regex_value_rewrite !== undefined) checkRegex(obj(obj(pair.regex_value_rewrite).pattern).regex, `${rPath}.${kv}.regex_value_rewrite.pattern.regex`, errors);
        if (pair.type === 'PROTOBUF_VALUE') errors.push(configError('unsupported', `${rPath}.${kv}.type`, 'PROTOBUF_VALUE is not supported by this proxy; use STRING or NUMBER'));
      }
    });
  }
}
