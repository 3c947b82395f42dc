import type { ExtensionDescriptor } from '../../descriptor.js';

const FIXED_HEAP = 'envoy.extensions.resource_monitors.fixed_heap.v3.FixedHeapConfig';

/**
 * Envoy's fixed-heap resource monitor: the heap in use over max_heap_size_bytes. Here each
 * worker measures its own V8 heap (worker/overload.ts): a worker's actions follow its own
 * pressure, and `overload.<monitor>.pressure` is the largest of the workers'.
 */
export const extensions: readonly ExtensionDescriptor[] = [
  {
    name: 'envoy.resource_monitors.fixed_heap',
    category: 'envoy.resource_monitors',
    typeName: FIXED_HEAP,
    description: "a worker's V8 heap in use over max_heap_size_bytes, for the overload manager",
    deprecatedNames: [],
    fields: { [FIXED_HEAP]: ['max_heap_size_bytes'] },
  },
];
