/**
 * The tracers, each in a folder of its own: one line each. The registry (../registry.ts) finds
 * them by type; a worker makes one per configuration (worker/tracing/tracers.ts).
 */
export { extensions as opentelemetry } from './opentelemetry/descriptor.js';
export { extensions as zipkin } from './zipkin/descriptor.js';
