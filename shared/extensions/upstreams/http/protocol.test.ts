import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clusterConnectionLimits, clusterHttp2Options, clusterSpeaksHttp2, UPSTREAM_HTTP_OPTIONS } from './protocol.js';
import { loadErrors, minimalBootstrap } from '../../../../test/helpers/bootstraps.js';

/** A cluster's HttpProtocolOptions alone: the protocol it asks for, its connections' limits, and what the loader refuses of it. */

const withOptions = (options: object, rest: object = {}) => ({ name: 'c', typed_extension_protocol_options: { [UPSTREAM_HTTP_OPTIONS]: { '@type': `type.googleapis.com/${UPSTREAM_HTTP_OPTIONS}`, ...options } }, ...rest });

describe('upstream HttpProtocolOptions', () => {
  it('asks for HTTP/2 with explicit_http_config.http2_protocol_options, or the deprecated cluster field', () => {
    assert.equal(clusterSpeaksHttp2({ name: 'c' }), false);
    assert.equal(clusterSpeaksHttp2(withOptions({ explicit_http_config: { http_protocol_options: {} } })), false);
    assert.equal(clusterSpeaksHttp2(withOptions({ explicit_http_config: { http2_protocol_options: { max_concurrent_streams: 10 } } })), true);
    assert.deepEqual(clusterHttp2Options(withOptions({ explicit_http_config: { http2_protocol_options: { max_concurrent_streams: 10 } } })), { max_concurrent_streams: 10 });
    assert.equal(clusterSpeaksHttp2({ name: 'c', http2_protocol_options: {} }), true);
  });

  it("takes the connections' limits from its common_http_protocol_options (then the cluster's deprecated fields), with Envoy's defaults", () => {
    assert.deepEqual(clusterConnectionLimits({ name: 'c' }), { idleMs: 3_600_000, maxRequests: 0, maxConnectionMs: 0, maxStreamMs: 0 });
    assert.deepEqual(clusterConnectionLimits(withOptions({ common_http_protocol_options: { idle_timeout: '5s', max_requests_per_connection: 3, max_connection_duration: '60s', max_stream_duration: '2s' } })), { idleMs: 5000, maxRequests: 3, maxConnectionMs: 60_000, maxStreamMs: 2000 });
    assert.deepEqual(clusterConnectionLimits({ name: 'c', max_requests_per_connection: 7 }), { idleMs: 3_600_000, maxRequests: 7, maxConnectionMs: 0, maxStreamMs: 0 });
  });

  it('is the only protocol options extension: another name is refused, naming the key', () => {
    const doc = minimalBootstrap() as { static_resources: { clusters: Record<string, unknown>[] } };
    doc.static_resources.clusters[0]!.typed_extension_protocol_options = { 'envoy.extensions.upstreams.tcp.v3.TcpProtocolOptions': { '@type': 'type.googleapis.com/envoy.extensions.upstreams.tcp.v3.TcpProtocolOptions' } };
    const errors = loadErrors(doc);
    assert.ok(errors.some((e) => e.code === 'unsupported_extension' && e.path === 'static_resources.clusters[0].typed_extension_protocol_options["envoy.extensions.upstreams.tcp.v3.TcpProtocolOptions"]'), errors.join('\n'));
  });
});
