/** The original IP detection extensions, each in a folder of its own: one line each. The registry (../../registry.ts) and ./lookup.ts find them. */
export { extensions as customHeader } from './custom-header/descriptor.js';
export { extensions as xff } from './xff/descriptor.js';
