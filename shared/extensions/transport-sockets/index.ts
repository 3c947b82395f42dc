/** The transport sockets, each in a folder of its own: one line each. The registry (../registry.ts) finds them. */
export { extensions as rawBuffer } from './raw-buffer/descriptor.js';
export { extensions as tls } from './tls/descriptor.js';
export { extensions as upstreamProxyProtocol } from './proxy-protocol/descriptor.js';
