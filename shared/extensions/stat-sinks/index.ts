/**
 * The stats sinks, each in a folder of its own: one line each. The registry (../registry.ts)
 * lists them with every extension.
 */
export { extensions as hystrix } from './hystrix/descriptor.js';
export { extensions as statsd } from './statsd/descriptor.js';
