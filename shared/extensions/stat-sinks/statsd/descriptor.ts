import type { ExtensionDescriptor } from '../../descriptor.js';

/**
 * envoy.stat_sinks.statsd and envoy.stat_sinks.dog_statsd (Envoy keeps them apart over a common
 * statsd library; here one folder holds both): statistics over UDP (statsd also over TCP), each histogram sample as it
 * is recorded (./statsd.ts, in every process) and the counters and gauges at each flush
 * (./flush.ts, in the admin process).
 */
export const extensions: readonly ExtensionDescriptor[] = [
  {
    name: 'envoy.stat_sinks.statsd',
    category: 'envoy.stats_sinks',
    typeName: 'envoy.config.metrics.v3.StatsdSink',
    description: 'statistics to a statsd server over UDP, or over TCP to a static cluster',
    deprecatedNames: ['envoy.statsd'],
    fields: { 'envoy.config.metrics.v3.StatsdSink': ['address', 'tcp_cluster_name', 'prefix'] },
  },
  {
    name: 'envoy.stat_sinks.dog_statsd',
    category: 'envoy.stats_sinks',
    typeName: 'envoy.config.metrics.v3.DogStatsdSink',
    description: 'statistics to DogStatsD, with tags',
    deprecatedNames: ['envoy.dog_statsd'],
    fields: { 'envoy.config.metrics.v3.DogStatsdSink': ['address', 'prefix', 'max_bytes_per_datagram'] },
  },
];
