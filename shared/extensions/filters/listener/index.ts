/** The listener filters, each in a folder of its own: one line each. The registry (../../registry.ts) finds them. */
export { extensions as tlsInspector } from './tls-inspector/descriptor.js';
export { extensions as proxyProtocol } from './proxy-protocol/descriptor.js';
