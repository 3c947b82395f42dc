/** The network filters, each in a folder of its own: one line each. The registry (../../registry.ts) finds them. */
export { extensions as httpConnectionManager } from './http-connection-manager/descriptor.js';
export { extensions as tcpProxy } from './tcp-proxy/descriptor.js';
