/** The overload manager's resource monitors, each in a folder of its own: one line each. The registry (../registry.ts) finds them. */
export { extensions as fixedHeap } from './fixed-heap/descriptor.js';
export { extensions as downstreamConnections } from './downstream-connections/descriptor.js';
export { extensions as injectedResource } from './injected-resource/descriptor.js';
