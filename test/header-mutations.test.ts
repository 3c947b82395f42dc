import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hcmFilter, staticCluster } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * request_/response_headers_to_add and _to_remove at the route, virtual host and route
 * configuration levels, in Envoy's order (most specific first, unless
 * most_specific_header_mutations_wins), with append_action and value substitutions.
 */

const tmp = tempDir();
let upstream: Upstream;
let proxy: RunningProxy;

const add = (key: string, value: string, append_action?: string) => ({ header: { key, value }, ...(append_action ? { append_action } : {}) });

function listener(name: string, mostSpecificWins: boolean): object {
  const filter = hcmFilter(name, []) as any;
  const rc = filter.typed_config.route_config;
  rc.most_specific_header_mutations_wins = mostSpecificWins;
  rc.request_headers_to_add = [add('x-level', 'config')];
  rc.response_headers_to_add = [add('x-who', 'config', 'OVERWRITE_IF_EXISTS_OR_ADD')];
  const vh = rc.virtual_hosts[0];
  vh.request_headers_to_add = [add('x-level', 'vhost')];
  vh.response_headers_to_add = [add('x-who', 'vhost', 'OVERWRITE_IF_EXISTS_OR_ADD')];
  const headers = {
    request_headers_to_add: [
      add('x-level', 'route'),
      add('x-client', '%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%'),
      add('x-percent', '100%%'),
      add('x-existing', 'proxy', 'ADD_IF_ABSENT'),
      add('x-absent', 'proxy', 'OVERWRITE_IF_EXISTS'),
    ],
    request_headers_to_remove: ['x-secret'],
    response_headers_to_add: [add('x-who', 'route', 'OVERWRITE_IF_EXISTS_OR_ADD'), add('x-status', '%RESPONSE_CODE%')],
    response_headers_to_remove: ['content-type'],
  };
  vh.routes = [
    { match: { prefix: '/direct' }, direct_response: { status: 202, body: { inline_string: 'direct' } }, ...headers },
    { match: { prefix: '/' }, route: { cluster: 'backend' }, ...headers },
  ];
  // add_user_agent on one of them: this proxy's cluster and node go upstream.
  if (name === 'default') filter.typed_config.add_user_agent = true;
  return { name, address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [filter] }] };
}

before(async () => {
  upstream = await startUpstream('A');
  proxy = await startProxy(
    {
      node: { id: 'edge-1', cluster: 'edge' },
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: { listeners: [listener('default', false), listener('specific', true)], clusters: [staticCluster('backend', upstream.port)] },
    },
    ['--concurrency', '1'],
  );
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
  tmp.cleanup();
});

const echo = async (name: string) => {
  const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get(name)}/echo`, { headers: { 'x-secret': 'hush', 'x-existing': 'client' } });
  return { response: r, seen: JSON.parse(r.body).headers as Record<string, string> };
};

describe('header mutations of routes, virtual hosts and route configurations', () => {
  it('applies the most specific level first by default: appended values in that order, the configuration\'s overwrite last', async () => {
    const { response, seen } = await echo('default');
    assert.equal(seen['x-level'], 'route, vhost, config');
    assert.equal(seen['x-client'], '127.0.0.1');
    assert.equal(seen['x-percent'], '100%');
    assert.equal(seen['x-existing'], 'client', 'ADD_IF_ABSENT leaves what the client sent');
    assert.equal(seen['x-absent'], undefined, 'OVERWRITE_IF_EXISTS adds nothing that is absent');
    assert.equal(seen['x-secret'], undefined, 'removed before it goes upstream');
    assert.equal(response.headers['x-who'], 'config');
    assert.equal(response.headers['x-status'], '200', 'response values see the response');
    assert.equal(response.headers['content-type'], undefined, 'removed from the response');
  });

  it('with most_specific_header_mutations_wins, the route\'s come last and win', async () => {
    const { response, seen } = await echo('specific');
    assert.equal(seen['x-level'], 'config, vhost, route');
    assert.equal(response.headers['x-who'], 'route');
  });

  it('a direct response carries the route\'s response headers too', async () => {
    const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get('default')}/direct`);
    assert.deepEqual([r.status, r.body, r.headers['x-who'], r.headers['x-status']], [202, 'direct', 'config', '202']);
  });

  it('refuses mutations of pseudo-headers and host, naming the field', async () => {
    const bad = listener('bad', false) as any;
    bad.filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].request_headers_to_add.push(add('host', 'evil'));
    bad.filter_chains[0].filters[0].typed_config.route_config.response_headers_to_remove = [':status'];
    const config = { static_resources: { listeners: [bad], clusters: [staticCluster('backend', 1)] } };
    const out = await runProxy(['--mode', 'validate', '-c', tmp.file('bad-headers.json', JSON.stringify(config))]);
    assert.equal(out.code, 1);
    const text = out.stderr + out.stdout;
    assert.match(text, /virtual_hosts\[0\]\.request_headers_to_add\[1\]\.header\.key: ':-prefixed' or host headers may not be modified \('host'\)/);
    assert.match(text, /route_config\.response_headers_to_remove\[0\]: ':-prefixed' or host headers may not be removed \(':status'\)/);
  });
});

describe('add_user_agent', () => {
  it('sends this proxy\'s service cluster and node upstream, and a user-agent when the client sent none', async () => {
    const { seen } = await echo('default');
    assert.deepEqual([seen['x-envoy-downstream-service-cluster'], seen['x-envoy-downstream-service-node'], seen['user-agent']], ['edge', 'edge-1', 'edge']);
    const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get('default')}/echo`, { headers: { 'user-agent': 'curl/8' } });
    assert.equal(JSON.parse(r.body).headers['user-agent'], 'curl/8', 'the client\'s own is kept');
    const other = await echo('specific');
    assert.equal(other.seen['x-envoy-downstream-service-cluster'], undefined, 'only where it is set');
  });
});
