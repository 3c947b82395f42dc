/** The upstream protocol options, each in a folder of its own: one line each. The registry (../registry.ts) finds them. */
export { extensions as http } from './http/descriptor.js';
