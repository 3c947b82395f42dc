import type { ExtensionDescriptor } from '../../descriptor.js';

/**
 * envoy.stat_sinks.hystrix: the Hystrix dashboard's event stream. Its code is the admin's
 * /dashboard_event_stream endpoint (admin/endpoints/dashboard.ts): it is served, not pushed.
 */
export const extensions: readonly ExtensionDescriptor[] = [
  {
    name: 'envoy.stat_sinks.hystrix',
    category: 'envoy.stats_sinks',
    typeName: 'envoy.config.metrics.v3.HystrixSink',
    description: 'the Hystrix dashboard\'s event stream (/dashboard_event_stream)',
    deprecatedNames: [],
    fields: { 'envoy.config.metrics.v3.HystrixSink': ['num_buckets'] },
  },
];
