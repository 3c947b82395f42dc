import type { TransportSocketDescriptor } from '../../descriptor.js';
import { RAW_BUFFER } from './raw-buffer.js';

/** Plaintext: what a filter chain or a cluster speaks without a transport socket, or with this one. */
export const extensions: readonly TransportSocketDescriptor[] = [
  {
    name: 'envoy.transport_sockets.raw_buffer',
    category: 'envoy.transport_sockets.downstream',
    typeName: RAW_BUFFER,
    description: 'plaintext (the default transport socket)',
    deprecatedNames: ['raw_buffer'],
    tls: false,
  },
];
