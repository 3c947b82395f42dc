import type { ExtensionDescriptor, HttpFilterDescriptor } from '../../../descriptor.js';
import { faultFactory } from './fault.js';

/** Delays and aborts injected; per route too. */
export const extensions: readonly (ExtensionDescriptor | HttpFilterDescriptor)[] = [
  {
    name: 'envoy.filters.http.fault',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.fault.v3.HTTPFault',
    description: 'injects delays and aborts, by share of requests, header or runtime',
    deprecatedNames: ['envoy.fault'],
    fields: {
      'envoy.extensions.filters.http.fault.v3.HTTPFault': [
        'delay', 'abort', 'upstream_cluster', 'headers', 'downstream_nodes', 'max_active_faults', 'delay_percent_runtime', 'abort_percent_runtime',
        'delay_duration_runtime', 'abort_http_status_runtime', 'max_active_faults_runtime',
      ],
    },
    refusalReasons: {
      'envoy.extensions.filters.http.fault.v3.HTTPFault.response_rate_limit': 'response rate limiting is not implemented; delays and aborts are',
      'envoy.extensions.filters.http.fault.v3.HTTPFault.abort_grpc_status_runtime': 'the gRPC status of an abort is not read from the runtime',
      'envoy.extensions.filters.http.fault.v3.HTTPFault.disable_downstream_cluster_stats': 'per-downstream-cluster figures are always kept',
      'envoy.extensions.filters.http.fault.v3.HTTPFault.filter_metadata': 'the fault filter does not read dynamic metadata',
    },
    create: (name, config, ctx) => faultFactory(name, config, ctx.statPrefix),
  },
];
