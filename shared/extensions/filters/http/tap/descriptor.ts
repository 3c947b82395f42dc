import type { HttpFilterDescriptor } from '../../../descriptor.js';
import { tapFactory } from './tap.js';

/** Copies exchanges that match a POST /tap session to the admin, from its place in the chain. */
export const extensions: readonly HttpFilterDescriptor[] = [
  {
    name: 'envoy.filters.http.tap',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.tap.v3.Tap',
    description: 'copies matching exchanges to the admin\'s /tap streams',
    deprecatedNames: [],
    fields: {
      'envoy.extensions.filters.http.tap.v3.Tap': ['common_config'],
      'envoy.extensions.common.tap.v3.CommonExtensionConfig': ['admin_config'],
    },
    refusalReasons: {
      'envoy.extensions.common.tap.v3.CommonExtensionConfig.static_config': 'only taps driven through the admin interface are supported; use admin_config and POST /tap',
      'envoy.extensions.filters.http.tap.v3.Tap.record_headers_received_time': 'traces carry no header timestamps',
      'envoy.extensions.filters.http.tap.v3.Tap.record_downstream_connection': 'traces carry no connection addresses',
    },
    create: (name, config) => tapFactory(name, config),
  },
];
