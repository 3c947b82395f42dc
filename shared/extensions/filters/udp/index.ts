/** The UDP listener filters, each in a folder of its own: one line each. The registry (../../registry.ts) finds them. */
export { extensions as udpProxy } from './udp-proxy/descriptor.js';
