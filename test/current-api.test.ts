// The schema is Envoy's current API (third_party/envoy-api, Envoy 1.37's data-plane-api): fields
// Envoy added after the API @grpc/grpc-js-xds bundles are known, so one this proxy does not
// implement is refused as "not supported by this proxy" with its path, never as an unknown field
// (which reads like the operator's typo).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { envoySchema } from '../shared/config/schema.js';
import { loadErrors, minimalBootstrap } from './helpers/bootstraps.js';

const errorsOf = loadErrors;

describe("Envoy's current API", () => {
  it('knows the messages and fields of Envoy 1.37', () => {
    const root = envoySchema();
    assert.ok(root.lookupType('envoy.config.route.v3.RouteMatch').fields.cookies);
    assert.ok(root.lookupType('envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext').fields.auto_sni_san_validation);
    assert.ok(root.lookupType('envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit').fields.rate_limits);
    assert.equal(root.lookupType('envoy.config.bootstrap.v3.Admin').fields.allow_paths!.id, 7);
  });

  it('refuses a 1.37 field it does not implement as not supported, naming it', () => {
    const doc = minimalBootstrap() as Record<string, any>;
    doc.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].match.cookies = [{ name: 'session', string_match: { exact: 'x' } }];
    const errors = errorsOf(doc);
    assert.deepEqual(errors.map((e) => [e.code, e.path.replace(/^.*routes\[0\]/, 'routes[0]')]), [['unsupported_field', 'routes[0].match.cookies']], errors.join('\n'));
  });

  it('refuses auto_sni_san_validation and a local rate limit\'s rate_limits the same way', () => {
    const tls = minimalBootstrap() as Record<string, any>;
    tls.static_resources.clusters[0].transport_socket = {
      name: 'envoy.transport_sockets.tls',
      typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', auto_sni_san_validation: true },
    };
    assert.deepEqual(errorsOf(tls).map((e) => [e.code, e.path]), [['unsupported_field', 'static_resources.clusters[0].transport_socket.typed_config.auto_sni_san_validation']]);
    const limited = minimalBootstrap() as Record<string, any>;
    const hcm = limited.static_resources.listeners[0].filter_chains[0].filters[0].typed_config;
    hcm.http_filters.unshift({
      name: 'envoy.filters.http.local_ratelimit',
      typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit', stat_prefix: 'l', rate_limits: [{ actions: [{ request_headers: { header_name: 'x-user', descriptor_key: 'user' } }] }] },
    });
    assert.deepEqual(errorsOf(limited).map((e) => [e.code, e.path.replace(/^.*http_filters/, 'http_filters')]), [['unsupported_field', 'http_filters[0].typed_config.rate_limits']]);
  });
});
