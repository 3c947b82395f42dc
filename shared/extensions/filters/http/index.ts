/**
 * The HTTP filters, each in a folder of its own (a descriptor beside its code and its unit
 * test): one line each. The registry (../../registry.ts) finds them by name and type URL.
 */
export { extensions as buffer } from './buffer/descriptor.js';
export { extensions as compressor } from './compressor/descriptor.js';
export { extensions as cors } from './cors/descriptor.js';
export { extensions as csrf } from './csrf/descriptor.js';
export { extensions as decompressor } from './decompressor/descriptor.js';
export { extensions as extAuthz } from './ext-authz/descriptor.js';
export { extensions as fault } from './fault/descriptor.js';
export { extensions as grpcWeb } from './grpc-web/descriptor.js';
export { extensions as healthCheck } from './health-check/descriptor.js';
export { extensions as headerToMetadata } from './header-to-metadata/descriptor.js';
export { extensions as localRateLimit } from './local-ratelimit/descriptor.js';
export { extensions as lua } from './lua/descriptor.js';
export { extensions as rateLimit } from './ratelimit/descriptor.js';
export { extensions as rbac } from './rbac/descriptor.js';
export { extensions as router } from './router/descriptor.js';
export { extensions as tap } from './tap/descriptor.js';
