import type { ExtensionDescriptor, HttpFilterDescriptor } from '../../../descriptor.js';
import { bufferFactory } from './buffer.js';

/** Requests held until their body has arrived whole; per route too. */
export const extensions: readonly (ExtensionDescriptor | HttpFilterDescriptor)[] = [
  {
    name: 'envoy.filters.http.buffer',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.buffer.v3.Buffer',
    perRouteTypeName: 'envoy.extensions.filters.http.buffer.v3.BufferPerRoute',
    description: 'reads the whole request body before it goes on (413 past the limit)',
    deprecatedNames: ['envoy.buffer'],
    create: (name, config, ctx) => bufferFactory(name, config, ctx.statPrefix),
  },
];
