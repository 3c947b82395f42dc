/** The load-balancing policies, each in a folder of its own: one line each. The registry (../registry.ts) and ./lookup.ts find them. */
export { extensions as leastRequest } from './least-request/descriptor.js';
export { extensions as maglev } from './maglev/descriptor.js';
export { extensions as random } from './random/descriptor.js';
export { extensions as ringHash } from './ring-hash/descriptor.js';
export { extensions as roundRobin } from './round-robin/descriptor.js';
