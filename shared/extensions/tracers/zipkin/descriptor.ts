import { configError } from '../../../config/config-error.js';
import type { TracerDescriptor } from '../../descriptor.js';
import { ZipkinTracer } from './zipkin.js';

/** envoy.tracers.zipkin: B3 propagation, spans posted to a collector cluster (./zipkin.ts). */
export const extensions: readonly TracerDescriptor[] = [
  {
    name: 'envoy.tracers.zipkin',
    category: 'envoy.tracers',
    typeName: 'envoy.config.trace.v3.ZipkinConfig',
    description: 'Zipkin tracing (B3 headers), spans reported over HTTP',
    deprecatedNames: ['envoy.zipkin'],
    fields: {
      'envoy.config.trace.v3.ZipkinConfig': ['collector_cluster', 'collector_endpoint', 'trace_id_128bit', 'shared_span_context', 'collector_endpoint_version', 'collector_hostname'],
    },
    refusalReasons: { 'envoy.config.trace.v3.ZipkinConfig.split_spans_for_request': 'deprecated in Envoy; spans are not split here' },
    validate(config, path, clusters, errors) {
      const cluster = String(config.collector_cluster ?? '');
      if (!clusters.has(cluster)) errors.push(configError('unknown_reference', `${path}.collector_cluster`, `envoy.tracers.zipkin: unknown cluster '${cluster}'`));
      const version = config.collector_endpoint_version;
      if (version !== 'HTTP_JSON' && version !== 'HTTP_PROTO') {
        errors.push(configError('unsupported', `${path}.collector_endpoint_version`, `set HTTP_JSON or HTTP_PROTO (${version === 'GRPC' ? 'GRPC is not implemented, as in Envoy' : 'the default is not usable, as in Envoy'})`));
      }
    },
    create: (config, services) => new ZipkinTracer(config, services.clusters, { serviceName: services.node.cluster, ip: services.localAddress }),
  },
];
