import { list, obj } from '../../../config/access.js';
import { configError } from '../../../config/config-error.js';
import { typeNameOfUrl } from '../../../config/wkt.js';
import type { ExtensionDescriptor, TracerDescriptor } from '../../descriptor.js';
import { OpenTelemetryTracer } from './opentelemetry.js';

/** envoy.tracers.opentelemetry and its resource detectors: W3C trace context, spans over OTLP (./opentelemetry.ts). */

const DETECTORS = [
  'envoy.extensions.tracers.opentelemetry.resource_detectors.v3.EnvironmentResourceDetectorConfig',
  'envoy.extensions.tracers.opentelemetry.resource_detectors.v3.StaticConfigResourceDetectorConfig',
];

export const extensions: readonly (TracerDescriptor | ExtensionDescriptor)[] = [
  {
    name: 'envoy.tracers.opentelemetry',
    category: 'envoy.tracers',
    typeName: 'envoy.config.trace.v3.OpenTelemetryConfig',
    description: 'OpenTelemetry tracing (W3C trace context), spans over OTLP gRPC or HTTP',
    deprecatedNames: [],
    fields: { 'envoy.config.trace.v3.OpenTelemetryConfig': ['grpc_service', 'http_service', 'service_name', 'resource_detectors'] },
    refusalReasons: {
      'envoy.config.trace.v3.OpenTelemetryConfig.sampler': 'spans are sampled by the connection manager\'s decision (and an incoming traceparent), not by a sampler extension',
    },
    validate(config, path, clusters, errors) {
      const grpc = config.grpc_service !== undefined;
      const http = config.http_service !== undefined;
      if (grpc === http) errors.push(configError('conflict', path, 'the OpenTelemetry tracer exports over one of grpc_service and http_service'));
      const cluster = grpc ? obj(obj(config.grpc_service).envoy_grpc).cluster_name : http ? obj(obj(config.http_service).http_uri).cluster : undefined;
      const field = grpc ? 'grpc_service.envoy_grpc.cluster_name' : 'http_service.http_uri.cluster';
      if ((grpc || http) && !clusters.has(String(cluster ?? ''))) errors.push(configError('unknown_reference', `${path}.${field}`, `unknown cluster '${String(cluster ?? '')}'`));
      list(config.resource_detectors).forEach((d, i) => {
        const t = typeNameOfUrl(String(obj(d.typed_config)['@type'] ?? ''));
        if (!DETECTORS.includes(t)) errors.push(configError('unsupported_extension', `${path}.resource_detectors[${i}]`, `resource detector '${String(d.name ?? '')}' (${t}) is not supported (the environment and static_config detectors are)`));
      });
    },
    create: (config, services) => new OpenTelemetryTracer(config, services.clusters),
  },
  {
    name: 'envoy.tracers.opentelemetry.resource_detectors.environment',
    category: 'envoy.tracers.opentelemetry.resource_detectors',
    typeName: DETECTORS[0]!,
    description: 'OpenTelemetry resource attributes from OTEL_RESOURCE_ATTRIBUTES',
    deprecatedNames: [],
    fields: { [DETECTORS[0]!]: [] },
  },
  {
    name: 'envoy.tracers.opentelemetry.resource_detectors.static_config',
    category: 'envoy.tracers.opentelemetry.resource_detectors',
    typeName: DETECTORS[1]!,
    description: 'OpenTelemetry resource attributes from the configuration',
    deprecatedNames: [],
    fields: { [DETECTORS[1]!]: ['attributes'] },
  },
];
