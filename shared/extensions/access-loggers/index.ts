/**
 * The access loggers, each in a folder of its own: one line each. The registry (../registry.ts)
 * lists them with every extension; lookup.ts finds them for the code that writes access logs.
 */
export { extensions as file } from './file/descriptor.js';
export { extensions as stream } from './stream/descriptor.js';
