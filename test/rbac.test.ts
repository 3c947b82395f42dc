import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HCM_TYPE, ROUTER_TYPE, staticCluster } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, statValue, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/** The RBAC filter (envoy.filters.http.rbac) as Envoy's: ALLOW and DENY policies, shadow rules, per-route rules. */

const tmp = tempDir();
let upstream: Upstream;
let proxy: RunningProxy;
const RBAC = 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC';
const PER_ROUTE = 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBACPerRoute';

function hcm(filterConfig: object, routes: object[]): object {
  return {
    name: 'envoy.filters.network.http_connection_manager',
    typed_config: {
      '@type': HCM_TYPE,
      stat_prefix: 'guarded',
      route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes }] },
      http_filters: [
        { name: 'envoy.filters.http.rbac', typed_config: { '@type': RBAC, ...filterConfig } },
        { name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } },
      ],
    },
  };
}

before(async () => {
  upstream = await startUpstream('A');
  const rules = {
    action: 'ALLOW',
    policies: {
      // Reads from anyone on loopback.
      readers: { permissions: [{ header: { name: ':method', string_match: { exact: 'GET' } } }], principals: [{ direct_remote_ip: { address_prefix: '127.0.0.0', prefix_len: 8 } }] },
      // Anything from a caller with the admin token, except under /internal.
      admins: {
        permissions: [{ and_rules: { rules: [{ any: true }, { not_rule: { url_path: { path: { prefix: '/internal' } } } }] } }],
        principals: [{ header: { name: 'x-token', string_match: { exact: 'admin' } } }],
      },
    },
  };
  const shadow = { action: 'DENY', policies: { 'no-debug': { permissions: [{ url_path: { path: { exact: '/debug' } } }], principals: [{ any: true }] } } };
  const routes = [
    // Open to all on this route: its own rules replace the filter's.
    { match: { prefix: '/public' }, route: { cluster: 'backend' }, typed_per_filter_config: { 'envoy.filters.http.rbac': { '@type': PER_ROUTE, rbac: { rules: { action: 'DENY', policies: { nobody: { permissions: [{ destination_port: 1 }], principals: [{ any: true }] } } } } } } },
    { match: { prefix: '/' }, route: { cluster: 'backend' } },
  ];
  proxy = await startProxy(
    {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: { listeners: [{ name: 'guarded', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [hcm({ rules, shadow_rules: shadow }, routes)] }] }], clusters: [staticCluster('backend', upstream.port)] },
    },
    ['--concurrency', '1'],
  );
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
  tmp.cleanup();
});

const send = (path: string, method = 'GET', headers: Record<string, string> = {}) => httpRequest(`http://127.0.0.1:${proxy.ports.get('guarded')}${path}`, { method, headers, body: method === 'POST' ? 'x' : undefined });
const stat = (name: string) => statValue(proxy, `http.guarded.rbac.${name}`);

describe('the RBAC filter', () => {
  it('allows what a policy allows: reads from loopback, writes with the admin token', async () => {
    assert.equal((await send('/data')).status, 200);
    assert.equal((await send('/data', 'POST', { 'x-token': 'admin' })).status, 200);
    assert.equal(await stat('allowed'), 2);
  });

  it('refuses what no policy allows with 403 "RBAC: access denied"', async () => {
    const write = await send('/data', 'POST');
    assert.deepEqual([write.status, write.body], [403, 'RBAC: access denied']);
    assert.equal((await send('/internal/x', 'POST', { 'x-token': 'admin' })).status, 403, 'not_rule excludes /internal');
    assert.equal(await stat('denied'), 2);
  });

  it('counts shadow rules without enforcing them', async () => {
    const denied = await stat('shadow_denied');
    assert.equal((await send('/debug')).status, 200, 'the shadow DENY is not enforced');
    assert.equal(await stat('shadow_denied'), denied + 1);
  });

  it('takes a route\'s own rules instead of the filter\'s', async () => {
    assert.equal((await send('/public', 'POST')).status, 200);
  });

  it('refuses what it cannot match by name: LOG, CEL conditions, metadata', async () => {
    const config = {
      static_resources: {
        listeners: [{ name: 'bad', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [hcm({ rules: { action: 'LOG', policies: { p: { permissions: [{ any: true }], principals: [{ metadata: { filter: 'f', path: [{ key: 'k' }], value: { string_match: { exact: 'v' } } } }] } } } }, [{ match: { prefix: '/' }, direct_response: { status: 200 } }])] }] }],
      },
    };
    const out = await runProxy(['--mode', 'validate', '-c', tmp.file('bad-rbac.json', JSON.stringify(config))]);
    assert.equal(out.code, 1);
    const text = out.stderr + out.stdout;
    assert.match(text, /rules\.action: LOG is not supported/);
    assert.match(text, /principals\[0\]\.metadata: field 'metadata' of envoy\.config\.rbac\.v3\.Principal is not supported by this proxy/);
  });
});
