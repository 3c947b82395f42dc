/**
 * A route configuration and router_check_tool tests of it, in the shapes Envoy's tool's own
 * tests use (require_tls ALL and EXTERNAL_ONLY, prefix and host rewrites, gRPC and header
 * matches, a runtime-gated route, weighted clusters picked by random value, a cluster named by a
 * header, direct responses, redirects, header mutations with a formatter). `proxy route-check`
 * runs them; /route_explain must say the same of each.
 */

export const CLUSTERS = ['www', 'api', 'api-grpc', 'shop-canary', 'shop-a', 'shop-b', 'debug', 'legacy'];

export const ROUTES = {
  name: 'local',
  virtual_hosts: [
    { name: 'www', domains: ['www.example.com'], require_tls: 'ALL', routes: [{ match: { prefix: '/' }, route: { cluster: 'www' } }] },
    {
      name: 'api',
      domains: ['api.example.com', '*.api.example.com'],
      require_tls: 'EXTERNAL_ONLY',
      retry_policy: { retry_on: '5xx', num_retries: 2 },
      routes: [
        { name: 'rewrite', match: { prefix: '/old/' }, route: { cluster: 'api', prefix_rewrite: '/new/', host_rewrite_literal: 'backend.internal', timeout: '2s' } },
        { name: 'regex', match: { safe_regex: { regex: '/v[0-9]+/users/[0-9]+' } }, route: { cluster: 'api', regex_rewrite: { pattern: { regex: '^/v[0-9]+/' }, substitution: '/' } } },
        { name: 'grpc', match: { prefix: '/', grpc: {} }, route: { cluster: 'api-grpc' } },
        { match: { prefix: '/' }, route: { cluster: 'api' } },
      ],
    },
    // As Envoy's ClusterHeader test: the cluster is named by the Host.
    { name: 'by-host', domains: ['cluster.example.com'], routes: [{ match: { prefix: '/' }, route: { cluster_header: ':authority' } }] },
    {
      name: 'default',
      domains: ['*'],
      response_headers_to_add: [{ header: { key: 'x-served-by', value: 'default' } }],
      routes: [
        { name: 'canary', match: { prefix: '/shop', runtime_fraction: { default_value: { numerator: 0 }, runtime_key: 'shop.canary' } }, route: { cluster: 'shop-canary' } },
        { name: 'split', match: { prefix: '/shop' }, route: { weighted_clusters: { clusters: [{ name: 'shop-a', weight: 30 }, { name: 'shop-b', weight: 70 }] } } },
        { name: 'ping', match: { path: '/ping' }, direct_response: { status: 200, body: { inline_string: 'pong' } } },
        { name: 'moved', match: { prefix: '/moved' }, redirect: { host_redirect: 'new.example.com', path_redirect: '/here', response_code: 'FOUND' } },
        { name: 'upgrade', match: { prefix: '/insecure' }, redirect: { https_redirect: true, strip_query: true } },
        { name: 'legacy', match: { path: '/Legacy', case_sensitive: false, headers: [{ name: 'x-old', present_match: true }] }, route: { cluster: 'legacy' } },
        {
          name: 'debug',
          match: { prefix: '/', headers: [{ name: 'x-debug', string_match: { exact: '1' } }] },
          route: { cluster: 'debug' },
          request_headers_to_add: [{ header: { key: 'x-client-ip', value: '%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%' } }],
        },
      ],
    },
  ],
};

export interface CheckInput {
  authority: string;
  path: string;
  method: string;
  ssl?: boolean;
  internal?: boolean;
  random_value?: number;
  runtime?: string;
  additional_request_headers?: { key: string; value: string }[];
}

export interface CheckCase {
  test_name: string;
  input: CheckInput;
  validate: Record<string, unknown>;
}

