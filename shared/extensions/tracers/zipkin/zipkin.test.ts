import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extensions } from './descriptor.js';
import { FakeClusters } from '../../../../test/helpers/fake-clusters.js';
import { counter } from '../../../../test/helpers/filter-harness.js';
import type { ConfigError } from '../../../config/config-error.js';

/**
 * envoy.tracers.zipkin alone (Envoy's zipkin_tracer_impl_test): B3 in and out, the shared span
 * context, and a batch of spans posted to the collector cluster as Zipkin's JSON v2.
 */

const zipkin = extensions[0]!;
const CONFIG = { collector_cluster: 'zipkin', collector_endpoint: '/api/v2/spans', collector_endpoint_version: 'HTTP_JSON' };
const services = (clusters: FakeClusters) => ({ clusters, node: { id: 'n1', cluster: 'front' }, localAddress: '10.0.0.1' });

describe('the Zipkin tracer', () => {
  it('refuses an unknown collector cluster and an endpoint version it cannot send, naming the fields', () => {
    const errors: ConfigError[] = [];
    zipkin.validate!({ ...CONFIG, collector_cluster: 'nowhere', collector_endpoint_version: 'GRPC' }, 't', new Set(['zipkin']), errors);
    assert.deepEqual(errors.map((e) => [e.code, e.path]), [['unknown_reference', 't.collector_cluster'], ['unsupported', 't.collector_endpoint_version']]);
  });

  it('joins an incoming B3 trace, shares the caller\'s span id on the server span, and gives a child its own', () => {
    const tracer = zipkin.create(CONFIG, services(new FakeClusters(['zipkin'])));
    const server = tracer.startSpan({ 'x-b3-traceid': 'a'.repeat(16), 'x-b3-spanid': 'b'.repeat(16), 'x-b3-sampled': '1' }, 'ingress', 'SERVER', false);
    assert.deepEqual([server.context.traceId, server.context.spanId, server.context.shared, server.context.sampled], ['a'.repeat(16), 'b'.repeat(16), true, true], 'the incoming sampled flag wins');
    const child = tracer.childSpan(server, 'egress');
    const headers: Record<string, string> = {};
    tracer.inject(child, headers);
    assert.equal(headers['x-b3-traceid'], 'a'.repeat(16));
    assert.equal(headers['x-b3-parentspanid'], 'b'.repeat(16));
    assert.notEqual(headers['x-b3-spanid'], 'b'.repeat(16));
    assert.equal(headers['x-b3-sampled'], '1');
  });

  it('posts a batch of finished spans to the collector as JSON v2 once min_flush_spans (5) are in', async () => {
    const clusters = new FakeClusters(['zipkin'], () => ({ status: 202, headers: {}, body: Buffer.alloc(0) }));
    const tracer = zipkin.create(CONFIG, services(clusters));
    const before = counter('tracing.zipkin.reports_sent');
    for (let i = 0; i < 5; i++) {
      const span = tracer.startSpan({}, `op-${i}`, 'SERVER', true);
      span.setTag('http.status_code', '200');
      span.finish();
    }
    assert.equal(clusters.sent.length, 1);
    const { rq } = clusters.sent[0]!;
    assert.deepEqual([rq.method, rq.path], ['POST', '/api/v2/spans']);
    assert.deepEqual(rq.headers.slice(0, 4), ['host', 'zipkin', 'content-type', 'application/json']);
    const spans = JSON.parse(rq.body!.toString('utf8')) as { name: string; kind: string; localEndpoint: { serviceName: string; ipv4: string }; tags: Record<string, string> }[];
    assert.deepEqual(spans.map((s) => s.name), ['op-0', 'op-1', 'op-2', 'op-3', 'op-4']);
    assert.deepEqual([spans[0]!.kind, spans[0]!.localEndpoint, spans[0]!.tags['http.status_code']], ['SERVER', { serviceName: 'front', ipv4: '10.0.0.1' }, '200']);
    await new Promise((r) => setImmediate(r));
    assert.equal(counter('tracing.zipkin.reports_sent') - before, 1, 'a 202 counts as sent');
  });
});
