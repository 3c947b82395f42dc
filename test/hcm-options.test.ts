import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { HCM_TYPE, staticCluster } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, stopAllProxies } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * The connection manager's protocol options as Envoy applies them, seen by real clients: what
 * an empty filter chain does, HTTP/2 settings and keepalive, HTTP/1 trailers, the scheme.
 */

const tmp = tempDir();
let upstream: Upstream | undefined;

after(async () => {
  await stopAllProxies();
  await upstream?.close();
  tmp.cleanup();
});

/** One listener whose connection manager is `hcm` (stat prefix and routes added). */
function bootstrap(name: string, hcm: Record<string, unknown>, routes: object[] = [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok' } } }]): Record<string, unknown> {
  return {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      listeners: [
        {
          name,
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: { '@type': HCM_TYPE, stat_prefix: name, route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes }] }, ...hcm } }] }],
        },
      ],
      clusters: [],
    },
  };
}

describe('an empty http_filters list', () => {
  it("loads as Envoy's does, with a warning, and answers nothing until the stream idle timeout (408)", async () => {
    const config = bootstrap('bare', { http_filters: [], stream_idle_timeout: '0.3s' });
    const validated = await runProxy(['--mode', 'validate', '-c', tmp.file('bare.json', JSON.stringify(config))]);
    assert.equal(validated.code, 0, validated.stderr);
    assert.match(validated.stderr, /typed_config\.http_filters is empty: no request on it is answered until stream_idle_timeout/);
    const proxy = await startProxy(config, ['--concurrency', '1']);
    const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get('bare')}/`);
    assert.deepEqual([r.status, r.body], [408, 'stream timeout']);
  });
});

describe('stream_idle_timeout', () => {
  it('answers 408 when a whole request waits on an upstream that says nothing (the stream is idle both ways)', async () => {
    upstream = await startUpstream('slow');
    const config = bootstrap('idle', { http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }], stream_idle_timeout: '0.3s' }, [
      { match: { prefix: '/' }, route: { cluster: 'slow', timeout: '0s' } },
    ]);
    (config.static_resources as { clusters: object[] }).clusters.push(staticCluster('slow', upstream.port));
    const proxy = await startProxy(config, ['--concurrency', '1']);
    const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get('idle')}/hold?key=never`);
    assert.deepEqual([r.status, r.body], [408, 'stream timeout']);
  });
});
