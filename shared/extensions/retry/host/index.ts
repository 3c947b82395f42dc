/** The retry host predicates, each in a folder of its own: one line each (../lookup.ts finds them). */
export { extensions as omitCanaryHosts } from './omit-canary-hosts/descriptor.js';
export { extensions as previousHosts } from './previous-hosts/descriptor.js';
