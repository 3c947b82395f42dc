import { checkLibraryKind } from '../../../compression/library-kind.js';
import type { ExtensionDescriptor, HttpFilterDescriptor } from '../../../descriptor.js';
import { decompressorFactory } from './decompressor.js';

/** Request and response bodies decompressed on their way through, with one of the libraries below (Node's zlib). */
export const extensions: readonly (ExtensionDescriptor | HttpFilterDescriptor)[] = [
  {
    name: 'envoy.filters.http.decompressor',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.decompressor.v3.Decompressor',
    description: 'decompresses request and response bodies (gzip, brotli)',
    deprecatedNames: [],
    create: (name, config, ctx) => decompressorFactory(name, config, ctx.statPrefix),
    validate: (config, path, errors) => checkLibraryKind(config.decompressor_library, 'decompressor', `${path}.decompressor_library`, errors),
  },
  {
    name: 'envoy.compression.gzip.decompressor',
    category: 'envoy.compression.decompressor',
    typeName: 'envoy.extensions.compression.gzip.decompressor.v3.Gzip',
    description: 'gzip for the decompressor filter (Node\'s zlib)',
    deprecatedNames: [],
  },
  {
    name: 'envoy.compression.brotli.decompressor',
    category: 'envoy.compression.decompressor',
    typeName: 'envoy.extensions.compression.brotli.decompressor.v3.Brotli',
    description: 'brotli for the decompressor filter (Node\'s zlib)',
    deprecatedNames: [],
  },
];

