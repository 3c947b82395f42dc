import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extensions } from './descriptor.js';
import { isTracer, type TracerDescriptor } from '../../descriptor.js';
import { OTLP_EXPORT_METHOD, otlpType } from '../../../tracing/otlp.js';
import { FakeClusters } from '../../../../test/helpers/fake-clusters.js';
import type { ConfigError } from '../../../config/config-error.js';

/**
 * envoy.tracers.opentelemetry alone (Envoy's opentelemetry tracer tests): W3C trace context in
 * and out, an invalid traceparent making a span that goes nowhere, and a batch exported over OTLP
 * gRPC as one ExportTraceServiceRequest with the configured resource.
 */

const otel = extensions.find((e): e is TracerDescriptor => isTracer(e))!;
const GRPC = { grpc_service: { envoy_grpc: { cluster_name: 'otel' } }, service_name: 'front', resource_detectors: [{ name: 'static', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.tracers.opentelemetry.resource_detectors.v3.StaticConfigResourceDetectorConfig', attributes: { team: 'edge' } } }] };
const services = (clusters: FakeClusters) => ({ clusters, node: { id: 'n1', cluster: 'front' }, localAddress: '10.0.0.1' });

describe('the OpenTelemetry tracer', () => {
  it('exports over one of grpc_service and http_service, to a known cluster, with the detectors it has', () => {
    const errors: ConfigError[] = [];
    otel.validate!({}, 't', new Set(), errors);
    otel.validate!({ ...GRPC, grpc_service: { envoy_grpc: { cluster_name: 'nowhere' } }, resource_detectors: [{ name: 'd', typed_config: { '@type': 'type.googleapis.com/acme.Detector' } }] }, 'u', new Set(['otel']), errors);
    assert.deepEqual(errors.map((e) => [e.code, e.path]), [
      ['conflict', 't'],
      ['unknown_reference', 'u.grpc_service.envoy_grpc.cluster_name'],
      ['unsupported_extension', 'u.resource_detectors[0]'],
    ]);
  });

  it('continues an incoming traceparent and passes tracestate on; an invalid one makes a span that is neither reported nor propagated', () => {
    const tracer = otel.create(GRPC, services(new FakeClusters(['otel'])));
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const span = tracer.startSpan({ traceparent: `00-${traceId}-00f067aa0ba902b7-01`, tracestate: 'vendor=x' }, 'ingress', 'SERVER', false);
    const headers: Record<string, string> = {};
    tracer.inject(tracer.childSpan(span, 'egress'), headers);
    assert.match(headers.traceparent!, new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    assert.equal(headers.tracestate, 'vendor=x');
    const invalid = tracer.startSpan({ traceparent: '00-zz-00-01' }, 'ingress', 'SERVER', true);
    const none: Record<string, string> = {};
    tracer.inject(invalid, none);
    assert.deepEqual(none, {});
  });

  it('exports five finished spans as one ExportTraceServiceRequest over gRPC, with its resource', () => {
    const clusters = new FakeClusters(['otel']);
    const tracer = otel.create(GRPC, services(clusters));
    for (let i = 0; i < 5; i++) tracer.startSpan({}, `op-${i}`, 'SERVER', true).finish();
    assert.equal(clusters.grpc.length, 1);
    const { cluster, method, message } = clusters.grpc[0]!;
    assert.deepEqual([cluster, method], ['otel', OTLP_EXPORT_METHOD]);
    const request = otlpType('ExportTraceServiceRequest').toObject(otlpType('ExportTraceServiceRequest').decode(message)) as {
      resourceSpans: { resource: { attributes: { key: string; value: { stringValue: string } }[] }; scopeSpans: { spans: { name: string }[] }[] }[];
    };
    const attributes = Object.fromEntries(request.resourceSpans[0]!.resource.attributes.map((a) => [a.key, a.value.stringValue]));
    assert.equal(attributes['service.name'], 'front');
    assert.equal(attributes.team, 'edge');
    assert.deepEqual(request.resourceSpans[0]!.scopeSpans[0]!.spans.map((s) => s.name), ['op-0', 'op-1', 'op-2', 'op-3', 'op-4']);
  });
});
