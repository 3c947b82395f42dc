import { checkLibraryKind } from '../../../compression/library-kind.js';
import type { ExtensionDescriptor, HttpFilterDescriptor } from '../../../descriptor.js';
import { compressorFactory } from './compressor.js';

/** Responses compressed for clients that accept them, with one of the libraries below (Node's zlib). */
export const extensions: readonly (ExtensionDescriptor | HttpFilterDescriptor)[] = [
  {
    name: 'envoy.filters.http.compressor',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.compressor.v3.Compressor',
    perRouteTypeName: 'envoy.extensions.filters.http.compressor.v3.CompressorPerRoute',
    description: 'compresses responses (gzip, brotli) the client accepts',
    deprecatedNames: [],
    fields: {
      'envoy.extensions.filters.http.compressor.v3.Compressor': ['compressor_library', 'response_direction_config'],
      'envoy.extensions.filters.http.compressor.v3.Compressor.ResponseDirectionConfig': ['common_config', 'disable_on_etag_header', 'remove_accept_encoding_header'],
      'envoy.extensions.filters.http.compressor.v3.CompressorOverrides': ['response_direction_config'],
    },
    refusalReasons: {
      'envoy.extensions.filters.http.compressor.v3.Compressor.request_direction_config': 'request bodies are not compressed; response_direction_config is',
      'envoy.extensions.filters.http.compressor.v3.Compressor.choose_first': 'each compressor filter decides alone, in filter order',
      'envoy.extensions.filters.http.compressor.v3.Compressor.content_length': 'deprecated: use response_direction_config.common_config.min_content_length',
      'envoy.extensions.filters.http.compressor.v3.Compressor.content_type': 'deprecated: use response_direction_config.common_config.content_type',
      'envoy.extensions.filters.http.compressor.v3.Compressor.disable_on_etag_header': 'deprecated: use response_direction_config.disable_on_etag_header',
      'envoy.extensions.filters.http.compressor.v3.Compressor.remove_accept_encoding_header': 'deprecated: use response_direction_config.remove_accept_encoding_header',
      'envoy.extensions.filters.http.compressor.v3.Compressor.runtime_enabled': 'deprecated: use response_direction_config.common_config.enabled',
    },
    create: (name, config, ctx) => compressorFactory(name, config, ctx.statPrefix),
    validate: (config, path, errors) => checkLibraryKind(config.compressor_library, 'compressor', `${path}.compressor_library`, errors),
  },
  {
    name: 'envoy.compression.gzip.compressor',
    category: 'envoy.compression.compressor',
    typeName: 'envoy.extensions.compression.gzip.compressor.v3.Gzip',
    description: 'gzip for the compressor filter (Node\'s zlib)',
    deprecatedNames: [],
  },
  {
    name: 'envoy.compression.brotli.compressor',
    category: 'envoy.compression.compressor',
    typeName: 'envoy.extensions.compression.brotli.compressor.v3.Brotli',
    description: 'brotli for the compressor filter (Node\'s zlib)',
    deprecatedNames: [],
  },
];

