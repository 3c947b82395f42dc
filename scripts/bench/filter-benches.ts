// The HTTP filters scripts/bench/proxy.ts measures one at a time, each with the configuration it runs under.
/**
 * HTTP filters measured one at a time (BENCH_ONLY=<name>): each configured so that it does its
 * work on every request of the load and lets it through (a CORS policy for requests without
 * Origin, a compressor for clients that accept no encoding, a rate limit whose bucket never runs
 * out, a fault for 0% of requests, CSRF on GETs, RBAC allowing any principal by header), or
 * configured but not triggered by the load (its `what` says which); ext_authz also with a check per request.
 */
export const FILTER_BENCHES: Record<string, { filter: string; what: string; config: object; perRoute?: object }> = {
  cors: {
    filter: 'envoy.filters.http.cors',
    what: 'not triggered: no Origin',
    config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors' },
    perRoute: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.CorsPolicy', allow_origin_string_match: [{ exact: 'https://app.example' }] },
  },
  compressor: {
    filter: 'envoy.filters.http.compressor',
    what: 'not triggered: no Accept-Encoding',
    config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.compressor.v3.Compressor', compressor_library: { name: 'text', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.compression.gzip.compressor.v3.Gzip' } } },
  },
  local_ratelimit: {
    filter: 'envoy.filters.http.local_ratelimit',
    what: 'a token taken from the tree-wide bucket per request',
    config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit',
      stat_prefix: 'bench',
      token_bucket: { max_tokens: 1_000_000_000, tokens_per_fill: 1_000_000_000, fill_interval: '1s' },
      filter_enabled: { default_value: { numerator: 100 } },
      filter_enforced: { default_value: { numerator: 100 } },
    },
  },
  fault: {
    filter: 'envoy.filters.http.fault',
    what: 'an abort for 0% of requests',
    config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault', abort: { http_status: 503, percentage: { numerator: 0 } } },
  },
  csrf: {
    filter: 'envoy.filters.http.csrf',
    what: 'enabled; GETs pass',
    config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.csrf.v3.CsrfPolicy', filter_enabled: { default_value: { numerator: 100 } } },
  },
  lua: {
    filter: 'envoy.filters.http.lua',
    what: 'a script reads one header and adds one',
    config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua',
      default_source_code: { inline_string: 'function envoy_on_request(h) local v = h:headers():get("user-agent") or "none"; h:headers():add("x-seen", v) end' },
    },
  },
  header_to_metadata: {
    filter: 'envoy.filters.http.header_to_metadata',
    what: 'not triggered: the header is absent',
    config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.header_to_metadata.v3.Config',
      request_rules: [{ header: 'x-tenant', on_header_present: { metadata_namespace: 'tenant', key: 'id', type: 'STRING' } }],
    },
  },
  buffer: {
    filter: 'envoy.filters.http.buffer',
    what: 'GETs: no body to wait for',
    config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.buffer.v3.Buffer', max_request_bytes: 1048576 },
  },
  grpc_web: {
    filter: 'envoy.filters.http.grpc_web',
    what: 'not triggered: not gRPC-Web',
    config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.grpc_web.v3.GrpcWeb' },
  },
  decompressor: {
    filter: 'envoy.filters.http.decompressor',
    what: 'not triggered: nothing encoded',
    config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.decompressor.v3.Decompressor',
      decompressor_library: { name: 'gzip', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.compression.gzip.decompressor.v3.Gzip' } },
    },
  },
  ratelimit: {
    filter: 'envoy.filters.http.ratelimit',
    what: 'not triggered: the route has no rate_limits',
    config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit',
      domain: 'bench',
      rate_limit_service: { grpc_service: { envoy_grpc: { cluster_name: 'upstream' } }, transport_api_version: 'V3' },
    },
  },
  ext_authz_off: {
    filter: 'envoy.filters.http.ext_authz',
    what: 'not triggered: filter_enabled 0%',
    config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz',
      http_service: { server_uri: { uri: 'http://upstream', cluster: 'upstream', timeout: '1s' } },
      filter_enabled: { default_value: { numerator: 0 } },
    },
  },
  ext_authz: {
    filter: 'envoy.filters.http.ext_authz',
    what: 'an HTTP check per request (the bench upstream allows)',
    config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz',
      http_service: { server_uri: { uri: 'http://upstream', cluster: 'upstream', timeout: '1s' } },
    },
  },
  rbac: {
    filter: 'envoy.filters.http.rbac',
    what: 'one ALLOW policy matched by method',
    config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC',
      rules: { action: 'ALLOW', policies: { gets: { permissions: [{ header: { name: ':method', string_match: { exact: 'GET' } } }], principals: [{ any: true }] } } },
    },
  },
};
