/** The DNS resolvers, each in a folder of its own: one line each. The registry (../../registry.ts) finds them. */
export { extensions as cares } from './cares/descriptor.js';