export const CASES: CheckCase[] = [
  { test_name: 'www without TLS is redirected', input: { authority: 'www.example.com', path: '/a?b', method: 'GET' }, validate: { cluster_name: '', path_redirect: 'https://www.example.com/a?b', code_redirect: 301 } },
  { test_name: 'www over TLS', input: { authority: 'www.example.com', path: '/a', method: 'GET', ssl: true }, validate: { cluster_name: 'www', virtual_host_name: 'www', path_redirect: '', code_redirect: 0 } },
  { test_name: 'api from outside without TLS', input: { authority: 'api.example.com', path: '/x', method: 'GET' }, validate: { path_redirect: 'https://api.example.com/x' } },
  {
    test_name: 'api rewrites, internal',
    input: { authority: 'api.example.com', path: '/old/x?y=1', method: 'GET', internal: true },
    validate: { cluster_name: 'api', virtual_host_name: 'api', path_rewrite: '/new/x?y=1', host_rewrite: 'backend.internal', request_header_matches: [{ name: 'x-envoy-original-path', string_match: { exact: '/old/x?y=1' } }] },
  },
  { test_name: 'api regex rewrite', input: { authority: 'eu.api.example.com', path: '/v2/users/7', method: 'GET', ssl: true }, validate: { cluster_name: 'api', path_rewrite: '/users/7', host_rewrite: 'eu.api.example.com' } },
  {
    test_name: 'api gRPC',
    input: { authority: 'eu.api.example.com', path: '/pkg.Svc/Call', method: 'POST', ssl: true, additional_request_headers: [{ key: 'content-type', value: 'application/grpc+proto' }] },
    validate: { cluster_name: 'api-grpc', path_rewrite: '/pkg.Svc/Call' },
  },
  { test_name: 'canary on', input: { authority: 'shop.example.com', path: '/shop', method: 'GET', runtime: 'shop.canary', random_value: 0 }, validate: { cluster_name: 'shop-canary', virtual_host_name: 'default' } },
  { test_name: 'canary off by random value', input: { authority: 'shop.example.com', path: '/shop', method: 'GET', runtime: 'shop.canary', random_value: 1 }, validate: { cluster_name: 'shop-a' } },
  { test_name: 'split first', input: { authority: 'shop.example.com', path: '/shop/cart', method: 'GET', random_value: 129 }, validate: { cluster_name: 'shop-a' } },
  { test_name: 'split second', input: { authority: 'shop.example.com', path: '/shop/cart', method: 'GET', random_value: 130 }, validate: { cluster_name: 'shop-b' } },
  {
    test_name: 'ping answers itself',
    input: { authority: 'shop.example.com', path: '/ping', method: 'GET' },
    validate: {
      cluster_name: '',
      virtual_host_name: '',
      code_redirect: 200,
      path_redirect: 'http://shop.example.com/ping',
      response_header_matches: [
        { name: 'content-length', range_match: { start: 4, end: 5 } },
        { name: 'content-type', string_match: { exact: 'text/plain' } },
        { name: 'x-served-by', string_match: { exact: 'default' } },
      ],
    },
  },
  { test_name: 'moved', input: { authority: 'shop.example.com', path: '/moved?q=1', method: 'GET' }, validate: { code_redirect: 302, path_redirect: 'http://new.example.com/here?q=1' } },
  { test_name: 'moved over TLS keeps https', input: { authority: 'shop.example.com', path: '/moved', method: 'GET', ssl: true }, validate: { code_redirect: 302, path_redirect: 'https://new.example.com/here' } },
  { test_name: 'to https', input: { authority: 'shop.example.com:80', path: '/insecure/x?q=1', method: 'GET' }, validate: { code_redirect: 301, path_redirect: 'https://shop.example.com/insecure/x' } },
  { test_name: 'legacy, any case', input: { authority: 'shop.example.com', path: '/LEGACY', method: 'GET', additional_request_headers: [{ key: 'x-old', value: '' }] }, validate: { cluster_name: 'legacy' } },
  {
    test_name: 'debug',
    input: { authority: 'shop.example.com', path: '/x', method: 'GET', additional_request_headers: [{ key: 'x-debug', value: '1' }] },
    validate: { cluster_name: 'debug', request_header_matches: [{ name: 'x-client-ip', string_match: { exact: '127.0.0.1' } }], response_header_matches: [{ name: 'x-served-by', present_match: true }] },
  },
  { test_name: 'cluster named by the Host', input: { authority: 'cluster.example.com', path: '/', method: 'GET' }, validate: { cluster_name: 'cluster.example.com', virtual_host_name: 'by-host' } },
  { test_name: 'no route', input: { authority: 'shop.example.com', path: '/x', method: 'GET' }, validate: { cluster_name: '', virtual_host_name: '', path_redirect: '', code_redirect: 0 } },
];
