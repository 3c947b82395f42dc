/**
 * The extensions that live in a folder of their own (a descriptor beside its code and its unit
 * test): one line each. The registry (registry.ts) finds them by name and type URL.
 */
export { extensions as buffer } from './filters/http/buffer/descriptor.js';
export { extensions as compressor } from './filters/http/compressor/descriptor.js';
export { extensions as cors } from './filters/http/cors/descriptor.js';
export { extensions as csrf } from './filters/http/csrf/descriptor.js';
export { extensions as decompressor } from './filters/http/decompressor/descriptor.js';
export { extensions as extAuthz } from './filters/http/ext-authz/descriptor.js';
export { extensions as fault } from './filters/http/fault/descriptor.js';
export { extensions as grpcWeb } from './filters/http/grpc-web/descriptor.js';
export { extensions as healthCheck } from './filters/http/health-check/descriptor.js';
export { extensions as headerToMetadata } from './filters/http/header-to-metadata/descriptor.js';
export { extensions as localRateLimit } from './filters/http/local-ratelimit/descriptor.js';
export { extensions as lua } from './filters/http/lua/descriptor.js';
export { extensions as rateLimit } from './filters/http/ratelimit/descriptor.js';
export { extensions as rbac } from './filters/http/rbac/descriptor.js';
