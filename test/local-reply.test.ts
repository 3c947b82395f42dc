import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { hcmFilter } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, stopAllProxies } from './helpers/proxy.js';

/**
 * HttpConnectionManager.local_reply_config, as Envoy applies it to the replies the proxy makes
 * itself: the first matching mapper's body, headers and status, then the body format (a mapper's
 * override, else the config's), with %LOCAL_REPLY_BODY% and the other access-log commands.
 */

const tmp = tempDir();
after(async () => {
  await stopAllProxies();
  tmp.cleanup();
});

// Envoy's own quick-start bootstrap (configs/envoy-demo.yaml), as published.
const ENVOY_DEMO = `static_resources:
  listeners:
  - name: listener_0
    address:
      socket_address:
        address: 0.0.0.0
        port_value: 10000
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
          codec_type: AUTO
          stat_prefix: ingress_http
          route_config:
            name: proxy
            virtual_hosts:
            - name: app
              domains:
              - "*"
              routes:
              - match:
                  prefix: "/"
                route:
                  cluster: loopback
          http_filters:
          - name: envoy.filters.http.router

  - name: listener_1
    address:
      socket_address:
        protocol: TCP
        address: 127.0.0.1
        port_value: 10001
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
          codec_type: AUTO
          stat_prefix: loopback_http
          local_reply_config:
            mappers:
            - filter:
                header_filter:
                  header:
                    name: ":method"
                    string_match:
                      exact: "GET"
              body_format_override:
                text_format_source:
                  inline_string: |
                    <html>
                      <body>
                        <h1>Welcome to Envoy</h1>
                      </body>
                    </html>
                content_type: "text/html; charset=UTF-8"
          route_config:
            name: local_route
          http_filters:
          - name: envoy.filters.http.router

  clusters:
  - name: loopback
    type: STATIC
    lb_policy: ROUND_ROBIN
    load_assignment:
      cluster_name: loopback
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address:
                address: 127.0.0.1
                port_value: 10001
`;

describe('local_reply_config', () => {
  it("accepts Envoy's quick-start bootstrap (configs/envoy-demo.yaml)", async () => {
    const out = await runProxy(['--mode', 'validate', '-c', tmp.file('envoy-demo.yaml', ENVOY_DEMO)]);
    assert.equal(out.code, 0, out.stderr);
  });

  it('rewrites the proxy\'s own replies: the first matching mapper, then the body format', async () => {
    const filter = hcmFilter('local', [
      { match: { prefix: '/missing-cluster' }, route: { cluster: 'nowhere' } },
      { match: { prefix: '/direct' }, direct_response: { status: 200, body: { inline_string: 'direct' } } },
    ]) as any;
    filter.typed_config.route_config.validate_clusters = false;
    filter.typed_config.local_reply_config = {
      mappers: [
        {
          filter: { header_filter: { header: { name: ':method', string_match: { exact: 'GET' } } } },
          body_format_override: { text_format_source: { inline_string: '<h1>%RESPONSE_CODE% for %REQ(:PATH)%</h1>\n' }, content_type: 'text/html; charset=UTF-8' },
        },
        {
          filter: { status_code_filter: { comparison: { op: 'EQ', value: { default_value: 503, runtime_key: 'unused' } } } },
          headers_to_add: [{ header: { key: 'x-original-status', value: '%RESPONSE_CODE%' }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' }],
          status_code: 500,
          body: { inline_string: 'service down' },
        },
      ],
      body_format: { json_format: { status: '%RESPONSE_CODE%', message: '%LOCAL_REPLY_BODY%', path: '%REQ(:PATH)%' } },
    };
    const proxy = await startProxy(
      { admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } }, static_resources: { listeners: [{ name: 'local', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [filter] }] }] } },
      ['--concurrency', '1'],
    );
    const url = (path: string) => `http://127.0.0.1:${proxy.ports.get('local')}${path}`;

    const get = await httpRequest(url('/nothing-here'));
    assert.deepEqual([get.status, get.headers['content-type'], get.body], [404, 'text/html; charset=UTF-8', '<h1>404 for /nothing-here</h1>\n'], 'the first mapper: GET');

    const post = await httpRequest(url('/nothing-here'), { method: 'POST', body: '' });
    assert.deepEqual([post.status, post.headers['content-type'], JSON.parse(post.body)], [404, 'application/json', { status: 404, message: '', path: '/nothing-here' }], 'no mapper: the config\'s body format');

    const down = await httpRequest(url('/missing-cluster'), { method: 'POST', body: '' });
    assert.equal(down.status, 500, 'the second mapper rewrites 503 to 500');
    assert.equal(down.headers['x-original-status'], '503', 'headers are formatted with the original status');
    assert.deepEqual(JSON.parse(down.body), { status: 500, message: 'service down', path: '/missing-cluster' }, 'the body format sees the new status and the mapper\'s body');

    const direct = await httpRequest(url('/direct'), { method: 'POST', body: '' });
    assert.deepEqual([direct.status, JSON.parse(direct.body)], [200, { status: 200, message: 'direct', path: '/direct' }], 'a direct response is a local reply too');
    await proxy.stop();
  });

  it('refuses a mapper whose filter or format cannot work, naming it', async () => {
    const filter = hcmFilter('local', [{ match: { prefix: '/' }, direct_response: { status: 200 } }]) as any;
    filter.typed_config.local_reply_config = { mappers: [{ filter: { status_code_filter: { comparison: { op: 'EQ', value: { default_value: 404, runtime_key: 'k' } } } }, body_format_override: { text_format: '%NO_SUCH_COMMAND%' } }] };
    const config = { static_resources: { listeners: [{ name: 'local', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [filter] }] }] } };
    const out = await runProxy(['--mode', 'validate', '-c', tmp.file('bad-local-reply.json', JSON.stringify(config))]);
    assert.equal(out.code, 1);
    assert.match(out.stderr + out.stdout, /local_reply_config\.mappers\[0\]\.body_format_override: Not supported field in StreamInfo: NO_SUCH_COMMAND/);
  });
});
