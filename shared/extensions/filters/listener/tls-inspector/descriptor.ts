import type { ListenerFilterDescriptor } from '../../../descriptor.js';
import { tlsInspector } from './tls-inspector.js';

export const extensions: readonly ListenerFilterDescriptor[] = [
  {
    name: 'envoy.filters.listener.tls_inspector',
    category: 'envoy.filters.listener',
    typeName: 'envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector',
    description: 'reads the TLS ClientHello (SNI, ALPN) to choose a filter chain',
    deprecatedNames: ['envoy.listener.tls_inspector'],
    fields: { 'envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector': [] },
    create: () => tlsInspector(),
  },
];
